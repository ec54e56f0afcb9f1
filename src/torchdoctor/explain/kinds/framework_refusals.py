"""DeepSpeed's config refused by DeepSpeed's own checks, by accelerate's or by Lightning's.

DeepSpeed's config refused by the code around it: DeepSpeed's own checks of its batch sizes, ZeRO stage, precision
and optimizer (``deepspeed/runtime/config.py``, ``config_utils.py``, ``precision_config.py``, ``engine.py``,
``activation_checkpointing/checkpointing.py``), accelerate's (``accelerator.py``, ``utils/dataclasses.py``,
``utils/deepspeed.py``, ``utils/imports.py``) and Lightning's DeepSpeed strategy
(``lightning/pytorch/strategies/deepspeed.py``, ``lightning/fabric/strategies/deepspeed.py``).

Each message states its own cause (the value it refuses and why), so each is a certain
``deepspeed_config_mismatch`` (kinds/deepspeed.py), except engine.py's refusal of loss.backward(), which names two
causes (ZeRO stage 0, or a torch without the APIs it needs), and Lightning's DeepSpeed strategy on an accelerator that
is not CUDA (asked for, or all accelerator="auto" found): likely, the other named. ``REFUSALS`` pairs the text the source prints with the fix;
``TEMPLATES`` cites the catalog templates they are taken from.
"""

from __future__ import annotations

FAMILY = "a library refusing its settings"

REFUSALS: tuple[tuple[str, str], ...] = (
    # deepspeed/runtime/config.py _set_batch_related_parameters: none of the batch sizes given
    (
        "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided",
        'The DeepSpeed config names no batch size: add "train_micro_batch_size_per_gpu": <N> (or '
        '"train_batch_size") to it; with the HF Trainer or accelerate write "auto" for both so they are filled '
        "from --per_device_train_batch_size / the prepared DataLoader.",
    ),
    # config.py: a ZeRO stage above 3
    (
        "Maximum supported ZeRO stage is",
        'Set "zero_optimization": {"stage": N} with N one of 0, 1, 2, 3 (3 partitions the parameters too).',
    ),
    # config.py _do_error_check: fp16_master_weights_and_grads outside the stages that support it
    (
        "Fp16_master_weights_and_grads is only supported with ZeRO Stage",
        'Remove "fp16_master_weights_and_grads" from the "fp16" section of the config, or enable ZeRO at a stage the '
        'message names ("zero_optimization": {"stage": 2}): it keeps the master weights in fp16 inside ZeRO\'s '
        "optimizer, which plain fp16 training does not have.",
    ),
    # config_utils.py: the same key twice in the JSON (json.load keeps the last one silently otherwise)
    (
        "Duplicate keys in DeepSpeed config",
        "The DeepSpeed JSON has the key the message names twice, often a section pasted in from another config: "
        "keep one of them.",
    ),
    # config_utils.py DeepSpeedConfigModel: an old key and the key that replaced it, both given
    (
        "Cannot provide deprecated parameter",
        "The config sets a key and the key that replaced it in a later DeepSpeed release (e.g. cpu_offload and "
        "offload_optimizer): keep the new one, named second in the message, and remove the deprecated one.",
    ),
    # precision_config.py (0.19+): fp16's loss-scale values checked before the engine starts
    (
        "fp16.loss_scale must be",
        'fp16.loss_scale is 0 for dynamic loss scaling or a positive number for a fixed scale: set "loss_scale": 0 '
        'in the "fp16" section. "auto" (or true) there is filled only by the HF Trainer / accelerate; '
        "deepspeed.initialize reading the JSON directly needs a number.",
    ),
    (
        "fp16.loss_scale_window must be > 0",
        'With dynamic loss scaling ("loss_scale": 0) set "loss_scale_window" to a positive number of steps '
        "(1000 is DeepSpeed's default), or leave it out.",
    ),
    (
        "fp16.min_loss_scale must be > 0",
        'With dynamic loss scaling ("loss_scale": 0) set "min_loss_scale" to a positive number (1 is DeepSpeed\'s '
        "default), or leave it out.",
    ),
    # deepspeed/runtime/engine.py no_sync(): ZeRO 2/3 reduce gradients during backward to partition them
    (
        "no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage",
        "ZeRO stage 2 and 3 reduce and partition every gradient during backward, so a DDP-style no_sync() "
        "(model.no_sync(), accelerator.no_sync(), a manual gradient-accumulation loop) cannot skip it. Let DeepSpeed "
        'accumulate: set "gradient_accumulation_steps" in its config and call engine.backward(loss) and '
        "engine.step() on every micro-batch (the engine steps the optimizer at the boundary); or use ZeRO stage 0/1 "
        "if the loop must keep no_sync().",
    ),
    (
        "It is illegal to call Engine.step() inside no_sync context manager",
        "Call engine.step() after the `with engine.no_sync():` block, not inside it: no_sync only skips the "
        "gradient reduction of the backward passes it wraps.",
    ),
    # engine.py _configure_basic_optimizer: the compressed-communication optimizers run without ZeRO
    (
        "1bit-Adam is not compatible with ZeRO",
        'DeepSpeed builds the 1-bit and 0/1 optimizers only without ZeRO: use "zero_optimization": {"stage": 0} '
        'with them, or keep ZeRO and choose "Adam" / "AdamW" as the optimizer.',
    ),
    (
        "0/1 Adam is not compatible with ZeRO",
        'DeepSpeed builds the 1-bit and 0/1 optimizers only without ZeRO: use "zero_optimization": {"stage": 0} '
        'with them, or keep ZeRO and choose "Adam" / "AdamW" as the optimizer.',
    ),
    (
        "1bit-Lamb is not compatible with ZeRO",
        'DeepSpeed builds the 1-bit and 0/1 optimizers only without ZeRO: use "zero_optimization": {"stage": 0} '
        'with them, or keep ZeRO and choose "Lamb" as the optimizer.',
    ),
    # engine.py _configure_fp16_optimizer / amp: NVIDIA apex amp and DeepSpeed's own fp16/bf16 both on
    (
        "Cannot enable both amp with (legacy) fp16 or bfloat16 mode",
        'Keep one precision mode in the DeepSpeed config: remove the "amp" section and keep "fp16" / "bf16" '
        '(DeepSpeed\'s own, which ZeRO supports), or set "fp16" and "bf16" "enabled": false to use apex amp.',
    ),
    # engine.py _do_sanity_check: a scheduler object built on something that is not an optimizer
    (
        "is not instantiated but Client LR Scheduler is instantiated",
        "A scheduler object needs the optimizer it was built on: pass that optimizer instance as optimizer= too, "
        "or pass the scheduler as a callable (lr_scheduler=lambda opt: ...) so DeepSpeed builds it on the "
        "optimizer it creates from the config.",
    ),
    # activation_checkpointing/checkpointing.py configure(): contiguous buffers need partitioned activations
    (
        "Contiguous Checkpointing is only available with partitioned activations",
        'In "activation_checkpointing" set "partition_activations": true along with '
        '"contiguous_memory_optimization": true (and "number_checkpoints"), or set '
        '"contiguous_memory_optimization": false.',
    ),
    # runtime/zero/config.py (0.9.5-0.14.5, pydantic's validator): overlap_comm read before a valid stage
    (
        "'stage' must be defined before 'overlap_comm'",
        'Give "zero_optimization" a "stage" (0, 1, 2 or 3; a value DeepSpeed refuses leaves it undefined too): '
        '"zero_optimization": {"stage": 2, "overlap_comm": true, ...}.',
    ),
    # runtime/zero/partition_parameters.py _validate_remote_device: zero.Init's remote_device against offload_param
    (
        "'device' in DeepSpeed Config cannot be",
        'zero.Init(remote_device=...) and the config\'s "offload_param": {"device": ...} must agree: pass '
        'remote_device="nvme" to zero.Init with an NVMe offload (newer DeepSpeed releases take the device from the '
        'config themselves), or set "offload_param": {"device": "cpu"}.',
    ),
    # engine.py (0.9.5-0.16.9): bf16 without ZeRO accumulates gradients in fp32 only
    (
        "Bfloat16 wrapper must use a gradient accumulation type of fp32",
        'bf16 without ZeRO accumulates gradients in fp32: set "data_types": {"grad_accum_dtype": "fp32"} (or remove '
        'it), or enable ZeRO ("zero_optimization": {"stage": 1} or higher) to accumulate in bf16.',
    ),
    # zero/stage_1_and_2.py: ZeRO-2 with MoE layers runs only with reduce-scatter and contiguous gradients
    (
        "must be set to True for MoE",
        'For MoE layers under ZeRO stage 2 set "reduce_scatter": true and "contiguous_gradients": true in '
        '"zero_optimization" (both are DeepSpeed\'s defaults: a config that turns them off breaks it).',
    ),
    # zero/stage_1_and_2.py, bf16_optimizer.py: MoE parameters not in their own optimizer groups
    (
        "None of the param groups are marked as MoE",
        "The optimizer must hold the MoE experts' parameters in their own groups: build it from "
        "deepspeed.moe.utils.split_params_into_different_moe_groups_for_optimizer(param_groups) (its groups carry "
        "'moe': True), or pass model_parameters=model.parameters() and let DeepSpeed build the optimizer from the "
        "config.",
    ),
    # zero/stage_1_and_2.py: the all-gather bucket against NCCL's alignment
    (
        "allgather_bucket_size must be a multiple of nccl_start_alignment_factor",
        'Set "allgather_bucket_size" in "zero_optimization" to a multiple of the factor the message names (a round '
        "number such as 5e8 is), or leave it out for DeepSpeed's default.",
    ),
    # utils/groups.py: the data- and tensor-parallel sizes against the processes started
    (
        ") * tensor_model_parallel_size (",
        "data_parallel_size x tensor_model_parallel_size must be the number of processes started: choose sizes "
        "whose product is the world size, or start as many processes as they need (deepspeed --num_gpus / "
        "--num_nodes, torchrun --nproc_per_node).",
    ),
    # engine.py deepspeed_io: training_data= given something that is not a Dataset
    (
        "Training data must be a torch Dataset",
        "deepspeed.initialize(training_data=...) takes a torch.utils.data.Dataset (it builds the DataLoader and "
        "its DistributedSampler): pass the dataset, or build the DataLoader yourself and leave training_data out.",
    ),
    # engine.py (0.18+): backward called on the loss directly where the engine must scale or run it
    (
        "Direct calls to tensor.backward() are not supported in this configuration",
        "Call the engine's backward instead of the tensor's: engine.backward(loss) (accelerate: "
        "accelerator.backward(loss)); loss.backward() works only where this DeepSpeed and torch support it.",
    ),
    (
        "Loss scaling is required for this configuration, but backward() was called",
        "fp16 needs the loss scaled before backward: engine.backward(loss) (accelerate: accelerator.backward(loss)) "
        "or engine.scale(loss).backward(), not loss.backward().",
    ),
    # runtime/pipe/engine.py, pipe/module.py: pipeline parallelism's own rules
    (
        "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
        'A PipelineModule trains under ZeRO stage 0 or 1 only: set "zero_optimization": {"stage": 1} (or 0) in the '
        "DeepSpeed config (Megatron-DeepSpeed: --zero-stage 1), or train without pipeline stages to use ZeRO-2/3.",
    ),
    (
        "Only train_batch() is accessible in pipeline mode",
        "A pipeline engine runs whole batches: call engine.train_batch(data_iter=...) (engine.eval_batch for "
        "evaluation) instead of forward / backward / step.",
    ),
    (
        "train_batch() requires gradients enabled. Use eval_batch() instead",
        "train_batch() ran under torch.no_grad() (or inference_mode): call engine.eval_batch(data_iter) for "
        "evaluation, and train_batch outside the no_grad block.",
    ),
    (
        "must provide num_stages or topology",
        "PipelineModule(layers=..., num_stages=N) needs the number of pipeline stages (or a topology=): pass "
        "num_stages, a divisor of the number of processes.",
    ),
    # runtime/lr_schedules.py (0.19.5+): WarmupLR's steps checked as it is built
    (
        "warmup_num_steps must be a positive integer",
        'Set "warmup_num_steps" in the scheduler\'s params to a positive integer: a value of 0, a float, or an '
        '"auto" nothing filled in (only the HF Trainer / accelerate fill "auto") is refused.',
    ),
    # accelerate/utils/dataclasses.py DeepSpeedPlugin: a config file without its ZeRO section
    (
        "Please specify the ZeRO optimization config in the DeepSpeed config",
        'accelerate needs the "zero_optimization" section in the DeepSpeed config file: add '
        '"zero_optimization": {"stage": 2} (or the stage you want; 0 for none).',
    ),
    # dataclasses.py HfDeepSpeedConfig fill_match: an "auto" value with nothing to fill it from
    (
        "not found in kwargs. Please specify",
        'accelerate fills a DeepSpeed value written "auto" only from what it can see (the prepared DataLoader\'s '
        "batch size, the optimizer's lr, the Trainer's arguments): write a number for the key the message names "
        "in the DeepSpeed config file, or pass the object it is read from to the same accelerator.prepare() call.",
    ),
    # dataclasses.py DeepSpeedPlugin.set_moe_leaf_modules: the MoE block class to keep whole under ZeRO-3
    (
        "Could not find a transformer layer class called",
        "accelerate's DeepSpeed MoE setting names a layer class this model does not have: "
        "transformer_moe_cls_names (accelerate config deepspeed_moe_layer_cls_names, or "
        "ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES) must list the model's sparse MoE block class (print(model) shows "
        "it, e.g. MixtralSparseMoeBlock); a value left from another model's config is the usual source.",
    ),
    # accelerator.py _prepare_deepspeed: ZeRO-3 bucket sizes written "auto" need the model's hidden size
    (
        "Can't find `model.config` entry",
        'accelerate fills the ZeRO-3 bucket sizes written "auto" (reduce_bucket_size, stage3_prefetch_bucket_size, '
        "stage3_param_persistence_threshold) from model.config.hidden_size, and this model has no config: write "
        'numbers for those keys in the DeepSpeed config instead of "auto".',
    ),
    (
        "Can find neither `model.config.hidden_size` nor",
        'accelerate fills the ZeRO-3 bucket sizes written "auto" from model.config.hidden_size (or hidden_sizes), '
        "which this model's config lacks: write numbers for reduce_bucket_size, stage3_prefetch_bucket_size and "
        'stage3_param_persistence_threshold in the DeepSpeed config instead of "auto".',
    ),
    # accelerator.py prepare(): DeepSpeed engines are one model each
    (
        "with multiple models when using DeepSpeed",
        "Under DeepSpeed one accelerator.prepare() call takes one model: prepare the trained model with its "
        "optimizer in one call, and a second model (a reference or teacher) in a call of its own after selecting "
        "its DeepSpeed plugin (Accelerator(deepspeed_plugins={...}), AcceleratorState().select_deepspeed_plugin(name)), "
        "or keep a frozen one out of prepare() and move it to accelerator.device yourself.",
    ),
    (
        "You can't customize device placements with DeepSpeed or Megatron-LM",
        "Under DeepSpeed the engine places the model: drop device_placement= from accelerator.prepare().",
    ),
    (
        "You can only specify `accelerate.utils.DummyScheduler` in the code when using",
        "DummyScheduler stands for the scheduler of the DeepSpeed config and needs DummyOptim (the config's "
        'optimizer) beside it: use both with "optimizer" and "scheduler" in the config, or build a real '
        "scheduler on the script's real optimizer.",
    ),
    # accelerator.py, utils/dataclasses.py: several DeepSpeed plugins, and what only accelerate's state may switch
    (
        "You cannot pass in both `deepspeed_plugins` and `deepspeed_plugin`",
        "Pass one of them to Accelerator(): deepspeed_plugin=plugin for one config, or deepspeed_plugins={name: "
        "plugin, ...} for several.",
    ),
    (
        "object must be enabled manually by calling `AcceleratorState().enable_deepspeed_plugin",
        "A DeepSpeed plugin is switched through accelerate's state, not on the plugin object: call "
        "AcceleratorState().select_deepspeed_plugin(name) (or accelerator.state.select_deepspeed_plugin(name)) with "
        "the name it has in Accelerator(deepspeed_plugins={...}).",
    ),
    (
        "'enabled' can only be set through calling 'AcceleratorState().enable_deepspeed_plugin",
        "A DeepSpeed plugin is switched through accelerate's state, not on the plugin object: call "
        "AcceleratorState().select_deepspeed_plugin(name) (or accelerator.state.select_deepspeed_plugin(name)) with "
        "the name it has in Accelerator(deepspeed_plugins={...}).",
    ),
    (
        "with DeepSpeed, you need to configure sp_backend='deepspeed'",
        "Sequence parallelism (sp_size > 1) under DeepSpeed runs on DeepSpeed's Ulysses: set sp_backend='deepspeed' "
        "in the parallelism config (ParallelismConfig(sp_backend='deepspeed', sp_size=N)), or sp_size to 1.",
    ),
    (
        "MS-AMP is not supported for ZeRO Stage 3",
        'accelerate runs MS-AMP under ZeRO stage 0, 1 or 2 only: set "zero_optimization": {"stage": 2}, or keep '
        "ZeRO-3 and train without MS-AMP.",
    ),
    # utils/deepspeed.py, utils/imports.py: DeepSpeed helpers called while accelerate is not set up for DeepSpeed
    (
        "Couldn't retrieve the active `DeepSpeedPlugin` as none were enabled",
        "The script uses accelerate's DeepSpeed helpers but no DeepSpeed plugin is active in this run: start it with "
        "`accelerate launch --use_deepspeed --deepspeed_config_file ds.json train.py` (or an `accelerate config` file "
        "with distributed_type: DEEPSPEED), or pass Accelerator(deepspeed_plugin=...); with several plugins "
        "(deepspeed_plugins={...}) select one first: AcceleratorState().select_deepspeed_plugin(name).",
    ),
    (
        "DeepSpeed is not enabled, please make sure that an `Accelerator` is configured for `deepspeed`",
        "The script uses accelerate's DeepSpeed helpers but accelerate is not set up for DeepSpeed in this run: "
        "start it with `accelerate launch --use_deepspeed --deepspeed_config_file ds.json train.py` (or an "
        "`accelerate config` file with distributed_type: DEEPSPEED), or pass Accelerator(deepspeed_plugin=...).",
    ),
    # transformers/integrations/deepspeed.py (5.x): a checkpoint that needs converting, loaded under DeepSpeed's TP
    (
        "with DeepSpeed Tensor Parallelism are not yet implemented",
        "This model's checkpoint is converted as it loads (MoE experts fused), which transformers does not do under "
        'DeepSpeed tensor parallelism: remove "tensor_parallel" (tp_size > 1, also under "inference") from the '
        "DeepSpeed config, or save the model once in the converted format (load it without DeepSpeed, "
        "save_pretrained) and load that.",
    ),
    # lightning strategies/deepspeed.py: what the DeepSpeed strategy takes from the Trainer, not the config
    (
        "DeepSpeed does not support clipping gradients by value",
        'DeepSpeed clips by norm only: Trainer(gradient_clip_val=..., gradient_clip_algorithm="norm") (or '
        '"gradient_clipping" in the DeepSpeed config).',
    ),
    (
        "DeepSpeed currently only supports single optimizer",
        "configure_optimizers must return one optimizer (and at most one scheduler) under the DeepSpeed strategy: "
        "merge the parameter groups into one optimizer, or use another strategy (DDP / FSDP) for several.",
    ),
    (
        "Currently only one optimizer is supported with DeepSpeed",
        "configure_optimizers must return one optimizer (and at most one scheduler) under the DeepSpeed strategy: "
        "merge the parameter groups into one optimizer, or use another strategy (DDP / FSDP) for several.",
    ),
    # strategies/deepspeed.py setup_environment: the accelerator Lightning chose is not CUDA (likely, as
    # accelerator="auto" on a machine where torch sees no GPU ends here too: kinds/deepspeed.py names it)
    (
        "The DeepSpeed strategy is only supported on CUDA GPUs but",
        'The DeepSpeed strategy runs on CUDA GPUs: pass Trainer(accelerator="cuda", devices=N, '
        'strategy="deepspeed_stage_2") (or Fabric(accelerator="cuda", ...)); another accelerator (cpu, mps, tpu) '
        "needs another strategy.",
    ),
    (
        "Do not set `gradient_accumulation_steps` in the DeepSpeed config",
        'Remove "gradient_accumulation_steps" from the DeepSpeed config and pass '
        "Trainer(accumulate_grad_batches=N): Lightning writes it into the config itself.",
    ),
    (
        "You passed in a path to a DeepSpeed config but the path does not exist",
        "DeepSpeedStrategy(config=...) (or PL_DEEPSPEED_CONFIG_PATH) names a file that is not there from the "
        "working directory of every process: check the path (relative paths are taken from where each node "
        "starts), or pass the config as a dict.",
    ),
    (
        "is not a valid choice with `DeepSpeedStrategy` when ZeRO stage 3 is enabled",
        "Under ZeRO stage 3 the model is built inside deepspeed.zero.Init, which decides how its weights are "
        "created: drop empty_init=False from Fabric.init_module() / Trainer.init_module() (leave it None).",
    ),
)

TEMPLATES: tuple[str, ...] = (
    "deepspeed:either-train-batch-size-or-train",
    "deepspeed:deepspeedconfig-maximum-supported-zero-stage-is",
    "deepspeed:fp16-master-weights-and-grads-is",
    "deepspeed:fp16-master-weights-and-grads-is-2",
    "deepspeed:duplicate-keys-in-deepspeed-config",
    "deepspeed:cannot-provide-deprecated-parameter-and-replacing",
    "deepspeed:fp16-loss-scale-must-be-number",
    "deepspeed:fp16-loss-scale-must-be-number-2",
    "deepspeed:fp16-loss-scale-must-be-finite",
    "deepspeed:fp16-loss-scale-must-be-enables",
    "deepspeed:fp16-loss-scale-window-must-be",
    "deepspeed:fp16-min-loss-scale-must-be",
    "deepspeed:no-sync-context-manager-is-incompatible",
    "deepspeed:it-is-illegal-to-call-engine",
    "deepspeed:bit-adam-is-not-compatible-with",
    "deepspeed:adam-is-not-compatible-with-zero",
    "deepspeed:bit-lamb-is-not-compatible-with",
    "deepspeed:cannot-enable-both-amp-with-legacy",
    "deepspeed:client-optimizer-type-is-not-instantiated",
    "deepspeed:contiguous-checkpointing-is-only-available-with",
    "deepspeed:deepspeedzeroconfig-stage-must-be-defined-before",
    "deepspeed:device-in-deepspeed-config-cannot-be",
    "deepspeed:bfloat16-wrapper-must-use-gradient-accumulation",
    "deepspeed:reduce-scatter-in-zero-stage-must",
    "deepspeed:contiguous-gradients-in-zero-stage-must",
    "deepspeed:the-model-has-moe-layers-but",
    "deepspeed:allgather-bucket-size-must-be-multiple",
    "deepspeed:data-parallel-size-tensor-model-parallel",
    "deepspeed:training-data-must-be-torch-dataset",
    "deepspeed:direct-calls-to-tensor-backward-are",
    "deepspeed:loss-scaling-is-required-for-this",
    "deepspeed:zero-and-zero-are-incompatible-with",
    "deepspeed:only-train-batch-is-accessible-in",
    "deepspeed:train-batch-requires-gradients-enabled-use",
    "deepspeed:must-provide-num-stages-or-topology",
    "deepspeed:warmup-num-steps-must-be-positive",
    "accelerate:please-specify-the-zero-optimization-config",
    "accelerate:not-found-in-kwargs-please-specify",
    "accelerate:can-find-model-config-entry",
    "accelerate:can-find-neither-model-config-hidden",
    "accelerate:could-not-find-transformer-layer-class",
    "accelerate:you-can-use-same-accelerator-instance",
    "accelerate:you-can-customize-device-placements-with",
    "accelerate:you-can-only-specify-accelerate-utils",
    "accelerate:you-cannot-pass-in-both-deepspeed",
    "accelerate:deepspeedplugin-object-must-be-enabled-manually",
    "accelerate:enabled-can-only-be-set-through",
    "accelerate:in-order-to-use-the-configured",
    "accelerate:ms-amp-is-not-supported-for",
    "accelerate:couldn-retrieve-the-active-deepspeedplugin-as",
    "accelerate:deepspeed-is-not-enabled-please-make",
    "transformers:weight-conversions-moe-expert-fusion-with",
    "lightning:deepspeed-does-not-support-clipping-gradients",
    "lightning:deepspeed-currently-only-supports-single-optimizer",
    "lightning:currently-only-one-optimizer-is-supported",
    "lightning:the-deepspeed-strategy-is-only-supported",
    "lightning:do-not-set-gradient-accumulation-steps",
    "lightning:you-passed-in-path-to-deepspeed",
    "lightning:empty-init-is-not-valid-choice",
)
