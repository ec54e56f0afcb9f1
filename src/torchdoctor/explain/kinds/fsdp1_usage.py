"""FSDP1 (FullyShardedDataParallel) refusing how it was wrapped or called.

Ignored modules, hybrid sharding's groups, frozen and trainable parameters in one unit, summon_full_params,
state-dict settings, optimizer state.

``torch/distributed/fsdp/`` (``_init_utils.py``, ``_wrap_utils.py``, ``wrap.py``, ``_unshard_param_utils.py``,
``fully_sharded_data_parallel.py``, ``_flat_param.py``, ``_optim_utils.py``), torch 1.12-2.13. Each message names
its own mistake: certain once a real log shows it; the optimizer state missing on some ranks is printed for more
than one cause and stays likely. Wrap policies naming absent classes and flat parameters of mixed dtypes are
``fsdp_wrap_config`` (kinds/checkpoint.py); state-dict types against the sharding strategy, ``fsdp_config_mismatch``.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_IGNORED = (
    "ignored_modules takes a list of the model's submodules (ignored_modules=[model.lm_head]), not the module "
    "itself, names or parameters (ignored_states= takes parameters or modules, all of one kind), and none already "
    "wrapped in FSDP."
)

_HYBRID = (
    "HYBRID_SHARD / _HYBRID_SHARD_ZERO2 need two groups: pass device_mesh=init_device_mesh('cuda', (nodes, "
    "gpus_per_node), mesh_dim_names=('replicate', 'shard')) or process_group=(shard_group, replicate_group) (a "
    "tuple) to every FSDP wrap, manual ones included, or wrap with an auto_wrap_policy from one root call."
)

_UNSHARD = (
    "FSDP.summon_full_params gathers whole parameters outside training steps only: call it after backward and "
    "optimizer.step() (to read or save weights), once at a time (not nested, not inside the model's forward or a "
    "hook), or use the state-dict APIs to read full weights."
)

_STATE_DICT_TYPES = (
    "Set the state-dict type once on the root, for every FSDP module together: with "
    "FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=True, "
    "rank0_only=True)): (config classes matching the type: FullStateDictConfig / ShardedStateDictConfig / "
    "LocalStateDictConfig, and FullOptimStateDictConfig / ShardedOptimStateDictConfig), rather than on some "
    "submodules, or use get_state_dict / set_state_dict from torch.distributed.checkpoint.state_dict."
)

_OPTIM_MISSING = (
    "FSDP's optimizer state dict is gathered from every rank, and some rank lacks state rank 0 has (the message "
    "names the parameters): optimizers create state lazily at their first step, so a rank whose parameters got no "
    "gradient yet, a rank with another optimizer or parameter groups, or a checkpoint taken before every rank "
    "stepped gives this. Build the same optimizer on every rank and save after a step every rank took (or use "
    "torch.distributed.checkpoint.state_dict.get_state_dict, which initialises missing state)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("`ignored_modules` should be an iterable of `torch.nn.Module`s", _IGNORED),
    ("ignored_modules expects nn.Module list elements but got types", _IGNORED),
    ("ignored_states expects all nn.Parameter or all nn.Module list elements but got types", _IGNORED),
    ("`ignored_modules` should not include FSDP modules", _IGNORED),
    ("requires explicit specification of process group or device_mesh.", _HYBRID),
    (
        "Expected process_group to be passed in as either None or Tuple[dist.ProcessGroup, dist.ProcessGroup]",
        _HYBRID,
    ),
    (
        "FSDP does not support wrapping such modules when use_orig_params=False.",
        "One FSDP unit holds frozen (requires_grad=False) and trainable parameters, which FSDP's flat parameter "
        "cannot mix unless use_orig_params=True: pass use_orig_params=True (accelerate: fsdp_use_orig_params: true), "
        "or wrap the frozen part in its own FSDP unit (a LoRA base model: a wrap policy that puts the trainable "
        "adapters in separate units, peft's fsdp_auto_wrap_policy).",
    ),
    (
        "Unable to call `reset_parameters()` for module on meta device with error",
        "FSDP materialises a module built on the meta device by calling its reset_parameters(), which this module "
        "lacks or fails in: give custom modules a reset_parameters() that initialises their own parameters, or pass "
        "param_init_fn=lambda m: m.to_empty(device=torch.cuda.current_device(), recurse=False) and load or "
        "initialise the weights afterwards.",
    ),
    ("Cannot manually unshard parameters during forward/backward", _UNSHARD),
    ("Cannot manually unshard parameters when already unsharding parameters", _UNSHARD),
    ("All FSDP modules should have the same state_dict_type.", _STATE_DICT_TYPES),
    ("All FSDP modules must have the same type of state_dict_config.", _STATE_DICT_TYPES),
    ("All FSDP modules must have the same type of optim_state_dict_config.", _STATE_DICT_TYPES),
    ("All FSDP modules must have the same state dict settings.", _STATE_DICT_TYPES),
    ("Expected state_dict_config of type", _STATE_DICT_TYPES),
    ("Expected optim_state_dict_config of type", _STATE_DICT_TYPES),
    (
        "Expected optim_state_key_type to be PARAM_NAME or PARAM_ID",
        "FSDP.rekey_optim_state_dict takes OptimStateKeyType.PARAM_NAME or OptimStateKeyType.PARAM_ID.",
    ),
    (
        "The communication hook must be callable but got",
        "FSDP's register_comm_hook(state, hook) takes the state first and the hook function second: "
        "model.register_comm_hook(None, default_hooks.allreduce_hook) for a hook without state.",
    ),
    (
        "You are already within an autowrap context and we currently do not supported nested autowrap.",
        "enable_wrap(...) contexts cannot be nested: open one `with enable_wrap(wrapper_cls=FSDP, ...):` and call "
        "wrap() inside it.",
    ),
    (
        "The lambda_fn passed to CustomPolicy should return False/True or a kwarg dict",
        "CustomPolicy(lambda_fn) calls lambda_fn(module) and needs True / False (wrap or not) or a dict of FSDP "
        "keyword arguments for that module; return one of those (not None or a module).",
    ),
    (
        "FSDP does not support changing the parameters between forward and backward for",
        "A parameter of an FSDP unit was replaced or reassigned between forward and backward (param.data = ..., a "
        "new nn.Parameter, weight tying set up after wrapping): make such changes before FSDP wraps the model, or "
        "outside the step (after optimizer.step()).",
    ),
    (
        "Changing shared parameters is not supported yet",
        "A parameter shared by two modules (tied weights) was replaced after FSDP wrapped them: tie the weights "
        "before wrapping, and put both users in the same FSDP unit.",
    ),
    (
        "FSDP will not all-gather parameters for containers that do not implement forward",
        "An FSDP unit was made of a container without forward (nn.ModuleList / ModuleDict): its parameters are never "
        "gathered. Wrap each block inside it instead (an auto_wrap_policy on the block class).",
    ),
    (
        "Dataclasses used as FSDP module inputs/outputs must support dataclasses.replace()",
        "FSDP rebuilds dataclasses passed into or out of its modules with dataclasses.replace(): make the "
        "dataclass's __init__ accept all its fields (no init=False fields without defaults), or return a dict or "
        "a tuple.",
    ),
    (
        "FSDP currently requires each rank to have at least the optimizer states needed by rank 0's optimizer",
        _OPTIM_MISSING,
    ),
    (
        '`optim_state_dict` must have the keys "state"to be a valid optimizer state dict',
        "FSDP.optim_state_dict_to_load(model, optim, optim_state_dict) takes an optimizer's state dict (keys 'state' "
        "and 'param_groups', as FSDP.optim_state_dict saved it): the argument passed was something else (the "
        "model's state dict, or the arguments in the order of an older release).",
    ),
    (
        "Tensor optimizer state does not have same shape as its parameter:",
        "The optimizer state being loaded belongs to parameters of another shape: a checkpoint of another model or "
        "of another release of it (a resized vocabulary, different layers). Load the optimizer state that was saved "
        "with this model, or start the optimizer afresh.",
    ),
)

FSDP1_USAGE = refusal_recogniser(
    kind="fsdp1_usage",
    title="FSDP (FullyShardedDataParallel) refused how it was wrapped or called",
    refusals=REFUSALS,
    templates=(
        "torch:ignored-modules-should-be-an-iterable",
        "torch:ignored-modules-expects-nn-module-list",
        "torch:ignored-states-expects-all-nn-parameter",
        "torch:ignored-modules-should-not-include-fsdp",
        "torch:manual-wrapping-with-requires-explicit-specification",
        "torch:expected-process-group-to-be-passed",
        "torch:fsdp-does-not-support-wrapping-such",
        "torch:unable-to-call-reset-parameters-for",
        "torch:cannot-manually-unshard-parameters-during-forward",
        "torch:cannot-manually-unshard-parameters-when-already",
        "torch:all-fsdp-modules-should-have-the",
        "torch:all-fsdp-modules-must-have-the",
        "torch:all-fsdp-modules-must-have-the-2",
        "torch:all-fsdp-modules-must-have-the-3",
        "torch:expected-state-dict-config-of-type",
        "torch:expected-optim-state-dict-config-of",
        "torch:expected-optim-state-key-type-to",
        "torch:the-communication-hook-must-be-callable",
        "torch:you-are-already-within-an-autowrap",
        "torch:the-lambda-fn-passed-to-custompolicy",
        "torch:fsdp-does-not-support-changing-the",
        "torch:changing-shared-parameters-is-not-supported",
        "torch:fsdp-will-not-all-gather-parameters",
        "torch:failed-to-reconstruct-dataclass-via-dataclasses",
        "torch:fsdp-currently-requires-each-rank-to",
        "torch:optim-state-dict-must-have-the",
        "torch:tensor-optimizer-state-does-not-have",
    ),
    several=(
        "FSDP currently requires each rank to have at least the optimizer states needed by rank 0's optimizer",
    ),
)

RECOGNISERS = (FSDP1_USAGE,)
