"""FSDP settings refused before anything is wrapped, by accelerate, the HF Trainer or torch's own FSDP.

FSDP settings refused by accelerate or the HF Trainer before anything is wrapped: an FSDP1 value under FSDP2 (or
the reverse), options that need each other, the optimizer or the models handed over in a way FSDP2 cannot take;
and torch's own FSDP refusing a state-dict type its sharding strategy has no shards for, or the optimizer in
backward without use_orig_params (``fsdp/_state_dict_utils.py``, ``_runtime_utils.py``,
``distributed/checkpoint/state_dict.py``).

The texts are accelerate's (``utils/dataclasses.py`` FullyShardedDataParallelPlugin, ``accelerator.py`` prepare,
``utils/launch.py``), transformers' (``trainer.py``, ``training_args.py``) and Lightning's FSDP and model-parallel
strategies (``lightning/pytorch/strategies/fsdp.py``, ``lightning/fabric/strategies/fsdp.py``,
``model_parallel.py``), as the catalog holds them. Each names the value it refuses
and why: certain. (A wrap policy naming a class the model lacks, or FSDP1 flattening mixed parameters, is
``fsdp_wrap_config``, kinds/checkpoint.py.)
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import describe_refusal, refusal_pattern
from torchdoctor.explain.recognisers import Recogniser

FAMILY = "a library refusing its settings"

_FSDP2_STRATEGY = (
    "FSDP2 takes reshard_after_forward as true/false (true is what FSDP1 calls FULL_SHARD, false SHARD_GRAD_OP): "
    "pass a bool (FullyShardedDataParallelPlugin(reshard_after_forward=True), fsdp_reshard_after_forward: true in "
    "the accelerate config), not a ShardingStrategy or a number left from FSDP1 code, or go back to fsdp_version: 1."
)

_NOT_SHARDED = (
    "SHARDED_STATE_DICT and LOCAL_STATE_DICT save each rank's shard, and this FSDP does not shard: its strategy is "
    "NO_SHARD, chosen in the code (sharding_strategy=ShardingStrategy.NO_SHARD, accelerate's fsdp_sharding_strategy: "
    'NO_SHARD) or by FSDP itself in a run of one process (it warns "FSDP is switching to use `NO_SHARD`"). Save '
    "and load with StateDictType.FULL_STATE_DICT (accelerate: fsdp_state_dict_type: FULL_STATE_DICT), or run on "
    "more than one process with FULL_SHARD / SHARD_GRAD_OP."
)

# (the text the source prints, the fix)
REFUSALS: tuple[tuple[str, str], ...] = (
    ("This is not supported with FSDP2, please set to a `bool`", _FSDP2_STRATEGY),
    (
        "This is not supported with FSDP1, please set to a `str`",
        "FSDP1 takes a sharding strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD), not true/false: set "
        "fsdp_sharding_strategy: FULL_SHARD in the accelerate config, or set fsdp_version: 2 to keep the boolean.",
    ),
    (
        "forward_prefetch is not yet implemented in FSDP2",
        "Remove fsdp_forward_prefetch from the accelerate config (or set it false) under fsdp_version: 2, or use "
        "fsdp_version: 1 to keep it.",
    ),
    (
        "`activation_checkpointing_offload=True` requires `fsdp_version=2`",
        "Offloading activation checkpoints is FSDP2's: set fsdp_version: 2, or drop activation_checkpointing_offload.",
    ),
    (
        "`activation_checkpointing_offload=True` requires `activation_checkpointing=True`",
        "Turn on fsdp_activation_checkpointing too, or drop activation_checkpointing_offload.",
    ),
    (
        "FSDP2 does not support LOCAL_STATE_DICT",
        "Set fsdp_state_dict_type to SHARDED_STATE_DICT (fast, one file per rank) or FULL_STATE_DICT (one file) in "
        "the accelerate config (or TrainingArguments' fsdp_config).",
    ),
    (
        "must be an instance of `torch.distributed.fsdp.OffloadPolicy` in FSDP2",
        "Under FSDP2 pass cpu_offload=torch.distributed.fsdp.CPUOffloadPolicy() (or fsdp_offload_params: true in the "
        "accelerate config), not FSDP1's CPUOffload(...).",
    ),
    (
        "must be an instance of `torch.distributed.fsdp.CPUOffload` in FSDP1",
        "Under FSDP1 pass cpu_offload=torch.distributed.fsdp.CPUOffload(offload_params=True) (or fsdp_offload_params: "
        "true in the accelerate config), not FSDP2's OffloadPolicy.",
    ),
    # accelerate's ParallelismConfig: context parallelism is FSDP2's
    (
        "Using `cp_size>1` requires FSDP2, but the provided `fsdp_plugin` is using FSDP1",
        "Context parallelism (cp_size > 1) runs on FSDP2: set fsdp_version: 2 in the accelerate config "
        "(FullyShardedDataParallelPlugin(fsdp_version=2)), or set cp_size to 1.",
    ),
    (
        "specified in the `parallelism_config`, but no `fsdp_plugin` was provided",
        "Context parallelism (cp_size > 1) needs FSDP2 configured too: add an FSDP plugin with fsdp_version: 2 "
        "(accelerate config, or Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin(fsdp_version=2))), or set cp_size "
        "to 1.",
    ),
    (
        "You cannot use `--use_parallelism_config` without `--use_fsdp` and `--fsdp_version=2`",
        "accelerate launch --use_parallelism_config needs --use_fsdp --fsdp_version 2 on the same command line (or "
        "in the accelerate config).",
    ),
    (
        "When using FSDP2, a model and optimizer must be passed together to `Accelerator.prepare()`",
        "FSDP2 replaces the model's parameters, so the optimizer built on them must be prepared in the same call: "
        "model, optimizer = accelerator.prepare(model, optimizer) (the dataloaders and scheduler may come along).",
    ),
    (
        "Only one model is supported when using FSDP2",
        "Under FSDP2 accelerate prepares one model, together with its optimizer: pass only the trained model and "
        "its optimizer to accelerator.prepare(), and keep a second (frozen) model out of it (move it to "
        "accelerator.device yourself, or shard it with torch's fully_shard).",
    ),
    (
        "FSDP2 preparation should be done via `accelerate.prepare()`",
        "Under FSDP2 the model is wrapped by accelerator.prepare(model, optimizer), not prepare_model(): call "
        "prepare with both.",
    ),
    (
        "When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`",
        "Loading the weights on rank 0 only needs them broadcast to the others: pass --fsdp_sync_module_states true "
        "with --fsdp_cpu_ram_efficient_loading true (or fsdp_sync_module_states: true in the accelerate config).",
    ),
    # transformers/training_args.py: the fsdp= options against fsdp_config's version
    (
        "is only available with FSDP1. Set `fsdp_config['version'] = 1`",
        "Under FSDP2 the Trainer takes fsdp=True (or full_shard / shard_grad_op) and the rest from fsdp_config: drop "
        'the FSDP1-only option from --fsdp (hybrid_shard, no_shard, ...), or set fsdp_config {"version": 1} to keep '
        "it (FSDP1 is deprecated).",
    ),
    (
        "Unknown `fsdp` option:",
        "--fsdp takes full_shard, shard_grad_op, hybrid_shard, hybrid_shard_zero2, no_shard, offload and auto_wrap "
        "(or True with the rest in fsdp_config): check the spelling of the option the message names.",
    ),
    (
        "Passing `optimizers` is not allowed if PyTorch FSDP is enabled",
        "With FSDP the Trainer builds the optimizer after wrapping the model: drop optimizers=(...) from Trainer(...) "
        "and choose it with --optim / --learning_rate, or subclass Trainer and override create_optimizer_and_scheduler "
        "(create_optimizer) to build your own on self.model.",
    ),
    (
        "save_only_model option is not compatible with FSDP state dict type 'SHARDED_STATE_DICT'",
        "Sharded FSDP checkpoints always carry the optimizer shards: drop --save_only_model, or set "
        'fsdp_config {"state_dict_type": "FULL_STATE_DICT"} to save the weights alone.',
    ),
    # lightning strategies/fsdp.py, fabric/strategies/fsdp.py, model_parallel.py: the FSDP strategy's own rules
    (
        "does not seem to reference any FSDP parameters",
        "Create the optimizer after the model is wrapped: in Lightning, build it in configure_optimizers() from "
        "self.parameters() (or self.trainer.model.parameters()); in Fabric, call fabric.setup_module(model) first, "
        "then create the optimizer and fabric.setup_optimizers(optimizer).",
    ),
    (
        "The FSDP strategy can only work with the `FSDPPrecision` plugin",
        'Pass the precision as Trainer(precision="bf16-mixed") (or Fabric(precision=...)) and let the FSDP strategy '
        "build its FSDPPrecision, instead of another precision plugin in plugins=[...].",
    ),
    (
        "`FSDPStrategy(process_group=..., device_mesh=...)` are mutually exclusive",
        "Give FSDPStrategy one of process_group= and device_mesh= (a device_mesh for hybrid sharding), not both.",
    ),
    (
        "Gradient clipping with FSDP is only possible if the module passed to",
        "Clip the gradients of the wrapped model: fabric.clip_gradients(model, optimizer, max_norm=...) with the module "
        "fabric.setup() returned (not the original one).",
    ),
    (
        "only supports the new FSDP2 APIs in PyTorch >= 2.4",
        "ModelParallelStrategy shards with FSDP2's fully_shard: in parallelize_fn use "
        "torch.distributed.fsdp.fully_shard (torch >= 2.4) instead of wrapping modules in FullyShardedDataParallel, "
        "or use FSDPStrategy for FSDP1.",
    ),
    (
        "The hybrid sharding strategy requires you to pass at least one of the parameters",
        "Hybrid sharding shards within a node and replicates across nodes, so it needs the groups: pass "
        "FSDPStrategy(sharding_strategy='HYBRID_SHARD', auto_wrap_policy={TransformerBlock}) or a device_mesh=(nodes, "
        "GPUs per node) (or process_group=(shard_group, replicate_group)).",
    ),
    (
        "You cannot set both `activation_checkpointing` and `activation_checkpointing_policy`",
        "Pass only FSDPStrategy(activation_checkpointing_policy={TransformerBlock}) (the older activation_checkpointing= "
        "says the same thing).",
    ),
    # transformers/training_args.py, trainer.py: fsdp_config values and FSDP in a run of one process
    (
        "`auto_wrap_policy` must be one of",
        "Set fsdp_config's auto_wrap_policy to TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or NO_WRAP (the message lists "
        "this release's names).",
    ),
    (
        "Using fsdp only works in distributed training",
        "FSDP shards the model over several processes: start the script with a launcher, one process per GPU "
        "(torchrun --nproc_per_node N train.py ... or accelerate launch), or drop --fsdp for a run on one GPU.",
    ),
    # accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin: values of its own fields
    (
        "Invalid auto wrap policy:",
        "Set fsdp_auto_wrap_policy to TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or NO_WRAP in the accelerate config.",
    ),
    (
        "`min_num_params` must be an integer",
        "With SIZE_BASED_WRAP give fsdp_min_num_params as an integer (e.g. 100000000), not a string or a float.",
    ),
    (
        "Invalid mixed precision policy:",
        "mixed_precision_policy takes a dict with param_dtype, reduce_dtype and buffer_dtype, each 'fp32', 'fp16' or "
        "'bf16' (or torch dtypes): fix the key or value the message names.",
    ),
    (
        "Invalid mixed precision:",
        "The FSDP plugin's mixed precision takes no, fp16 or bf16 (fp8 goes through accelerate's FP8 recipe): fix the "
        "value the message names (--mixed_precision, or fsdp_config's mixed precision).",
    ),
    (
        "mixed_precision_policy must be an instance of",
        "Under FSDP2 pass torch.distributed.fsdp.MixedPrecisionPolicy(...), under FSDP1 "
        "torch.distributed.fsdp.MixedPrecision(...) (or a dict accelerate converts).",
    ),
    (
        "`accelerate` + `MS-AMP` + `FSDP` is not supported",
        "accelerate runs MS-AMP under DeepSpeed or DDP only: switch FP8 to Transformer Engine or torchao "
        "(fp8_backend: te / ao) with FSDP, or use DeepSpeed with MS-AMP.",
    ),
    (
        "torchao with FSDP2 and cpu_ram_efficient_loading is not supported",
        "Set fsdp_cpu_ram_efficient_loading: false in the accelerate config to train FP8 with torchao under FSDP2.",
    ),
    (
        "(FSDP's own activation checkpointing) and the",
        "Keep one activation checkpointing: fsdp_config['activation_checkpointing'] (FSDP's, preferred with FSDP) and "
        "drop --activation_checkpointing / gradient_checkpointing from the training arguments.",
    ),
    # torch/distributed/fsdp/_runtime_utils.py _lazy_init: the optimizer run in backward (_apply_optimizer_in_backward)
    (
        "FSDP optimizer in backward only supported with use_orig_params=True",
        "Wrap with FSDP(model, use_orig_params=True) to run the optimizer in the backward pass "
        "(torch.distributed.optim._apply_optimizer_in_backward), or step a normal optimizer after backward.",
    ),
    # fsdp/_state_dict_utils.py: a sharded or local state dict of an FSDP that does not shard
    ("can only be used when parameters are flatten and sharded", _NOT_SHARDED),
    ("can only be called when parameters are flattened and sharded", _NOT_SHARDED),
    # distributed/checkpoint/state_dict.py _verify_options: StateDictOptions that need each other
    (
        "full_state_dict must be True when broadcast_from_rank0 is True",
        "broadcast_from_rank0 sends rank 0's full state dict to the others: pass StateDictOptions("
        "full_state_dict=True, broadcast_from_rank0=True) (and load the full checkpoint on rank 0 only), or drop "
        "broadcast_from_rank0 to load a sharded (DCP) state dict on every rank.",
    ),
    # torch/distributed/fsdp/_optim_utils.py: a DeviceMesh-built FSDP (HSDP, FSDP + TP) asked for a local state dict
    (
        "DeviceMesh is not compatible with LOCAL_STATE_DICT",
        "An FSDP built on a device_mesh keeps DTensor shards, which LOCAL_STATE_DICT cannot hold: save and load with "
        "StateDictType.SHARDED_STATE_DICT (FSDP.set_state_dict_type(model, StateDictType.SHARDED_STATE_DICT); "
        "accelerate's fsdp_state_dict_type: SHARDED_STATE_DICT), or use torch.distributed.checkpoint.state_dict's "
        "get_state_dict / set_state_dict.",
    ),
    # fsdp/_unshard_param_utils.py: summon_full_params options that do not go together
    (
        "offload_to_cpu=True and NO_SHARD is not supported yet",
        "Under NO_SHARD the parameters are already whole on every rank: call summon_full_params(model) without "
        "offload_to_cpu=True (or shard with FULL_SHARD / SHARD_GRAD_OP to keep it).",
    ),
    (
        "writeback=True and rank0_only=True is not supported yet",
        "summon_full_params(rank0_only=True) gives the full parameters to rank 0 only, so they cannot be written "
        "back: pass writeback=False with rank0_only=True, or rank0_only=False to modify the parameters.",
    ),
    # fsdp/_fully_shard/_fully_shard.py, _fsdp_init.py: FSDP2's reshard_after_forward
    (
        "reshard_after_forward should be a bool",
        "fully_shard(module, reshard_after_forward=True) (FSDP1's FULL_SHARD) or False (SHARD_GRAD_OP), or an int "
        "that divides the shard group's size: not a ShardingStrategy or a string left from FSDP1 code.",
    ),
    (
        "If passing reshard_after_forward as an int, it should be a factor of",
        "An int reshard_after_forward reshards to a group of that many ranks, which must divide the mesh's shard "
        "size (the world size for a 1-D mesh): pick a divisor such as the GPUs per node, or pass True / False.",
    ),
    # fsdp/_init_utils.py: the older and newer ways to keep modules out of FSDP
    (
        "Cannot pass both ignored_modules and ignored_states at the same time",
        "Pass the modules (or parameters) to keep out of FSDP once, as ignored_states=[...] (ignored_modules is its "
        "older name); a framework's own ignored_modules (accelerate's, Lightning's) counts as the one.",
    ),
    # accelerate/utils/fsdp_utils.py load_fsdp_model: a full state dict is read on rank 0 and broadcast
    (
        "Set the `sync_module_states` flag to `True` so that model states are synced across processes",
        "With fsdp_state_dict_type: FULL_STATE_DICT accelerate loads the weights on rank 0 only and FSDP1 broadcasts "
        "them: set fsdp_sync_module_states: true in the accelerate config (FullyShardedDataParallelPlugin("
        "sync_module_states=True)), or save and load with SHARDED_STATE_DICT.",
    ),
    # distributed/checkpoint/state_dict_saver.py async_save: the staging copy goes through a CPU process group
    (
        "A CPU backend must be enabled for async save",
        "dcp.async_save needs a CPU (gloo) backend besides NCCL: initialize the process group with "
        "dist.init_process_group(backend='cpu:gloo,cuda:nccl'), or pass async_save a gloo process_group "
        "(dist.new_group(backend='gloo')), or save with dcp.save.",
    ),
    # lightning/fabric/strategies/fsdp.py, xla_fsdp.py, model_parallel.py: the order model and optimizer are set up in
    (
        "(use_orig_params=False)` but this is not supported when",
        "Set up the model and its optimizer separately (model = fabric.setup_module(model); optimizer = "
        "fabric.setup_optimizers(optimizer) with the optimizer made after the model's setup), or keep "
        "use_orig_params=True (the default) to set them up jointly.",
    ),
    (
        "does not support setting up the module and optimizer(s) independently",
        "This strategy sets them up together: model, optimizer = fabric.setup(model, optimizer) (one call).",
    ),
    (
        "does not support the joint setup of module and optimizer(s)",
        "Set them up in order: model = fabric.setup_module(model); then create the optimizer from model.parameters()"
        " and call optimizer = fabric.setup_optimizers(optimizer).",
    ),
)


FSDP_CONFIG_MISMATCH = Recogniser(
    kind="fsdp_config_mismatch",
    title="FSDP settings that do not fit together or FSDP's version",
    anchors=tuple(anchor for anchor, _ in REFUSALS),
    templates=(
        # accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__ / validate
        "accelerate:reshard-after-forward-set-to-this",
        "accelerate:reshard-after-forward-set-to-this-2",
        "accelerate:forward-prefetch-is-not-yet-implemented",
        "accelerate:activation-checkpointing-offload-true-requires-fsdp",
        "accelerate:activation-checkpointing-offload-true-requires-activation",
        "accelerate:fsdp2-does-not-support-local-state",
        "accelerate:cpu-offload-must-be-an-instance",
        "accelerate:cpu-offload-must-be-an-instance-2",
        # accelerate/accelerator.py prepare / prepare_model under FSDP2
        "accelerate:when-using-fsdp2-model-and-optimizer",
        "accelerate:only-one-model-is-supported-when",
        "accelerate:fsdp2-preparation-should-be-done-via",
        "accelerate:when-using-fsdp-cpu-ram-efficient",  # utils/launch.py: accelerate launch's FSDP flags
        "accelerate:using-cp-size-requires-fsdp2-but",  # accelerator.py / ParallelismConfig: context parallelism
        "accelerate:cp-size-specified-in-the-parallelism",
        "accelerate:you-cannot-use-use-parallelism-config",
        # transformers/training_args.py: --fsdp options against fsdp_config's version
        "transformers:fsdp-is-only-available-with-fsdp1",
        "transformers:unknown-fsdp-option",
        # lightning: the FSDP and model-parallel strategies
        "lightning:the-optimizer-does-not-seem-to",
        "lightning:the-optimizer-does-not-seem-to-2",
        "lightning:the-fsdp-strategy-can-only-work",
        "lightning:the-arguments-fsdpstrategy-process-group-device",
        "lightning:gradient-clipping-with-fsdp-is-only",
        "lightning:found-modules-that-are-wrapped-with",
        # transformers/trainer.py: the Trainer's own FSDP checks
        "transformers:passing-optimizers-is-not-allowed-if",
        "transformers:save-only-model-option-is-not",
        "transformers:fsdp-config-activation-checkpointing-fsdp-own",
        # lightning fabric/strategies/fsdp.py; transformers training_args.py / trainer.py; accelerate's FSDP plugin
        "lightning:the-hybrid-sharding-strategy-requires-you",
        "lightning:you-cannot-set-both-activation-checkpointing",
        "transformers:auto-wrap-policy-must-be-one",
        "transformers:using-fsdp-only-works-in-distributed",
        "accelerate:invalid-auto-wrap-policy-must-be",
        "accelerate:min-num-params-must-be-an",
        "accelerate:invalid-mixed-precision-policy-must-be",
        "accelerate:invalid-mixed-precision-must-be-one",
        "accelerate:mixed-precision-policy-must-be-an",
        "accelerate:accelerate-ms-amp-fsdp-is-not",
        "accelerate:torchao-with-fsdp2-and-cpu-ram",
        # torch's own FSDP and distributed-checkpoint options (fsdp/_runtime_utils.py, _state_dict_utils.py,
        # distributed/checkpoint/state_dict.py)
        "torch:fsdp-optimizer-in-backward-only-supported",
        "torch:local-state-dict-can-only-be",
        "torch:sharded-state-dict-can-only-be",
        "torch:load-sharded-state-dict-can-only",
        "torch:full-state-dict-must-be-true",
        "torch:found-state-dict-type-local-state",  # fsdp/_optim_utils.py: a DeviceMesh FSDP's local state dict
        "torch:offload-to-cpu-true-and-no",  # fsdp/_unshard_param_utils.py: summon_full_params options
        "torch:writeback-true-and-rank0-only-true",
        "torch:reshard-after-forward-should-be-bool",  # fsdp/_fully_shard: FSDP2's reshard_after_forward
        "torch:reshard-after-forward-should-be-bool-2",
        "torch:if-passing-reshard-after-forward-as",
        "torch:cannot-pass-both-ignored-modules-and",  # fsdp/_init_utils.py
        "torch:cpu-backend-must-be-enabled-for",  # distributed/checkpoint/state_dict_saver.py async_save
        "accelerate:set-the-sync-module-states-flag",  # accelerate/utils/fsdp_utils.py load_fsdp_model
        "lightning:you-set-use-orig-params-false",
        "lightning:the-does-not-support-setting-up",
        "lightning:the-does-not-support-the-joint",
    ),
    facts=(refusal_pattern(REFUSALS, after=200),),
    describe=describe_refusal(REFUSALS, "the FSDP settings are refused", message="refusal", limit=200),
)

RECOGNISERS = (FSDP_CONFIG_MISMATCH,)
