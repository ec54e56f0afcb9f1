"""DeepSpeed refusing its config where the engine and ZeRO build themselves from it.

DeepSpeed refusing its config where the engine and ZeRO build themselves from it: precision and data types
(``deepspeed/runtime/config.py``, ``engine.py``), ZeRO stages 1-3 and their offload and reduce-scatter options
(``runtime/zero/stage_1_and_2.py``, ``stage3.py``, ``zenflow/``), the compressed-communication optimizers
(``runtime/fp16/onebit/``), elasticity, DeepCompile, gradient accumulation outside the engine, the engine's
offload_states API, checkpoint options, AutoEP/AutoTP and Ulysses sequence parallelism
(``runtime/sequence_parallel/ulysses_sp.py``).

Each message names the setting it refuses and why, and nothing but that setting prints it: a certain
``deepspeed_config_mismatch`` (kinds/deepspeed.py reads ``REFUSALS``; ``TEMPLATES`` cites the catalog), but for
"loss must be a scalar tensor", which a loss without a graph prints too (likely there).
"""

from __future__ import annotations

FAMILY = "a library refusing its settings"

_GRAD_ACCUM_DTYPE = (
    'DeepSpeed accumulates gradients in the model\'s precision here: remove "data_types": {"grad_accum_dtype": ...} '
    'from the config, or set it to the model\'s dtype ("fp16" / "bf16" / "fp32" as the "fp16" / "bf16" sections '
    "enable)."
)
_REDUCE_SCATTER = (
    'ZeRO\'s reduce-scatter path takes only some settings: set "reduce_scatter": false in "zero_optimization" to '
    "keep the one the message names, or remove that setting (the message names it: gradient_predivide_factor, "
    'prescale_gradients, communication_data_type other than "fp16"/"bf16"/"fp32") to keep reduce-scatter.'
)
_ONEBIT_SPARSE = (
    "The 1-bit / 0/1 optimizers compress dense gradients only: build the embeddings with sparse=False "
    "(nn.Embedding(..., sparse=False)), or choose Adam / AdamW in the DeepSpeed config."
)
_MANAGED_ACCUMULATION = (
    "Gradient accumulation owned by the caller (managed_gradient_accumulation=False: the loop calls step() at its own "
    "boundary) works under ZeRO stage 0-2 without pipeline parallelism, DeepCompile or Apex AMP: leave "
    'managed_gradient_accumulation at its default (true) and set "gradient_accumulation_steps" in the config, or '
    "remove the option the message names."
)
_OFFLOAD_STATES = (
    "engine.offload_states() / reload_states() move ZeRO-3's states: use them with ZeRO stage 3, an optimizer "
    "(DeepSpeed's FusedAdam) and no offload_optimizer / offload_param in the config, and name the device "
    '(device="cpu"; NVMe is not supported there).'
)
_ULYSSES_DIVISIBLE = (
    "Ulysses sequence parallelism splits the attention heads and each sequence over sequence_parallel_size ranks: "
    "choose a sequence_parallel_size that divides the model's attention and key-value head counts, and pad each "
    "batch's sequence length to a multiple of it (the DataLoader's collator: pad_to_multiple_of=sp_size)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    # runtime/config.py _do_error_check: bf16's master-weight options live in ZeRO's optimizer
    (
        "Bf16_master_weights_and_grads is only supported with ZeRO Stage",
        'Enable ZeRO ("zero_optimization": {"stage": 1}, 2 or 3) to keep bf16 master weights and gradients, or '
        'remove "bf16_master_weights_and_grads" from the "bf16" section.',
    ),
    (
        "bf16_optimizer_states is only supported with ZeRO Stage",
        'Enable ZeRO ("zero_optimization": {"stage": 1}, 2 or 3) to keep optimizer states in bf16, or remove '
        '"bf16_optimizer_states" from the "bf16" section.',
    ),
    (
        "bf16_optimizer_states requires bf16_master_weights_and_grad",
        'Set "bf16_master_weights_and_grads": true beside "bf16_optimizer_states": true in the "bf16" section, or '
        "remove bf16_optimizer_states.",
    ),
    # config.py: the gradient all-reduce op "sum" (instead of the mean) where ZeRO-3, ZenFlow or DeepCompile reduce
    (
        "'sum' is not supported with",
        'Remove "gradient_allreduce_op": "sum" from the config (the default averages gradients), or turn off what '
        "the message names (ZeRO stage 3, ZenFlow, DeepCompile).",
    ),
    (
        "Invalid communication_data_type. Supported data types",
        'Set "communication_data_type" to "fp16", "bf16" or "fp32" (or remove it to communicate in the training '
        "precision).",
    ),
    # config.py (0.19+): data_types.param_dtype against the fp16 / bf16 sections
    (
        "conflicts with the enabled precision mode",
        'Make data_types.param_dtype and the precision sections agree: enable the matching "fp16" / "bf16" section '
        '("enabled": true), or remove "param_dtype" from "data_types".',
    ),
    # engine.py _configure_optimizer / _do_sanity_check: the gradient accumulation dtype against the model's
    ("Model data type and gradient accumulation data type must be equal to use", _GRAD_ACCUM_DTYPE),
    ("unsupported mix of model", _GRAD_ACCUM_DTYPE),
    (
        "MoQ (quantize in optimization step) weight quantization is only supported for FP16",
        'Quantize-during-training (MoQ, "quantize_training") works with fp16 only: enable "fp16", or set '
        '"quantize_training": {"enabled": false}.',
    ),
    # runtime/pipe/engine.py: pipeline parallelism with bf16
    (
        "PP+BF16 only work for ZeRO Stage 1",
        'Pipeline parallelism with bf16 runs under ZeRO stage 1: set "zero_optimization": {"stage": 1} (Megatron-'
        "DeepSpeed: --zero-stage 1), or train in fp16.",
    ),
    # zero/stage_1_and_2.py, stage3.py: options of the offloaded optimizer
    (
        "Offload with DeepSpeedCPUAdam",
        "Master weights in fp16/bf16 inside ZeRO need the optimizer offloaded to the CPU with DeepSpeed's CPU Adam: "
        '"offload_optimizer": {"device": "cpu"} and "optimizer": {"type": "AdamW"} in the config (or '
        "deepspeed.ops.adam.DeepSpeedCPUAdam), or remove the master-weights option.",
    ),
    (
        "Hybrid Optimizer Only Supports DeepSpeedCPUAdam",
        'A partial optimizer offload ("offload_optimizer": {"ratio": r} below 1) runs with DeepSpeed\'s CPU Adam '
        'only: name "AdamW" as the optimizer in the config (not a client optimizer), or remove "ratio".',
    ),
    ("Offloading is supported only for DeepSpeed FusedAdam", _OFFLOAD_STATES),
    ("Moving states across devices is not supported", _OFFLOAD_STATES),
    ("is supported only for ZeRO stage 3.", _OFFLOAD_STATES),
    ("No device specified for offloading states", _OFFLOAD_STATES),
    ("NVMe offload is not supported for offloading states", _OFFLOAD_STATES),
    # zero/stage_1_and_2.py, stage3.py: reduce-scatter against the settings it cannot honour
    ("communication_data_type with reduce scatter enabled", _REDUCE_SCATTER),
    ("gradient_predivide_factor != 1.0 is not yet supported with", _REDUCE_SCATTER),
    ("pre-scale gradients is not yet supported with", _REDUCE_SCATTER),
    (
        "when enable all_to_all_reduce, reduce_scatter should also be enabled",
        'ZeRO++\'s all-to-all gradient reduction ("zero_quantized_gradients") needs "reduce_scatter": true in '
        '"zero_optimization".',
    ),
    (
        "Muon and reduce scatter cannot be used together",
        'The Muon optimizer needs whole gradients: set "reduce_scatter": false in "zero_optimization", or choose '
        "another optimizer.",
    ),
    (
        "Muon with reduce scatter does not support optimizer offload",
        'Set "reduce_scatter": false in "zero_optimization", or remove "offload_optimizer", to use Muon.',
    ),
    (
        "Zenflow must be used with cpu offload",
        'ZenFlow runs the optimizer on the CPU: add "offload_optimizer": {"device": "cpu"} to "zero_optimization", '
        'or remove the "zenflow" section.',
    ),
    (
        "fp16_master_and_gradients requires optimizer to support keeping fp16 master",
        'Keeping fp16 master weights needs DeepSpeed\'s CPU Adam with the optimizer offloaded ("offload_optimizer": '
        '{"device": "cpu"}, "optimizer": {"type": "AdamW"}), or remove "fp16_master_weights_and_grads".',
    ),
    # zero/stage3.py (older releases): checkpoint options ZeRO-3 did not have yet
    (
        "does not yet support elastic checkpointing",
        'Set "elastic_checkpoint": false in "zero_optimization" (ZeRO-3 saves per-rank partitions; convert them with '
        "DeepSpeed's universal checkpoint to change the world size).",
    ),
    (
        "does not yet support checkpointing with NVMe offloading",
        "This DeepSpeed cannot save a checkpoint while parameters or optimizer states are offloaded to NVMe: offload "
        'to "cpu" instead, or upgrade DeepSpeed (newer releases save NVMe-offloaded states).',
    ),
    # runtime/fp16/onebit/adam.py, zoadam.py, lamb.py: what the compressed-communication optimizers refuse
    (
        "does not support the AMSGrad variant",
        'Set "amsgrad": false in the optimizer\'s params (or drop it), or choose Adam / AdamW, which take it.',
    ),
    ("1-bit Adam does not support sparse gradients", _ONEBIT_SPARSE),
    ("0/1 Adam does not support sparse gradients", _ONEBIT_SPARSE),
    ("1-bit Lamb does not support sparse gradients", _ONEBIT_SPARSE),
    # engine.py: gradient accumulation owned by the caller, and the engine's own no_sync variants
    ("managed_gradient_accumulation=False is not supported with", _MANAGED_ACCUMULATION),
    ("managed_gradient_accumulation=False supports ZeRO overlap_comm only", _MANAGED_ACCUMULATION),
    (
        "coalesce_grad_reduction requires ZeRO stage",
        "engine.coalesce_grad_reduction() batches ZeRO's gradient reduction: use it with ZeRO stage 1-3, or drop it.",
    ),
    (
        "coalesce_grad_reduction is not supported under pipeline parallelism",
        "A pipeline engine reduces gradients in train_batch(): drop engine.coalesce_grad_reduction() from the loop.",
    ),
    (
        "coalesce_grad_reduction cannot be nested inside another no_sync context",
        "Use engine.coalesce_grad_reduction() or engine.no_sync() around the micro-batches, not one inside the "
        "other.",
    ),
    (
        "no_sync context manager reentry is unsupported",
        "engine.no_sync() was entered inside another engine.no_sync(): keep one `with engine.no_sync():` around the "
        "accumulation micro-batches (accelerate's accumulate() / no_sync() also enter it).",
    ),
    # engine.py: DeepCompile's stages
    (
        "Currently DeepCompile supports stage 1 or 3 only",
        'DeepCompile compiles ZeRO stage 1 or 3: set "zero_optimization": {"stage": 1} or 3, or turn off '
        '"compile": {"deepcompile": false}.',
    ),
    (
        "Currently DeepCompile is not supported without an optimizer",
        'DeepCompile needs the engine to own an optimizer: pass optimizer= or define "optimizer" in the config, or '
        'turn off "compile": {"deepcompile": false}.',
    ),
    # config.py / elasticity: elastic training's own values
    (
        "Elasticity is not currently supported with",
        'Elastic training works with data parallelism only: remove the "elasticity" section (or "enabled": false) '
        "when the run uses model or pipeline parallelism.",
    ),
    (
        "Model-Parallel size cannot be less than 1",
        'Set "model_parallel_size" in the "elasticity" section to 1 or more.',
    ),
    (
        "NUmber of GPUs per node cannot be less than 1",
        'Set "num_gpus_per_node" in the "elasticity" section to 1 or more (the GPUs each node has).',
    ),
    # config.py: the "checkpoint" section
    (
        "Checkpoint config contains invalid tag_validation value",
        'Set "checkpoint": {"tag_validation": "Warn"} (one of "Ignore", "Warn", "Fail").',
    ),
    (
        "checkpoint::parallel_write::pipeline_stage value of",
        'Set "checkpoint": {"parallel_write": {"pipeline_stage": true}} (or false): a JSON boolean, not a string.',
    ),
    (
        "client_state contains reserved checkpoint key",
        "engine.save_checkpoint(client_state={...}) uses a key DeepSpeed writes itself: rename that key of "
        "client_state (the message names it).",
    ),
    (
        "save_dir must be a non-empty string",
        "engine.save_checkpoint(save_dir) needs the folder as a path string: pass the output folder "
        "(args.output_dir, not None or an empty string).",
    ),
    # engine.py backward(): a loss that is not a scalar
    (
        "loss must be a scalar tensor",
        "engine.backward(loss) takes the scalar loss: reduce it first (loss = loss.mean(), or the sum), and make sure "
        "it comes from the engine's forward with gradients enabled (not under torch.no_grad()).",
    ),
    (
        "engine.scale() is not compatible with AMP",
        "With Apex AMP in the DeepSpeed config call engine.backward(loss), not engine.scale(loss).backward(); or "
        'replace "amp" with DeepSpeed\'s own "fp16" / "bf16".',
    ),
    # engine.py: the legacy ZeRO-1 implementation a config still asks for
    (
        "The deprecated version of ZeRO Stage 1 is not supported in deepspeed",
        'Remove "legacy_stage1": true from "zero_optimization" (the current ZeRO-1 replaces it), or install '
        "DeepSpeed < 0.5.9 for the old one.",
    ),
    # engine.py: tensor-parallel sizes given twice
    (
        "does not match tensor_parallel.autotp_size",
        'Give the tensor-parallel size once: "tensor_parallel": {"autotp_size": N} (drop tp.tp_size, or make both '
        "the same).",
    ),
    (
        "AutoEP with ZeRO Stage 3 does not support",
        "AutoEP's expert parallelism under ZeRO-3 runs without the feature the message names (AutoTP, sequence "
        "parallelism, quantized gradients, MiCS, hpZ): turn that off, or use ZeRO stage 1/2 with AutoEP.",
    ),
    # runtime/lr_schedules.py (0.19.5+): the LRRangeTest / OneCycle params checked as the scheduler is built
    (
        "lr_range_test_step_size must be a positive integer",
        'Set "lr_range_test_step_size" in the LRRangeTest scheduler\'s params to a positive integer (steps per LR '
        'increase), not 0, a float or an unfilled "auto".',
    ),
    (
        "cycle_first_step_size must be positive",
        'Set "cycle_first_step_size" in the OneCycle scheduler\'s params to a positive number of steps (the rising '
        "half of the cycle).",
    ),
    (
        "cycle_second_step_size must be non-negative",
        'Set "cycle_second_step_size" in the OneCycle scheduler\'s params to 0 or more, or leave it out (it then '
        "equals cycle_first_step_size).",
    ),
    # runtime/sequence_parallel/ulysses_sp.py: Ulysses' sizes and inputs
    ("is not divisible by SP size", _ULYSSES_DIVISIBLE),
    ("isn't divisible by sp-size", _ULYSSES_DIVISIBLE),
    (
        "Ulysses SP requires",
        "Ulysses sequence parallelism needs position_ids in every batch (it rebuilds the causal order from them "
        "after sharding): have the collator return position_ids (e.g. DataCollatorWithFlattening, or "
        "torch.arange(seq_len) per sample), and pass them to the model's forward.",
    ),
    (
        "isn't currently supported by Ulysses sequence parallelism",
        "Ulysses needs an attention implementation that takes no 4-D mask: load the model with "
        "attn_implementation='flash_attention_2' or 'sdpa' and set the same core_attn_implementation in "
        "UlyssesSPAttentionHF.register_with_transformers(...).",
    ),
    (
        "does not match model config attn_implementation",
        "Give UlyssesSPAttentionHF.register_with_transformers(core_attn_implementation=...) the attn_implementation "
        "the model was loaded with (from_pretrained(..., attn_implementation=...)): both the same.",
    ),
    # runtime/engine.py: the consolidated 16-bit state dict, which only gathers weights ZeRO-3 (or AutoTP) split
    (
        "this function requires ZeRO-3 mode",
        "engine._zero3_consolidated_16bit_state_dict() gathers ZeRO-3's partitioned weights; under ZeRO stage 0-2 "
        "every rank holds the whole model: take engine.module.state_dict() there, or call "
        "engine.save_16bit_model(dir) (and the Trainer's / accelerate's save_model), which picks the right path "
        "for each stage.",
    ),
    (
        "consolidated_16bit_state_dict is only applicable to cases where weights are partitioned",
        "The consolidated 16-bit state dict exists only where weights are partitioned (ZeRO stage 3 or AutoTP): "
        "under ZeRO stage 0-2 take engine.module.state_dict(), or save with engine.save_16bit_model(dir), which "
        "works for every stage.",
    ),
    # runtime/engine.py _load_zero_checkpoint: serial checkpoint loading ("pipeline_loading_checkpoint")
    (
        "Only stage3 support for pipeline checkpoint loading",
        'Remove "pipeline_loading_checkpoint": true from "zero_optimization" (it loads ZeRO-3 partitions rank by '
        'rank), or train with "stage": 3.',
    ),
    # runtime/zero/stage3.py state_dict / load: ZeRO-3 dropped elastic checkpoints. runtime/zero/config.py's warning of
    # the same setting ("... deprecated and no longer supported ...") is printed at start-up by runs that go on, and
    # save nothing elastic until a checkpoint is written: beside a failure of another kind it is not the cause
    (
        "ZeRO-3 elastic checkpointing is deprecated and unsupported",
        'Set "elastic_checkpoint": false in "zero_optimization" (ZeRO-3 saves per-rank partitions; to load them on '
        "another number of GPUs, convert the checkpoint with python -m deepspeed.checkpoint.ds_to_universal and "
        'load it with "checkpoint": {"load_universal": true}).',
    ),
    # runtime/pipe/module.py _find_layer_type: partition_method="type:<regex>" matched no layer's class name
    (
        "found no valid layers to partition",
        'PipelineModule(partition_method="type:<name>") balances the stages on the layers whose class name matches '
        "<name> (a regular expression, case-insensitive): name a class that is in the layers list (e.g. "
        '"type:TransformerLayer"), or use partition_method="parameters" / "uniform".',
    ),
    # runtime/data_pipeline/curriculum_scheduler.py: a key the curriculum_learning section must have
    (
        "Curriculum learning requires the config '",
        'Add the key the message names to the "curriculum_learning" section of the DeepSpeed config '
        "(min_difficulty, max_difficulty, schedule_type, and schedule_config for the schedule chosen).",
    ),
    (
        "schedule requires the schedule_config '",
        'Add the key the message names to "curriculum_learning": {"schedule_config": {...}} (fixed_linear: '
        "total_curriculum_step, difficulty_step; fixed_root: those and root_degree; fixed_discrete: difficulty, "
        "max_step).",
    ),
)

TEMPLATES: tuple[str, ...] = (
    "deepspeed:bf16-master-weights-and-grads-is",
    "deepspeed:bf16-optimizer-states-is-only-supported",
    "deepspeed:bf16-optimizer-states-requires-bf16-master",
    "deepspeed:bf16-optimizer-states-requires-bf16-master-2",
    "deepspeed:sum-is-not-supported-with-zero",
    "deepspeed:sum-is-not-supported-with-zenflow",
    "deepspeed:sum-is-not-supported-with-deepcompile",
    "deepspeed:invalid-communication-data-type-supported-data",
    "deepspeed:invalid-communication-data-type-supported-data-2",
    "deepspeed:data-types-param-dtype-conflicts-with",
    "deepspeed:model-data-type-and-gradient-accumulation",
    "deepspeed:model-data-type-and-gradient-accumulation-2",
    "deepspeed:unsupported-mix-of-model-dtype-and",
    "deepspeed:unsupported-mix-of-model-dtype-and-2",
    "deepspeed:moq-quantize-in-optimization-step-weight",
    "deepspeed:pp-bf16-only-work-for-zero",
    "deepspeed:master-weights-feature-requires-offload-with",
    "deepspeed:master-weights-feature-requires-zero-offload",
    "deepspeed:hybrid-optimizer-only-supports-deepspeedcpuadam",
    "deepspeed:offloading-is-supported-only-for-deepspeed",
    "deepspeed:moving-states-across-devices-is-not",
    "deepspeed:moving-states-across-devices-is-not-2",
    "deepspeed:moving-states-across-devices-is-not-3",
    "deepspeed:moving-buffers-across-devices-is-supported",
    "deepspeed:moving-buffers-back-is-supported-only",
    "deepspeed:no-device-specified-for-offloading-states",
    "deepspeed:nvme-offload-is-not-supported-for",
    "deepspeed:supports-communication-data-type-with-reduce",
    "deepspeed:zero-supports-communication-data-type-with",
    "deepspeed:gradient-predivide-factor-is-not-yet",
    "deepspeed:gradient-predivide-factor-is-not-yet-2",
    "deepspeed:gradient-predivide-factor-is-not-yet-3",
    "deepspeed:pre-scale-gradients-is-not-yet",
    "deepspeed:pre-scale-gradients-is-not-yet-2",
    "deepspeed:pre-scale-gradients-is-not-yet-3",
    "deepspeed:when-enable-all-to-all-reduce",
    "deepspeed:muon-and-reduce-scatter-cannot-be",
    "deepspeed:muon-with-reduce-scatter-does-not",
    "deepspeed:zenflow-must-be-used-with-cpu",
    "deepspeed:fp16-master-and-gradients-requires-optimizer",
    "deepspeed:zero-does-not-yet-support-elastic",
    "deepspeed:zero-does-not-yet-support-checkpointing",
    "deepspeed:bit-adam-does-not-support-the",
    "deepspeed:bit-lamb-does-not-support-the",
    "deepspeed:adam-does-not-support-the-amsgrad",
    "deepspeed:bit-adam-does-not-support-sparse",
    "deepspeed:bit-lamb-does-not-support-sparse",
    "deepspeed:adam-does-not-support-sparse-gradients",
    "deepspeed:managed-gradient-accumulation-false-is-not",
    "deepspeed:managed-gradient-accumulation-false-is-not-2",
    "deepspeed:managed-gradient-accumulation-false-is-not-3",
    "deepspeed:managed-gradient-accumulation-false-supports-zero",
    "deepspeed:coalesce-grad-reduction-requires-zero-stage",
    "deepspeed:coalesce-grad-reduction-is-not-supported-2",
    "deepspeed:coalesce-grad-reduction-cannot-be-nested",
    "deepspeed:no-sync-context-manager-reentry-is",
    "deepspeed:currently-deepcompile-supports-stage-or-only",
    "deepspeed:currently-deepcompile-is-not-supported-without",
    "deepspeed:elasticity-is-not-currently-supported-with",
    "deepspeed:elasticity-is-not-currently-supported-with-2",
    "deepspeed:model-parallel-size-cannot-be-less",
    "deepspeed:number-of-gpus-per-node-cannot",
    "deepspeed:checkpoint-config-contains-invalid-tag-validation",
    "deepspeed:checkpoint-parallel-write-pipeline-stage-value",
    "deepspeed:client-state-contains-reserved-checkpoint-key",
    "deepspeed:client-state-contains-reserved-checkpoint-keys",
    "deepspeed:save-dir-must-be-non-empty",
    "deepspeed:loss-must-be-scalar-tensor-with",
    "deepspeed:loss-must-be-scalar-tensor-if",
    "deepspeed:engine-scale-is-not-compatible-with",
    "deepspeed:the-deprecated-version-of-zero-stage",
    "deepspeed:tensor-parallel-tp-tp-size-does",
    "deepspeed:autoep-with-zero-stage-does-not",
    "deepspeed:autoep-with-zero-stage-does-not-2",
    "deepspeed:autoep-with-zero-stage-does-not-3",
    "deepspeed:autoep-with-zero-stage-does-not-4",
    "deepspeed:autoep-with-zero-stage-does-not-5",
    "deepspeed:lr-range-test-step-size-must",
    "deepspeed:cycle-first-step-size-must-be",
    "deepspeed:cycle-second-step-size-must-be",
    "deepspeed:attention-head-count-is-not-divisible",
    "deepspeed:kv-attention-head-count-is-not",
    "deepspeed:batch-seqlen-isn-divisible-by-sp",
    "deepspeed:sub-step-id-batch-seqlen-isn",
    "deepspeed:ulysses-sp-requires-position-ids-in",
    "deepspeed:ulysses-sp-requires-position-ids-in-2",
    "deepspeed:attn-implementation-isn-currently-supported-by",
    "deepspeed:attn-implementation-isn-currently-supported-by-2",
    "deepspeed:core-attn-implementation-does-not-match",
    "deepspeed:this-function-requires-zero-mode",
    "deepspeed:consolidated-bit-state-dict-is-only",
    "deepspeed:only-stage3-support-for-pipeline-checkpoint",
    "deepspeed:zero-elastic-checkpointing-is-deprecated-and-2",
    "deepspeed:partitioning-found-no-valid-layers-to",
    "deepspeed:curriculum-learning-requires-the-config",
    "deepspeed:curriculum-learning-with-fixed-discrete-schedule",
    "deepspeed:curriculum-learning-with-fixed-root-schedule",
    "deepspeed:curriculum-learning-with-fixed-linear-schedule",
)
