"""DeepSpeed refusing its config where the engine and ZeRO build themselves from it.

DeepSpeed refusing its config where the engine and ZeRO build themselves from it: precision and data types
(``deepspeed/runtime/config.py``, ``engine.py``), ZeRO stages 1-3 and their offload and reduce-scatter options
(``runtime/zero/stage_1_and_2.py``, ``stage3.py``, ``zenflow/``), the compressed-communication optimizers
(``runtime/fp16/onebit/``), elasticity, DeepCompile, gradient accumulation outside the engine, the engine's
offload_states API, checkpoint options, AutoEP/AutoTP and Ulysses sequence parallelism
(``runtime/sequence_parallel/ulysses_sp.py``, ``parallel_state_sp.py``, ``runtime/tensor_parallel/init_utils.py``),
the NVMe swap buffers (``runtime/swap_tensor/``), MiCS, ZeRO-3's leaf modules (``utils/z3_leaf_module.py``), where
``deepspeed.initialize`` takes its config from (``deepspeed/__init__.py``) and the accelerator DS_ACCELERATOR names
(``accelerator/real_accelerator.py``); and, beyond the engine, DeepSpeed's CPU optimizers given parameters that are not
in host memory (``ops/adam/cpu_adam.py``, ``ops/adagrad/``, ``ops/lion/``), an MoE layer whose experts do not split
over its expert-parallel size (``moe/layer.py``) and AutoTP refusing a model its injection kernels cover
(``module_inject/auto_tp.py``).

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

_SP_WORLD = (
    "The sequence-parallel groups split the processes into groups of sequence_parallel_size: choose a "
    "sequence_parallel_size that divides the number of processes (and is at most that number), or start a "
    "multiple of it (deepspeed --num_gpus / torchrun --nproc_per_node times the nodes)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    # ops/adam/cpu_adam.py, ops/adagrad/cpu_adagrad.py, ops/lion/cpu_lion.py step(): DeepSpeed's CPU optimizers step
    # parameters in host memory only, which ZeRO's optimizer offload gives them
    (
        "and must be 'cpu', make sure you enabled 'offload_optimizer'",
        "DeepSpeedCPUAdam (CPUAdagrad, CPULion) updates parameters that live in CPU memory, which only ZeRO's "
        'optimizer offload gives it: enable it in the config ("zero_optimization": {"stage": 2 or 3, '
        '"offload_optimizer": {"device": "cpu"}}), or, to keep the optimizer on the GPU, use FusedAdam or '
        "torch.optim.AdamW (an optimizer block in the config without offload, or the script's / framework's "
        "option that picks the CPU optimizer: an --offload flag, Lightning's DeepSpeedStrategy(offload_optimizer="
        "...)) so the two agree.",
    ),
    # moe/layer.py MoE.__init__: each expert-parallel rank holds num_experts / ep_size experts
    (
        "should be divisible by expert parallel size",
        "Each expert-parallel group splits the layer's experts evenly: pick ep_size (deepspeed.moe.layer.MoE(..., "
        "ep_size=...)) that divides num_experts (8 experts: ep_size 1, 2, 4 or 8), and a world size that ep_size "
        "divides.",
    ),
    # module_inject/auto_tp.py: AutoTP cannot split a model DeepSpeed has an injection policy for
    (
        "AutoTP not supported for model. Please use kernel injection since container policy for model exists",
        "DeepSpeed's automatic tensor parallelism does not split this architecture, but its inference kernels do: "
        "call deepspeed.init_inference(model, replace_with_kernel_inject=True, ...) (tensor_parallel={'tp_size': "
        "N}), or run on one GPU (tp_size 1) without kernel injection.",
    ),
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
    # runtime/base_optimizer.py backward() (0.18.9+): the same check of the loss, in the optimizer's words
    (
        "Optimizer's backward() only accepts a scalar tensor",
        "engine.backward(loss) takes the scalar loss: reduce it first (loss = loss.mean(), or the sum), and make sure "
        "it comes from the engine's forward with gradients enabled (not under torch.no_grad()).",
    ),
    # runtime/bf16_optimizer.py step()
    (
        "does not support closure.",
        "DeepSpeed's optimizer wrappers step without a closure: call engine.step() (optimizer.step() with no "
        "closure=). An optimizer that needs one (LBFGS) cannot run under them: use Adam / AdamW, or train that model "
        "without DeepSpeed.",
    ),
    # utils/tensor_fragment.py: the safe_get_* / safe_set_* helpers
    (
        "This API is only defined for ZeRO-3 partitioned parameters",
        "The safe_get_local_* / safe_set_local_* helpers read a ZeRO-3 rank's own partition: under ZeRO stage 0-2 use "
        "deepspeed.utils.safe_get_full_fp32_param / safe_get_full_grad / safe_get_full_optimizer_state (and the "
        'safe_set_full_* ones), which work in every stage, or run with "zero_optimization": {"stage": 3}.',
    ),
    (
        "Gradients are only available immediately after backward and before engine step",
        "DeepSpeed keeps a parameter's gradient only between engine.backward(loss) and engine.step(): call "
        "deepspeed.utils.safe_get_full_grad(param) (or safe_get_local_grad) there, not after step() or before the "
        "first backward.",
    ),
    # utils/z3_leaf_module.py set_z3_leaf_modules
    (
        "leaf_module_classes must be a list of types or names",
        "deepspeed.utils.set_z3_leaf_modules(model, [MixtralSparseMoeBlock]) takes a list of module classes (or their "
        "names as strings): wrap a single class in a list.",
    ),
    # runtime/pipe/engine.py load_module_state_dict
    (
        "custom_load_fn not supported w. pipeline parallelism",
        "A PipelineModule's engine loads each stage's layers itself: call engine.load_checkpoint(dir) without "
        "custom_load_fn=, and adapt the checkpoint's keys beforehand if they differ.",
    ),
    # runtime/torch_autocast.py (0.17.5): torch_autocast beside a model or communication in low precision
    (
        "All parameters must be float32 for torch autocast",
        'DeepSpeed 0.17\'s "torch_autocast" section runs a float32 model under torch.autocast: keep the model in float32 '
        '(no .half() / .bfloat16(), no torch_dtype=torch.bfloat16 at from_pretrained, "bf16" / "fp16" disabled), or '
        "upgrade DeepSpeed (0.18.3+ accepts low-precision parameters beside torch_autocast).",
    ),
    (
        "Communication data type must be float32 for torch autocast",
        'With DeepSpeed 0.17\'s "torch_autocast", gradients are communicated in float32: set "communication_data_type": '
        '"fp32" (or remove it) in the DeepSpeed config, or upgrade DeepSpeed.',
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
    (
        "is not a valid attn_implementation. The choices are",
        "UlyssesSPAttentionHF.register_with_transformers(core_attn_implementation=...) takes one of transformers' "
        "attention functions the message lists ('sdpa', 'flash_attention_2', 'flash_attention_3', 'flex_attention'; "
        "not 'eager') or a Hub kernel as 'org/repo': pass one of them, the same as the model's attn_implementation.",
    ),
    (
        "Either `seq_length_is_variable` needs to be `True` or `seq_length` needs to be set",
        "Tell register_with_transformers how long the sequences are: seq_length_is_variable=True (the default: "
        "lengths may change from batch to batch), or seq_length=<the fixed length of every batch>.",
    ),
    (
        "cannot continue with Ulysses Sequence parallelism",
        "UlyssesSPDataLoaderAdapter shards input_ids, position_ids and labels along the sequence together: the "
        "collator must return all three with one shape [batch, seq_len] (labels not shifted, padded with -100; "
        "position_ids for every token).",
    ),
    (
        "must match input_ids's shape",
        "UlyssesSPDataLoaderAdapter shards every tensor of the batch along dim 1 like input_ids: have the collator "
        "return only per-token tensors of input_ids' [batch, seq_len] shape (pad labels, attention_mask and "
        "position_ids to it), and keep any other tensor out of the batch dict.",
    ),
    # runtime/engine.py: AutoEP (expert parallelism built by the engine) beside other features, its checkpoints
    (
        "AutoEP with ZeRO Stage 3 only supports expert_parallel.expert_tensor_parallel_size=1",
        'Set "expert_parallel": {"expert_tensor_parallel_size": 1} (or leave it out) under ZeRO stage 3, or use ZeRO '
        "stage 1 / 2 for expert tensor parallelism.",
    ),
    (
        "AutoEP does not currently support tensor model parallelism from mpu",
        "AutoEP runs without an mpu's tensor parallelism: pass mpu=None (or one with tensor-parallel world size 1) to "
        'deepspeed.initialize, or drop "expert_parallel" (AutoEP) for this run.',
    ),
    (
        "AutoEP checkpointing requires a single EP group size",
        'Give every AutoEP MoE layer the same ep_size (one "expert_parallel": {"autoep_size": N} for the model) '
        "before saving.",
    ),
    (
        "AutoEP with ZeRO Stage 3 checkpointing does not support models that also contain native DeepSpeed MoE layers",
        "Under ZeRO-3 a checkpoint holds AutoEP layers or DeepSpeed's own deepspeed.moe.layer.MoE layers, not both: "
        "let AutoEP build every MoE layer (remove the hand-made MoE layers), or use ZeRO stage 1 / 2.",
    ),
    (
        "checkpointing does not support NVMe optimizer swapping yet",
        "AutoEP under ZeRO-3 restores expert state from the optimizer's shards, which NVMe swapping keeps on disk: "
        'offload the optimizer to the CPU ("offload_optimizer": {"device": "cpu"}) or not at all.',
    ),
    (
        "checkpointing does not support frozen expert parameters yet",
        "Under ZeRO-3 AutoEP saves expert weights through the optimizer's shards, which hold trainable parameters "
        "only: keep the expert parameters the message names trainable (requires_grad=True), or use ZeRO stage 1 / 2.",
    ),
    (
        "Folded AutoEP+AutoTP checkpoint requires a folded runtime",
        "This checkpoint was saved with AutoEP and AutoTP folded together: load it with the same "
        "tensor_parallel.autotp_size and expert_parallel.autoep_size as it was saved with (autotp_size above 1), or "
        "convert it with ds_to_universal and load the universal checkpoint.",
    ),
    (
        "Legacy checkpoint format (old_moe_load) is incompatible with AutoEP layers",
        "Convert the old MoE checkpoint first: python -m deepspeed.checkpoint.ds_to_universal --input_folder "
        '<ckpt>/global_step<N> --output_folder <out>, then load it with "checkpoint": {"load_universal": true} in '
        "the config.",
    ),
    (
        "The AutoTP compile pass cannot yet be combined with AutoSP or the ZeRO passes",
        "Enable the AutoTP compile pass alone: remove 'autosp' and the ZeRO passes from the DeepCompile passes "
        "(or compile without 'autotp').",
    ),
    # runtime/pipe/engine.py: the module's state of a pipeline, saved only through save_checkpoint
    (
        "PipelineEngine expects module_state_dict() to be called from save_checkpoint()",
        "A PipelineModule's engine writes its layers one file per layer while saving: call engine.save_checkpoint("
        "dir) instead of engine.module_state_dict(); to get the weights, load that checkpoint or gather them with "
        "the module's own state_dict() on each stage.",
    ),
    # runtime/config.py: elasticity, which computes the batch values itself; sparse attention's mode
    (
        "One or more batch related parameters were found in your",
        'With "elasticity" enabled DeepSpeed chooses the batch values itself: remove train_batch_size, '
        "train_micro_batch_size_per_gpu and gradient_accumulation_steps from the config (HF Trainer / accelerate "
        'fill them: disable elasticity there), or set "ignore_non_elastic_batch_info": true in the "elasticity" '
        "section to have them ignored.",
    ),
    (
        "Given sparsity mode, ",
        'The "sparse_attention" section\'s "mode" must be one of dense, fixed, variable, bigbird or bslongformer: '
        "fix its spelling, or remove the section.",
    ),
    # utils/groups.py (engine.py builds the local all-to-all group for ZeRO++'s quantized gradients, and the expert
    # groups from the config's use_data_before_expert_parallelism)
    (
        "num_gpus not equal to device per node, cannot initialize All-To-All",
        'ZeRO++\'s quantized gradients ("zero_quantized_gradients": true) exchange them over whole nodes: run a '
        "world size that is a multiple of the GPUs each node shows (torch.cuda.device_count(); 8 or 16 processes on "
        '8-GPU nodes, not 12), or set "zero_quantized_gradients": false.',
    ),
    # utils/groups.py _create_zero_param_parallel_group (0.10.0+, ZeRO++): the hpZ group of
    # "zero_hpz_partition_size" ranks is made once a process; the engine and stage3.py reuse it, but zero.Init
    # (runtime/zero/partition_parameters.py) makes it again unless it is handed zero_param_parallel_group, so a second
    # zero.Init in one process asserts: a second model built or from_pretrained under ZeRO-3 with hpZ (a reference
    # or teacher model, a vision encoder beside the LLM, nested contexts: deepspeedai/DeepSpeed#4901, #7066; still so
    # in 0.18, #8361 open)
    (
        "ZeRO parameter intra parallel group is already initialized",
        'ZeRO++\'s hierarchical partitioning ("zero_hpz_partition_size" above 1) makes its group once a process, and '
        "a second deepspeed.zero.Init (a second model built or loaded with from_pretrained under ZeRO-3: a reference "
        "or teacher model, a vision encoder beside the language model, nested zero.Init contexts) asks for it again. "
        'Set "zero_hpz_partition_size": 1 in "zero_optimization" (no hpZ), or build every model in one zero.Init '
        "context, or hand a later zero.Init the group that exists: deepspeed.zero.Init(config_dict_or_path=ds_config, "
        "zero_param_parallel_group=deepspeed.utils.groups._get_zero_param_intra_parallel_group()).",
    ),
    (
        "use_data_before_expert_parallel_ is not supported with mp_size > 1",
        'Set "use_data_before_expert_parallelism": false in the DeepSpeed config (the default) when the model is '
        "also tensor- or model-parallel (an mpu with a world size above 1), or run without model parallelism.",
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
    # runtime/swap_tensor/partitioned_param_swapper.py: ZeRO-3's NVMe parameter offload swaps each parameter through
    # pinned buffers of offload_param.buffer_size elements; a parameter larger than one buffer cannot be swapped
    (
        "than buffer size",
        'A parameter is larger than one NVMe swap buffer ("offload_param": {"buffer_size": N} elements, 1e8 by '
        "default; the message names both numbers, and an embedding of vocab_size x hidden_size is the usual "
        'one): set "buffer_size" in "offload_param" to at least that parameter\'s number of elements (e.g. '
        '"buffer_size": 2e8 or above), or offload the parameters to "cpu" instead of "nvme".',
    ),
    # runtime/swap_tensor/pipelined_optimizer_swapper.py: NVMe optimizer offload with pipelined reads/writes
    (
        "PipelinedOptimizerSwapper ran out of swap buffers",
        'Pipelined NVMe optimizer swapping needs more buffers than "offload_optimizer": {"buffer_count": N} gives '
        '(4 by default): raise "buffer_count" (e.g. 8), or set "pipeline_read": false and "pipeline_write": false '
        "in offload_optimizer.",
    ),
    # runtime/torch_autocast.py: the config's torch_autocast section beside another precision option (fp16 / bf16:
    # 0.17.2-0.18.2, accepted from 0.18.3 on (#7700): likely, kinds/deepspeed.py names the upgrade;
    # zero_quantized_weights: every release that has the section)
    (
        "Cannot enable both torch autocast and",
        'Use one precision mechanism: with "torch_autocast": {"enabled": true} remove the "fp16" / "bf16" '
        'sections (or "enabled": false) and "zero_quantized_weights" from "zero_optimization"; or turn '
        '"torch_autocast" off and keep them.',
    ),
    # runtime/base_optimizer.py, bf16_optimizer.py: master-weight and accumulation types the optimizer cannot hold
    (
        "fp16_master_weights_and_gradients and bf16_master_weights_and_gradients are mutually exclusive",
        'Keep one of "fp16_master_weights_and_gradients" (zero_optimization) and "bf16_master_weights_and_grads" '
        '(the "bf16" section), as the training precision is fp16 or bf16.',
    ),
    ("BF16Optimizer: Unsupported gradient accumulation data type", _GRAD_ACCUM_DTYPE),
    # runtime/zero/mics.py, mics_utils.py: MiCS shards within groups of mics_shard_size ranks
    (
        "dp group size is not dividable by dp_shard_size",
        'Set "mics_shard_size" in "zero_optimization" to a divisor of the data-parallel size (the number of '
        "processes divided by the pipeline-parallel size), e.g. the number of GPUs per node.",
    ),
    (
        "Local sharding has no support for CPU offloading",
        "MiCS with replicated shards (mics_shard_size below the data-parallel size) keeps gradients on the GPU: "
        'remove "offload_optimizer" / "offload_param", or set "mics_shard_size" to the data-parallel size (or '
        "use plain ZeRO-3, which offloads).",
    ),
    # runtime/sequence_parallel/parallel_state_sp.py (0.17.5+): the sequence-parallel groups built from the world
    ("is less than sequence_parallel_size", _SP_WORLD),
    ("is not divisible by sequence_parallel_size", _SP_WORLD),
    # runtime/tensor_parallel/init_utils.py (0.18.9+): AutoTP's settings given both in the config and to
    # deepspeed.tp_model_init(...), with different values
    (
        "and tp_model_init (",
        'Give the tensor-parallel settings in one place: the config\'s "tensor_parallel" section '
        "(autotp_size, tp.tp_size, dtype) or deepspeed.tp_model_init(model, tp_size=..., dtype=...), not both with "
        "different values (the message names the setting and both values).",
    ),
    (
        "Conflicting dtype: config uses",
        "The dtype given to deepspeed.tp_model_init(...) differs from the config's precision: pass the dtype the "
        'config trains in (torch.bfloat16 with "bf16" enabled, torch.float16 with "fp16"), or change the config.',
    ),
    (
        "tp_model_init provided tp_group; deepspeed.initialize must not receive mpu",
        "deepspeed.tp_model_init(..., tp_group=...) already set the tensor-parallel group: drop mpu= from "
        "deepspeed.initialize(...).",
    ),
    # engine.py: Muon needs every parameter marked for it
    (
        "use_muon attribute is NOT configured for some of the model parameters",
        "The Muon optimizer updates 2-D weights with Muon and the rest with Adam, as each parameter says: set "
        "p.use_muon = (p.ndim >= 2) for every parameter of the model before deepspeed.initialize (embeddings and "
        "the head usually False).",
    ),
    (
        "All Muon parameter groups must have the same momentum",
        "ZeRO-3's Muon keeps one momentum for all groups: give every param group of the Muon optimizer the same "
        "momentum (beta), or leave it out of the groups and set it once in the optimizer's params.",
    ),
    (
        "Muon and all2all process group cannot be used together",
        'ZeRO++\'s quantized gradients ("zero_quantized_gradients": true, which reduces through an all-to-all '
        "group) cannot run with Muon: turn zero_quantized_gradients off, or choose another optimizer.",
    ),
    # engine.py: the caller's own accumulation boundary and backward() with a gradient (non-scalar loss)
    ("is not supported with managed_gradient_accumulation=False", _MANAGED_ACCUMULATION),
    (
        "is not supported with non-scalar backward",
        "engine.backward(tensor, gradient=...) (a non-scalar output) works without Apex AMP and the eigenvalue "
        'option: reduce the loss to a scalar (loss.mean()) and call engine.backward(loss), or remove "amp" / '
        '"eigenvalue" from the config.',
    ),
    # engine.py / accelerator/*_accelerator.py set_compile_backend: the compiler backend asked for
    (
        "is not supported for DeepCompile",
        'DeepCompile compiles with "inductor" or "eager": pass engine.compile(backend="inductor") (the default), or '
        'turn DeepCompile off ("compile": {"deepcompile": false}) to use another backend.',
    ),
    (
        ". Supported Backends are ",
        "engine.compile(backend=...) (or the config's compile backend) names a backend torch.compile does not "
        'have: use one of the list the message prints (torch._dynamo.list_backends(): "inductor", ...), spelled as '
        "there, or a callable backend.",
    ),
    # runtime/config.py: the "torch_autocast" section's own values
    (
        "Invalid dtype for torch autocast",
        'Set "torch_autocast": {"enabled": true, "dtype": "bfloat16"} (or "float16"): a dtype DeepSpeed knows.',
    ),
    (
        "Invalid module names for torch autocast",
        'Give "torch_autocast": {"lower_precision_safe_modules": [...]} as a list of strings, the full class paths '
        '(e.g. ["torch.nn.Linear", "torch.nn.Conv2d"]).',
    ),
    # engine.py (AutoTP, 0.16.9+): the ranks of one tensor-parallel group were given different batches
    (
        "Data inconsistency within the TP group",
        "Under AutoTP every rank of a tensor-parallel group must get the same batch: shard the data by the "
        "data-parallel rank, not the global one (DistributedSampler(dataset, num_replicas=dp_world_size, "
        "rank=dp_rank), from deepspeed.utils.groups.get_data_parallel_world_size() / get_data_parallel_rank()), "
        "or hand the dataset to deepspeed.initialize(training_data=...), and seed any random augmentation the same "
        "on those ranks.",
    ),
    # runtime/activation_checkpointing/checkpointing.py configure(): contiguous memory checkpointing
    (
        "Must specify the number of layers with contiguous memory checkpointing",
        '"activation_checkpointing": {"contiguous_memory_optimization": true} needs "number_checkpoints": <the '
        "number of checkpointed layers> (and partition_activations: true); or set contiguous_memory_optimization "
        "false.",
    ),
    # runtime/sequence_parallel/parallel_state_sp.py: a sequence-parallel size of 1 is no sequence parallelism
    (
        "sequence_parallel_size must be greater than 1",
        "Initialise the sequence-parallel groups only when sequence_parallel_size is 2 or more; with 1, skip the "
        "Ulysses set-up (UlyssesSPAttentionHF.register_with_transformers / initialize_sequence_parallel) and "
        "train as plain data parallelism.",
    ),
    # runtime/zero/stage_1_and_2.py: a checkpoint of the ZeRO-1 implementation replaced in 0.5.9
    (
        "is not backwards compatible with older stage 1 checkpoints",
        "The checkpoint was saved by the ZeRO stage 1 of DeepSpeed 0.5.8 or older: load it with that DeepSpeed "
        '(pip install "deepspeed<=0.5.8") and "legacy_stage1": true in "zero_optimization", save the model\'s '
        "weights (or consolidate them with zero_to_fp32.py), and start this run from those weights.",
    ),
    # utils/z3_leaf_module.py set_z3_leaf_modules (0.14.5+): ZeRO-3 leaf modules (MoE blocks) named by class or name
    (
        "No modules of type ",
        "deepspeed.utils.set_z3_leaf_modules(model, [...]) found none of the classes it was given in the model: "
        "pass the class the model really uses for its MoE block (print(model) shows it: transformers' "
        "MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock, ...; the class object of the loaded model's own module when "
        "it comes from trust_remote_code), or drop the call for a model without such blocks.",
    ),
    (
        "No modules named ",
        "The ZeRO-3 leaf-module names (set_z3_leaf_modules_by_name, or the config's leaf_module names) are not "
        "names of the model's modules: use names as model.named_modules() prints them (e.g. "
        '"model.layers.0.mlp"), or the suffix form, or class names.',
    ),
    # runtime/pipe/module.py: what PipelineModule's layers and checkpointing take
    (
        "LayerSpec only supports torch.nn.Module types",
        "LayerSpec(cls, *args, **kwargs) takes an nn.Module class and builds it on its stage: pass the class "
        "(LayerSpec(TransformerLayer, hidden)), not an instance or a function; put plain callables (a lambda, "
        "torch.flatten) in the layers list without LayerSpec.",
    ),
    (
        "param `checkpointable_layers` must be type of list",
        "Pass PipelineModule(checkpointable_layers=[...]) a list of class names (e.g. "
        "['ParallelTransformerLayerPipe']), not one string.",
    ),
    # engine.py _configure_optimizer: what deepspeed.initialize(optimizer=...) accepts
    (
        "Client Optimizer is of unexpected type",
        "deepspeed.initialize(optimizer=...) takes a torch.optim.Optimizer (or DeepSpeed's) instance, or a callable "
        "that builds one from the parameters; the message names the type given (a list of parameters, a name as a "
        'string, a scheduler): build the optimizer first, or name it in the config ("optimizer": {"type": '
        '"AdamW", "params": {...}}) and pass model_parameters= instead.',
    ),
    # deepspeed/__init__.py initialize(): where the config comes from
    (
        "we were given deepspeed configs in the deepspeed arguments and deepspeed.initialize() function call",
        "The config reached deepspeed.initialize twice: from args (the --deepspeed_config flag that "
        "deepspeed.add_config_arguments(parser) adds) and from config=. Give it once: drop config= (or "
        "config_params=), or stop passing --deepspeed_config (or pass args without it).",
    ),
    (
        "we were given both a deepscale_config and deepspeed_config",
        "Pass only --deepspeed_config (--deepscale_config is its old name).",
    ),
    (
        "DeepSpeed requires --deepspeed_config to specify configuration file",
        "deepspeed.initialize got no config: pass config='ds_config.json' (or a dict), or start the script with "
        "--deepspeed --deepspeed_config ds_config.json and hand the parsed args to initialize(args=args) (the "
        "parser needs deepspeed.add_config_arguments(parser)).",
    ),
    (
        "mpu must be None with pipeline parallelism",
        "A PipelineModule builds its own parallel groups from its topology: call deepspeed.initialize(model=pipe, "
        "...) without mpu= (Megatron's mpu is for models that are not a PipelineModule).",
    ),
    (
        "deepspeed.initialize requires a model",
        "deepspeed.initialize(model=None, ...): pass the model (deepspeed.initialize(model=model, ...)); a "
        "function that builds it returned None, or the argument went to another keyword.",
    ),
    # accelerator/real_accelerator.py: DS_ACCELERATOR names the accelerator to use instead of detecting it
    (
        "_Accelerator requires",
        "DS_ACCELERATOR asks DeepSpeed for an accelerator whose PyTorch extension this environment lacks (the "
        "message names it: torch_npu, habana_frameworks, intel_extension_for_pytorch, ...): unset DS_ACCELERATOR "
        "(DeepSpeed then detects CUDA itself) or set DS_ACCELERATOR=cuda on NVIDIA GPUs; or install that extension.",
    ),
    (
        "DS_ACCELERATOR must be one of",
        "Set DS_ACCELERATOR to one of the names the message lists (cuda, cpu, xpu, npu, mps, hpu, ...), in lower "
        "case, or unset it to let DeepSpeed detect the accelerator.",
    ),
    # runtime/zero/partition_parameters.py InsertPostInitMethodToModuleSubClasses: zero.Init's dtype= (left out, it
    # follows the config: bf16 -> torch.bfloat16, fp16 -> torch.half, else torch.float), checked against three types
    (
        "allowed values are [torch.half, torch.bfloat16, torch.float]",
        "deepspeed.zero.Init(dtype=...) takes torch.half, torch.bfloat16 or torch.float (float32) only: pass one of "
        "them (not a string such as 'bf16', nor torch.float64 or an integer type), or leave dtype out so zero.Init "
        'takes the precision the config enables ("bf16" / "fp16").',
    ),
    # partition_parameters.py / mics.py zero.Init (0.10.2+, the Ulysses release; the second argument deprecated in
    # 0.15.1): one process group to partition over, named by one of two arguments
    (
        "Both 'data_parallel_group' and 'sequence_data_parallel_group' were specified",
        "Pass the group ZeRO-3 partitions over once: deepspeed.zero.Init(data_parallel_group=...) alone (drop "
        "sequence_data_parallel_group=, deprecated since DeepSpeed 0.15.1; code written for the older name, such "
        "as Megatron-DeepSpeed's model provider, passes it beside the new one).",
    ),
    # runtime/zero/mics.py MiCS_Init: MiCS reads its shard size from the config, which it must be given
    (
        "Must provide configuration for MiCS Initialization",
        'deepspeed.zero.MiCS_Init(config_dict_or_path=ds_config, ...) needs the DeepSpeed config (with "mics_shard_size" '
        'in "zero_optimization"): pass the same dict or JSON path as deepspeed.initialize, or use deepspeed.zero.Init '
        "without MiCS.",
    ),
    # runtime/zero/stage3.py (0.13.2, #5008, until 0.17.x): a ZeRO-3 leaf module (set_z3_leaf_modules) reduces its
    # gradients from a hook on its inputs, so it refused inputs without requires_grad beside outputs that need
    # gradients (a frozen embedding feeding it, gradient checkpointing's inputs); 0.18.0 (#7592) hooks the module
    # through PyTorch's own API and takes them
    (
        "A module cannot be set as a leaf module when it does not have any input tensors that require gradients",
        "A ZeRO-3 leaf module (deepspeed.utils.set_z3_leaf_modules, a MoE block) got no input that requires a "
        "gradient, which DeepSpeed 0.13.2-0.17.x cannot reduce from: upgrade DeepSpeed (pip install -U "
        "'deepspeed>=0.18.0' hooks leaf modules without that need), or make an input require one (transformers: "
        "model.enable_input_require_grads() with a frozen embedding or gradient checkpointing), or do not mark that "
        "module as a leaf.",
    ),
)

TEMPLATES: tuple[str, ...] = (
    "deepspeed:cpuadam-param-is-on-and-must",  # ops/adam/cpu_adam.py (and zenflow_cpu_adam.py)
    "deepspeed:cpuadagrad-param-is-on-and-must",  # ops/adagrad/cpu_adagrad.py
    "deepspeed:cpulion-param-is-on-and-must",  # ops/lion/cpu_lion.py
    "deepspeed:number-of-experts-should-be-divisible",  # moe/layer.py
    "third_party:deepspeed-autotp-use-kernel-injection",  # module_inject/auto_tp.py
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
    "deepspeed:autoep-with-zero-stage-only-supports",  # runtime/engine.py: AutoEP
    "deepspeed:autoep-does-not-currently-support-tensor",
    "deepspeed:autoep-checkpointing-requires-single-ep-group",
    "deepspeed:autoep-with-zero-stage-checkpointing-does",
    "deepspeed:autoep-with-zero-stage-checkpointing-does-2",
    "deepspeed:autoep-with-zero-stage-checkpointing-does-3",
    "deepspeed:folded-autoep-autotp-checkpoint-requires-folded",
    "deepspeed:legacy-checkpoint-format-old-moe-load",
    "deepspeed:the-autotp-compile-pass-cannot-yet",
    "deepspeed:pipelineengine-expects-module-state-dict-to",  # runtime/pipe/engine.py
    "deepspeed:one-or-more-batch-related-parameters",  # runtime/config.py
    "deepspeed:given-sparsity-mode-has-not-been",
    "deepspeed:optimizer-backward-only-accepts-scalar-tensor",  # runtime/base_optimizer.py
    "deepspeed:does-not-support-closure",  # runtime/bf16_optimizer.py
    "deepspeed:this-api-is-only-defined-for",  # utils/tensor_fragment.py
    "deepspeed:gradients-are-only-available-immediately-after",
    "deepspeed:leaf-module-classes-must-be-list",  # utils/z3_leaf_module.py
    "deepspeed:custom-load-fn-not-supported-pipeline",  # runtime/pipe/engine.py
    "deepspeed:all-parameters-must-be-float32-for",  # runtime/torch_autocast.py
    "deepspeed:communication-data-type-must-be-float32",
    "deepspeed:num-gpus-not-equal-to-device",  # utils/groups.py
    "deepspeed:zero-parameter-intra-parallel-group-is",  # utils/groups.py: zero.Init's hpZ group made twice
    "deepspeed:use-data-before-expert-parallel-is",
    "deepspeed:is-not-valid-attn-implementation-the",
    "deepspeed:either-seq-length-is-variable-needs",
    "deepspeed:borked-batch-batch-input-ids-shape",
    "deepspeed:shape-must-match-input-ids-shape",
    "deepspeed:this-function-requires-zero-mode",
    "deepspeed:consolidated-bit-state-dict-is-only",
    "deepspeed:only-stage3-support-for-pipeline-checkpoint",
    "deepspeed:zero-elastic-checkpointing-is-deprecated-and-2",
    "deepspeed:partitioning-found-no-valid-layers-to",
    "deepspeed:curriculum-learning-requires-the-config",
    "deepspeed:curriculum-learning-with-fixed-discrete-schedule",
    "deepspeed:curriculum-learning-with-fixed-root-schedule",
    "deepspeed:curriculum-learning-with-fixed-linear-schedule",
    "deepspeed:more-elements-than-buffer-size",  # runtime/swap_tensor/partitioned_param_swapper.py
    "deepspeed:pipelinedoptimizerswapper-ran-out-of-swap-buffers",
    "deepspeed:cannot-enable-both-torch-autocast-and",  # runtime/torch_autocast.py
    "deepspeed:cannot-enable-both-torch-autocast-and-2",
    "deepspeed:cannot-enable-both-torch-autocast-and-3",
    "deepspeed:fp16-master-weights-and-gradients-and",  # runtime/base_optimizer.py
    "deepspeed:bf16optimizer-unsupported-gradient-accumulation-data-type",
    "deepspeed:dp-group-size-is-not-dividable",  # runtime/zero/mics_utils.py
    "deepspeed:local-sharding-has-no-support-for",  # runtime/zero/mics.py
    "deepspeed:world-size-is-less-than-sequence",  # runtime/sequence_parallel/parallel_state_sp.py
    "deepspeed:world-size-is-not-divisible-by",
    "deepspeed:conflicting-tensor-parallel-autotp-size-in",  # runtime/tensor_parallel/init_utils.py
    "deepspeed:conflicting-tensor-parallel-tp-tp-size",
    "deepspeed:conflicting-tensor-parallel-dtype-in-config",
    "deepspeed:conflicting-dtype-config-uses-but-tp",
    "deepspeed:tp-model-init-provided-tp-group",
    "deepspeed:muon-optimizer-is-used-but-the",  # runtime/engine.py
    "deepspeed:all-muon-parameter-groups-must-have",  # runtime/zero/stage3.py
    "deepspeed:muon-and-all2all-process-group-cannot",
    "deepspeed:coalesce-grad-reduction-is-not-supported",  # runtime/engine.py
    "deepspeed:set-gradient-accumulation-boundary-is-not",
    "deepspeed:apex-amp-is-not-supported-with",
    "deepspeed:eigenvalue-is-not-supported-with-non",
    "deepspeed:backend-is-not-supported-for-deepcompile",
    "deepspeed:not-supported-by-supported-backends-are",  # accelerator/*_accelerator.py set_compile_backend
    "deepspeed:invalid-dtype-for-torch-autocast",  # runtime/config.py
    "deepspeed:invalid-module-names-for-torch-autocast",
    "deepspeed:data-inconsistency-within-the-tp-group",  # runtime/engine.py
    "deepspeed:must-specify-the-number-of-layers",  # runtime/activation_checkpointing/checkpointing.py
    "deepspeed:sequence-parallel-size-must-be-greater",  # runtime/sequence_parallel/parallel_state_sp.py
    "deepspeed:zero-stage-changed-in-and-is",  # runtime/zero/stage_1_and_2.py
    "deepspeed:no-modules-of-type-found-in",  # utils/z3_leaf_module.py
    "deepspeed:no-modules-named-found-in-model",
    "deepspeed:layerspec-only-supports-torch-nn-module",  # runtime/pipe/module.py
    "deepspeed:param-checkpointable-layers-must-be-type",
    "deepspeed:client-optimizer-is-of-unexpected-type",  # runtime/engine.py
    "deepspeed:not-sure-how-to-proceed-we",  # deepspeed/__init__.py
    "deepspeed:not-sure-how-to-proceed-we-2",
    "deepspeed:deepspeed-requires-deepspeed-config-to-specify",
    "deepspeed:mpu-must-be-none-with-pipeline",
    "deepspeed:deepspeed-initialize-requires-model",
    "deepspeed:npu-accelerator-requires-torch-npu-which",  # accelerator/real_accelerator.py
    "deepspeed:hpu-accelerator-requires-habana-frameworks-torch",
    "deepspeed:xpu-accelerator-requires-pytorch-with-xpu",
    "deepspeed:xpu-accelerator-requires-intel-extension-for",
    "deepspeed:cpu-accelerator-requires-intel-extension-for",
    "deepspeed:ds-accelerator-must-be-one-of",
    "deepspeed:ds-accelerator-must-be-one-of-2",
    "deepspeed:invalid-data-type-allowed-values-are",  # runtime/zero/partition_parameters.py: zero.Init's dtype
    "deepspeed:both-data-parallel-group-and-sequence",  # runtime/zero/partition_parameters.py, mics.py
    "deepspeed:must-provide-configuration-for-mics-initialization",  # runtime/zero/mics.py
    "deepspeed:module-cannot-be-set-as-leaf",  # runtime/zero/stage3.py, 0.13.2-0.17.x
)
