"""A DDP, FSDP or accelerate-prepared model built or used in a way its wrapper refuses, named by the wrapper's own check.

The checks are torch's (``torch/nn/parallel/distributed.py``: ``DistributedDataParallel.__init__``;
``torch/distributed/fsdp/_init_utils.py``, ``fully_sharded_data_parallel.py``, ``wrap.py``;
``fsdp/_fully_shard/_fsdp_init.py`` and ``_fully_shard.py`` for FSDP2's ``fully_shard``; FSDP's run-time checks
in ``fsdp/_runtime_utils.py``; ``distributed/optim/zero_redundancy_optimizer.py``; accelerate's prepared model in
``accelerate/utils/operations.py``). Each names its own cause, so
the finding is certain. (Wrapping policy and flat-parameter rules are ``fsdp_wrap_config``; a mesh that
does not fit ``device_mesh_config``.)
"""

from __future__ import annotations

from torchdoctor.explain.kinds import empty_params
from torchdoctor.explain.kinds.refusal_table import describe_refusal
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# (fact, what went wrong, what to do instead)
_CLASSES = (
    (
        "scalar_param",
        "FSDP was given a 0-dimensional (scalar) parameter",
        "FSDP flattens and shards every parameter along dim 0, which a scalar does not have: declare it as a 1-D "
        "tensor of one element, nn.Parameter(torch.tensor([1.0])) instead of nn.Parameter(torch.tensor(1.0)) "
        "(a learnable temperature or scale), reading it as p[0]; or keep the module that holds it out of FSDP "
        "(ignored_modules= / ignored_states=).",
    ),
    (
        "not_root",
        "an FSDP method that only the outermost FSDP module has was called on an inner one",
        "no_sync(), clip_grad_norm_() and register_comm_hook() act on the whole model: call them on the root "
        "FSDP instance, the model you wrapped last (model = FSDP(model, auto_wrap_policy=...); "
        "model.clip_grad_norm_(1.0)), not on a submodule the auto-wrap policy wrapped.",
    ),
    (
        "module_devices",
        "FSDP was given a module whose parameters are not on one accelerator",
        "FSDP shards from one GPU per rank: build the model on the meta device or CPU and pass "
        "device_id=torch.cuda.current_device() after torch.cuda.set_device(LOCAL_RANK) (FSDP moves it), or move "
        "the whole model to that GPU first; a model split over GPUs (device_map, manual .to('cuda:1')) cannot be "
        "wrapped. Without any GPU, FSDP cannot run: use DDP with gloo on CPU.",
    ),
    (
        "group_and_mesh",
        "the wrapper was given both a process_group and a device_mesh",
        "Pass one: device_mesh=mesh (or mesh['dp'] for the data-parallel slice of a 2-D mesh) or "
        "process_group=group, not both.",
    ),
    (
        "deepcopy",
        "a model wrapped by FSDP was deep-copied",
        "FSDP modules cannot be copied with copy.deepcopy (an EMA or teacher copy, a framework that clones the "
        "model): make the copy before wrapping (ema = copy.deepcopy(model); then fully_shard(model)), or build a "
        "second model and load model.state_dict() into it.",
    ),
    (
        "ddp_lazy",
        "DDP was given a module with uninitialized (lazy) parameters",
        "Lazy modules (nn.LazyLinear, nn.LazyConv2d) get their shapes at the first forward: run one forward pass "
        "on a dummy batch of the right shape before wrapping, model(dummy); model = DistributedDataParallel(model, "
        "device_ids=[local_rank]).",
    ),
    (
        "ddp_device_ids",
        "DDP was given more than one device id",
        "DDP is one process per GPU: device_ids=[local_rank] (one element) with "
        "local_rank = int(os.environ['LOCAL_RANK']), and torchrun --nproc_per_node=<GPUs> to start one process "
        "each; device_ids=None for a CPU or multi-device module.",
    ),
    (
        "wrapped_twice",
        "a module was wrapped by FSDP twice",
        "Wrap each module once: either an auto_wrap_policy or manual FSDP(...) calls on submodules, not both on "
        "the same layers; with FSDP2, call fully_shard on each layer and then on the root once. A model loaded "
        "from a checkpoint of an already wrapped model should be rebuilt unwrapped first.",
    ),
    (
        "ignored_root",
        "FSDP was told to ignore the module it wraps",
        "ignored_modules / ignored_states list submodules to keep out of FSDP, not the model passed to FSDP "
        "itself: list its children instead, or leave that model unwrapped.",
    ),
    (
        "orig_params",
        "FSDP modules of one model were built with different use_orig_params",
        "Every FSDP instance of one model needs the same use_orig_params: pass it once through the root "
        "FullyShardedDataParallel(..., use_orig_params=True) with an auto_wrap_policy, or give the same value to "
        "each manual wrap (torch.compile and parameter groups by name need True).",
    ),
    (
        "fsdp_no_gpu",
        "FSDP found no GPU to run on: torch sees none in this process",
        "FSDP (FullyShardedDataParallel) computes on one GPU per rank. If the machine has GPUs, this process does "
        "not see them: python -c 'import torch; print(torch.cuda.is_available())' (False: a CPU-only torch build, "
        "CUDA_VISIBLE_DEVICES empty or wrong, a container started without --gpus). On a machine without GPUs, "
        "train with DDP over gloo instead.",
    ),
    (
        "params_moved",
        "FSDP found the parameters it manages off the device it computes on (the model was moved after wrapping, "
        "or wrapped on the CPU without device_id)",
        "Let FSDP place the model once: FSDP(model, device_id=torch.cuda.current_device()) after "
        "torch.cuda.set_device(LOCAL_RANK) (or model.to(LOCAL_RANK) before wrapping), and do not call .cpu() / "
        ".to() / .cuda() on the wrapped model afterwards (an EMA or evaluation helper that moves it back is the "
        "usual culprit).",
    ),
    (
        "offload_moved",
        "FSDP's parameter CPU offloading found its parameters moved off the CPU",
        "With CPUOffload(offload_params=True) FSDP keeps the sharded parameters on the CPU itself: pass the model "
        "to FSDP on the CPU with device_id=torch.cuda.current_device() and do not call model.cuda() / .to(device) "
        "on it, before or after wrapping (accelerate: leave device placement to prepare()).",
    ),
    (
        "double_backward",
        "FSDP was asked for gradients of gradients (backward with create_graph=True)",
        "FSDP (FullyShardedDataParallel) reduces gradients as plain tensors and cannot build a graph through them: "
        "a gradient penalty or any torch.autograd.grad(..., create_graph=True) needs DDP (or no wrapper) for the "
        "module it differentiates twice; or drop create_graph=True if the second-order term is not needed.",
    ),
    (
        "ddp_pickle",
        "a DDP model built on a process group other than the default one was pickled (torch.save of the wrapper, "
        "copy.deepcopy, or handing it to another process)",
        "Save and copy the model inside the wrapper: torch.save(ddp_model.module.state_dict(), path), "
        "copy.deepcopy(ddp_model.module); or wrap with DDP on the default group (no process_group=) when the "
        "wrapper itself has to be pickled.",
    ),
    (
        "accelerate_pickle",
        "a model prepared by accelerate with mixed precision was pickled (torch.save of the model, copy.deepcopy, "
        "or handing it to another process)",
        "accelerate wraps the prepared model's forward for autocast, and that wrapper cannot be pickled: save and "
        "copy the model it wraps, accelerator.unwrap_model(model) (torch.save(accelerator.unwrap_model(model)."
        "state_dict(), path), or accelerator.save_model(model, dir)); make a copy (an EMA, a teacher) before "
        "accelerator.prepare().",
    ),
    (
        "comm_hook_hybrid",
        "an FSDP communication hook was registered under a hybrid sharding strategy",
        "FSDP's register_comm_hook works with FULL_SHARD, SHARD_GRAD_OP and NO_SHARD only: remove the hook under "
        "HYBRID_SHARD / _HYBRID_SHARD_ZERO2, or choose one of those strategies to keep it.",
    ),
    (
        "comm_hook_twice",
        "a second communication hook was registered on the same DDP or FSDP model",
        "DDP and FSDP take one communication hook per model: call model.register_comm_hook(state, hook) once (on "
        "the root FSDP instance), before the first forward; not in the training loop, nor again where a framework "
        "registered its own (Lightning's ddp_comm_hook, accelerate's comm_hook in DistributedDataParallelKwargs).",
    ),
    (
        "meta_params",
        "FSDP2 reached training with parameters still on the meta device (built under torch.device('meta') and "
        "never materialized)",
        "A model built on the meta device has no values: after fully_shard, call model.to_empty(device='cuda') and "
        "initialize them (model.reset_parameters() / init_weights() on each module, or load the checkpoint with "
        "set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True, "
        "broadcast_from_rank0=True))); with transformers, load through from_pretrained rather than from_config under "
        "a meta device context. The parameters the message lists are the ones left.",
    ),
    (
        "offload_device",
        "FSDP2 with CPU offloading (CPUOffloadPolicy) found parameters on the GPU at its first forward",
        "With offload_policy=CPUOffloadPolicy() the sharded parameters live on the CPU: do not move the model to the "
        "GPU after fully_shard (no model.to('cuda') / model.cuda()); materialize a meta model on the CPU "
        "(model.to_empty(device='cpu')) or load a CPU state dict into it, and FSDP2 copies each unit to the GPU when "
        "it runs.",
    ),
    (
        "tied_params",
        "FSDP2's fully_shard was applied so that a shared (tied) parameter falls in two FSDP groups",
        "A weight two modules share (tied input embedding and output head, weight-tied layers) must be sharded in "
        "one group: shard the modules together, fully_shard([model.embed_tokens, model.lm_head]), or leave both to "
        "the root's fully_shard(model) instead of wrapping one of them on its own; or untie them "
        "(config.tie_word_embeddings=False) before sharding.",
    ),
    (
        "zero_consolidate",
        "ZeroRedundancyOptimizer.state_dict() was called on a rank the state was not consolidated to",
        "Each rank holds only its shard of the optimizer state: call optimizer.consolidate_state_dict(to=0) on "
        "every rank (it is a collective), then optimizer.state_dict() and the save on rank 0 only.",
    ),
)

_ROW = {row[0]: row for row in _CLASSES}
_CLASSES += (
    # the same causes, as other checks of FSDP print them
    ("auto_wrap_wrapped", *_ROW["wrapped_twice"][1:]),
    ("flat_devices", *_ROW["module_devices"][1:]),
    ("scalar_optim_state", *_ROW["scalar_param"][1:]),
)


WRAPPER_USAGE = Recogniser(
    kind="wrapper_usage",
    title="a DDP or FSDP wrapper used in a way torch refuses",
    templates=(
        "torch:fsdp-doesn-support-scalar-parameters-change",
        "torch:fully-shard-doesn-support-scalar-parameters",
        "torch:no-sync-on-inner-fsdp-instances",
        "torch:clip-grad-norm-should-only-be",
        "torch:register-comm-hook-can-only-be",
        "torch:fsdp-only-supports-single-device-modules",
        "torch:fsdp-does-not-support-modules-with",
        "torch:fsdp-needs-non-cpu-accelerator-device",
        "torch:cannot-pass-both-process-group-and",
        "torch:cannot-specify-both-process-group-and",
        "torch:fsdp-does-not-support-deepcopy-please",
        "torch:modules-with-uninitialized-parameters-can-be",
        "torch:device-ids-can-only-be-none",
        "torch:child-module-is-already-wrapped-by",
        "torch:trying-to-ignore-the-top-level",
        "torch:not-all-fsdp-modules-have-the",
        # fsdp/_runtime_utils.py: lazy init without an accelerator, parameters off the compute device, parameter
        # CPU offloading with the module moved, a backward with create_graph=True
        "torch:fsdp-does-not-support-cpu-only",
        "torch:an-fsdp-managed-module-unexpectedly-has",
        "torch:an-fsdp-managed-module-with-parameter",
        "torch:fsdp-does-not-support-gradients-of",
        # nn/parallel/distributed.py __getstate__: a DDP on a non-default group pickled
        "torch:ddp-pickling-unpickling-are-only-supported",
        # fsdp/fully_sharded_data_parallel.py register_comm_hook
        "torch:communication-hook-is-not-supported-for",
        "torch:communication-hook-is-already-registered",
        # distributed/optim/zero_redundancy_optimizer.py state_dict
        "torch:optimizer-state-has-not-been-consolidated",
        # csrc/distributed/c10d/reducer.cpp register_comm_hook / register_builtin_comm_hook: DDP's hook, twice
        "torch_cpp:register-comm-hook-or-register-builtin",
        # accelerate/utils/operations.py ConvertOutputsToFp32.__getstate__: the prepared model's autocast forward
        "accelerate:cannot-pickle-prepared-model-with-automatic",
        # fsdp/_fully_shard/_fsdp_param_group.py lazy_init: a meta-device model never materialized, or a model moved
        # to the GPU under CPUOffloadPolicy; _fsdp_state.py: a tied parameter in two FSDP2 groups
        "torch:fsdp-parameters-should-be-materialized-from",
        "torch:fsdp-parameters-should-be-materialized-on",
        "torch:parameter-is-shared-with-parameter-already",
        # fsdp/_wrap_utils.py: auto-wrap over a model that already holds FSDP modules; _flat_param.py: one unit's
        # parameters on two devices; _optim_utils.py: a scalar parameter's optimizer state
        "torch:fsdp-auto-wrapping-requires-modules-to",
        "torch:must-flatten-tensors-on-the-same",
        "torch:flattening-zero-dimension-parameter-is-not",
        # torch 1.11-2.0's wordings of the offload, auto-wrap and double-backward checks; 2.0+'s _flat_param.py
        # _p_assert on a flat parameter moved off the CPU under offloading
        "torch_native:fsdp-param-on-cpu-when-offloading",
        "torch:expects-the-flatparameter-to-be-on",
        "torch_native:fsdp-not-fsdp-with-auto-wrap-policy",
        "torch_native:fsdp-gradients-that-dont-require-gradients",
    ),
    anchors=(
        "FSDP doesn't support scalar parameters",
        "fully_shard doesn't support scalar parameters",
        "`no_sync()` on inner FSDP instances is not supported",
        "`clip_grad_norm_()` should only be called on the root FSDP instance",
        "register_comm_hook can only be called on a root instance",
        "FSDP only supports single device modules but got params on",
        "FSDP does not support modules with different device types",
        "FSDP needs a non-CPU accelerator device",
        "Cannot pass both process_group and device_mesh at the same time",
        "Cannot specify both process_group and device_mesh arguments",
        "FSDP does not support deepcopy",
        "Modules with uninitialized parameters can't be used with `DistributedDataParallel`",
        "device_ids can only be None or contain a single element",
        "is already wrapped by ",
        "Trying to ignore the top-level module passed into the FSDP",
        "Not all FSDP modules have the same _use_orig_params value",
        "FSDP does not support CPU only execution",
        "An FSDP-managed module unexpectedly has parameters on",
        "An FSDP-managed module with parameter CPU offloading enabled has parameters on",
        # torch 1.11-1.13's fully_sharded_data_parallel.py and 2.0+'s _flat_param.py _p_assert: the same move
        "Expected param to be on CPU when cpu_offloading is enabled",
        "to be on CPU when parameter CPU offloading is enabled, not",
        "FSDP does not support gradients of gradients",
        "FSDP only works with gradients that don't require gradients",  # torch 1.11-1.13's wording
        "DDP Pickling/Unpickling are only supported when using DDP with the default process group",
        "Communication hook is not supported for hybrid strategies",
        "A communication hook is already registered",
        "register_comm_hook or register_builtin_comm_hook can only be called once",
        "Optimizer state has not been consolidated on this rank",
        "Cannot pickle a prepared model with automatic mixed precision",
        "FSDP parameters should be materialized from meta device before training",
        "FSDP parameters should be materialized on CPU when enabling CPU offloading",
        "is shared with a parameter already managed by another FSDP group",
        "FSDP auto wrapping requires modules to not already have FSDP applied",
        "to NOT be FullyShardedDataParallel if using an `auto_wrap_policy`",  # torch 1.13-2.0's _wrap_utils.py
        "Must flatten tensors on the same device but got both",
        "Flattening a zero-dimension parameter is not supported",
    ),
    match=R(
        r"(?P<scalar_param>(?:FSDP|fully_shard) doesn't support scalar parameters[^\n]{0,160})|"
        r"(?P<not_root>`no_sync\(\)` on inner FSDP instances is not supported|`clip_grad_norm_\(\)` should only be "
        r"called on the root FSDP instance|register_comm_hook can only be called on a root instance)|"
        r"(?P<module_devices>FSDP only supports single device modules but got params on [^\n]{1,120}|FSDP does not "
        r"support modules with different device types but got params on [^\n]{1,120}|FSDP needs a non-CPU "
        r"accelerator device, but no accelerator device is detected)|"
        r"(?P<fsdp_no_gpu>FSDP does not support CPU only execution)|"
        r"(?P<group_and_mesh>Cannot (?:pass|specify) both process_group and device_mesh)|"
        r"(?P<deepcopy>FSDP does not support deepcopy)|"
        r"(?P<ddp_lazy>Modules with uninitialized parameters can't be used with `DistributedDataParallel`)|"
        r"(?P<ddp_device_ids>device_ids can only be None or contain a single element)|"
        # the child's repr may span lines: the line that ends it names the wrapper class
        r"(?P<wrapped_twice>is already wrapped by <class '[\w.]{0,120}(?:FullyShardedDataParallel|FSDP)\w{0,40}'>)|"
        r"(?P<ignored_root>Trying to ignore the top-level module passed into the FSDP constructor)|"
        r"(?P<orig_params>Not all FSDP modules have the same _use_orig_params value)|"
        r"(?P<params_moved>An FSDP-managed module unexpectedly has parameters on [^\n]{1,120})|"
        r"(?P<offload_moved>Expected param to be on CPU when cpu_offloading is enabled|Expects the `FlatParameter` to be "
        r"on CPU when parameter CPU offloading is enabled, not [^\n]{1,60}|"
        r"An FSDP-managed module with parameter CPU offloading enabled has parameters on "
        r"[^\n]{1,120})|"
        r"(?P<double_backward>FSDP does not support gradients of gradients|FSDP only works with gradients that "
        r"don't require gradients)|"
        r"(?P<ddp_pickle>DDP Pickling/Unpickling are only supported when using DDP with the default process group)|"
        r"(?P<comm_hook_hybrid>Communication hook is not supported for hybrid strategies[^\n]{0,60})|"
        r"(?P<comm_hook_twice>A communication hook is already registered|register_comm_hook or "
        r"register_builtin_comm_hook can only be called once)|"
        r"(?P<zero_consolidate>Optimizer state has not been consolidated on this rank)|"
        r"(?P<accelerate_pickle>Cannot pickle a prepared model with automatic mixed precision)|"
        r"(?P<meta_params>FSDP parameters should be materialized from meta device before training[^\n]{0,200})|"
        r"(?P<offload_device>FSDP parameters should be materialized on CPU when enabling CPU offloading)|"
        r"(?P<tied_params>Parameter '[^'\n]{1,200}' is shared with a parameter already managed by another FSDP group)|"
        r"(?P<auto_wrap_wrapped>FSDP auto wrapping requires modules to not already have FSDP applied|to NOT be "
        r"FullyShardedDataParallel if using an `auto_wrap_policy`)|"
        r"(?P<flat_devices>Must flatten tensors on the same device but got both [^\n]{1,120})|"
        r"(?P<scalar_optim_state>Flattening a zero-dimension parameter is not supported)"
    ),
    describe=describe_refusal(_CLASSES, "a DDP or FSDP wrapper was used in a way torch refuses", limit=200),
)


def _params_outside_forward(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    empty = empty_params.describe(hits)
    if empty is not None:
        return empty[0] + on_ranks(hits), empty[1]
    said = next((str(h.facts["freed"]) for h in hits if h.facts.get("freed")), "a parameter without its data")
    return (
        f"an FSDP-wrapped model's parameter was used while it was sharded ({said}): outside the root module's "
        "forward (generate(), a submodule called directly, evaluation code) FSDP1 keeps each rank's shard and frees "
        "the full parameter" + on_ranks(hits),
        "FSDP gathers a unit's parameters only inside the forward of the FSDP module that wraps it. Call the model "
        "through its root (model(...)), or gather them around the other use: with "
        "FSDP.summon_full_params(model, writeback=False): model.generate(...) (recurse=False for the root only); "
        "with use_orig_params=True (accelerate's fsdp_use_orig_params: true) the original parameters stay "
        "registered; under FSDP2 (fully_shard) call model.unshard() first or register the method with "
        "register_fsdp_forward_method(model, 'generate'). To save or evaluate a full model, take "
        "get_model_state_dict(model, options=StateDictOptions(full_state_dict=True)) instead.",
    )


FSDP_PARAMS_OUTSIDE_FORWARD = Recogniser(
    # aten/src/ATen/native/Embedding.cpp ("'weight' must be 2-D"), aten/src/ATen/native/Resize.h (setStorage out of
    # bounds for a storage of size 0), c10/core/TensorImpl.h (data not allocated): what a parameter FSDP resharded
    # (its storage freed) prints when something uses it; only in a run with FSDP, and never certain (a library's
    # generate or save path, or an FSDP bug, prints them the same way)
    kind="fsdp_params_outside_forward",
    title="an FSDP-sharded parameter used outside the forward that gathers it",
    anchors=(
        "'weight' must be 2-D",
        "are out of bounds for storage of size ",
        "The tensor has a non-zero number of elements, but its data is not allocated yet",
        *empty_params.ANCHORS,
    ),
    templates=(
        "torch_native:embedding-weight-must-be-2d",
        "torch_native:setstorage-out-of-bounds",
        "torch_native:tensor-data-not-allocated",
        *empty_params.TEMPLATES,
    ),
    match=R(
        r"(?P<freed>'weight' must be 2-D|setStorage: sizes [^\n]{1,200} are out of bounds for storage of size 0|"
        r"The tensor has a non-zero number of elements, but its data is not allocated yet)|"
        + empty_params.MATCH
    ),
    # a LayerNorm's empty weight is a sharded parameter by itself (empty_params.py)
    requires=("saw_fsdp", *empty_params.FACTS),
    confirm=lambda hits, ctx: False,
    # under ZeRO-3 the same lines are DeepSpeed's partitions (kinds/deepspeed.py)
    reject=R(r"torch\.Size\(\[0\]\)"),
    absorbs=("zero3_partitioned_weights",),
    also=(
        Alternative(
            "library_version_bug",
            "a library's FSDP code path (its generate, save or offload) using parameters FSDP had freed, a bug of "
            "its release",
            "When the traceback's frames are torch's FSDP or a framework's (Lightning, accelerate, the Trainer), "
            "search their issues for the message and update them.",
        ),
        empty_params.ZERO3,
    ),
    describe=_params_outside_forward,
)


RECOGNISERS = (WRAPPER_USAGE, FSDP_PARAMS_OUTSIDE_FORWARD)
