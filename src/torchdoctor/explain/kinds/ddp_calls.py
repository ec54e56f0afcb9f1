"""DistributedDataParallel's and DataParallel's own refusals of how they were called.

Communication hooks, join hooks, bucket settings, a device mesh; DataParallel's scatter and gather meeting CPU
tensors.

``torch/nn/parallel/distributed.py`` (``register_comm_hook``, ``_get_ddp_join_hook``, ``_set_static_graph``,
``_register_fused_optim``, ``DistributedDataParallel.__init__``), ``torch/nn/parallel/_functions.py`` and ``comm.py``
(DataParallel's Broadcast / Gather / reduce_add), ``torch/distributed/algorithms/`` (the join context), torch
1.8-2.13. Each message names its own mistake: certain once a real log shows it. DDP's unused parameters, its
parameters on several devices and the other checks kinds/wrapper_usage.py and kinds/placement.py know stay theirs.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_HOOK = (
    "DDP's register_comm_hook(state, hook) takes the hook's state first and a function hook(state, bucket: "
    "dist.GradBucket) -> torch.futures.Future[torch.Tensor] second: model.register_comm_hook(None, "
    "default_hooks.fp16_compress_hook), or PowerSGDState(...) with powerSGD_hook; annotate a custom hook's "
    "parameters as those types or not at all."
)

_JOIN = (
    "Join([model, optimizer]) takes Joinable objects, each making its own join hook: pass the DDP-wrapped model "
    "(and ZeroRedundancyOptimizer) themselves, `with Join([ddp_model, zero_optimizer]):`, not the inner module or a "
    "plain optimizer."
)

_DP_GPU = (
    "DataParallel scatters, broadcasts and gathers CUDA tensors only: move the model to cuda:device_ids[0] before "
    "wrapping (model.to('cuda:0')), keep the forward's outputs on the GPU (move them to CPU after DataParallel "
    "returns, not inside forward), and on a machine without GPUs run the module without DataParallel."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("Communication hook must be callable.", _HOOK),
    ("Communication hook: bucket annotation should be dist.GradBucket.", _HOOK),
    ("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].", _HOOK),
    ("DDP join hook requires passing in a DistributedDataParallel instance as the state", _JOIN),
    ("ZeRO join hook requires passing in a ZeroRedundancyOptimizer instance as the state", _JOIN),
    (
        "delay_all_reduce_named_params and param_to_hook_all_reduce need to be set at the same time.",
        "DDP(delay_all_reduce_named_params=..., param_to_hook_all_reduce=...) come together: pass both (the "
        "parameters whose all-reduce waits, and the one whose gradient hook triggers it) or neither.",
    ),
    (
        "DDP runtime logging sample rate should be equal or greater than 1",
        "_set_ddp_runtime_logging_sample_rate takes a whole number of iterations, 1 or more.",
    ),
    (
        "when using bucket_cap_mb_list, python reducer is not supported",
        "bucket_cap_mb_list runs on DDP's C++ reducer only: unset TORCH_DDP_USE_PYTHON_REDUCER (or drop "
        "bucket_cap_mb_list and use bucket_cap_mb).",
    ),
    (
        "BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+",
        "bf16_compress_hook needs NCCL 2.10+ with CUDA 11+ (or XPU with XCCL): on gloo or an older NCCL use "
        "fp16_compress_hook, or update torch to a CUDA 11+ build.",
    ),
    (
        "Only 1D device mesh is supported, but got",
        "DDP(device_mesh=...) takes a 1-D mesh (the data-parallel ranks): pass mesh['dp'] of a larger mesh.",
    ),
    (
        "does not support overlapped DDP. Please file an issue",
        "_register_fused_optim runs the optimizer inside DDP's backward hooks for the optimizers that have a "
        "functional form (SGD, Adam, AdamW, ...): use one of those, or step the optimizer after backward as usual.",
    ),
    ("Broadcast function not implemented for CPU tensors", _DP_GPU),
    ("Gather function not implemented for CPU tensors", _DP_GPU),
    ("reduce_add expects all inputs to be on GPUs, but input", _DP_GPU),
    (
        "reduce_add expects destination to be on the same GPU with one of the tensors",
        "torch.nn.parallel.comm.reduce_add(inputs, destination) sums tensors that live one per GPU into a device "
        "that holds one of them: pass destination as one of those GPU indices.",
    ),
)

DDP_CALL_REFUSED = refusal_recogniser(
    kind="ddp_call_refused",
    title="DistributedDataParallel or DataParallel refused how it was called",
    refusals=REFUSALS,
    templates=(
        "torch:communication-hook-must-be-callable",
        "torch:communication-hook-bucket-annotation-should-be",
        "torch:communication-hook-return-annotation-should-be",
        "torch:ddp-join-hook-requires-passing-in",
        "torch:zero-join-hook-requires-passing-in",
        "torch:delay-all-reduce-named-params-and",
        "torch:ddp-runtime-logging-sample-rate-should",
        "torch:when-using-bucket-cap-mb-list",
        "torch:bf16-all-reduce-communication-hook-required",
        "torch:only-device-mesh-is-supported-but",
        "torch:does-not-support-overlapped-ddp-please",
        "torch:broadcast-function-not-implemented-for-cpu",
        "torch:gather-function-not-implemented-for-cpu",
        "torch:reduce-add-expects-all-inputs-to",
        "torch:reduce-add-expects-destination-to-be",
    ),
)

RECOGNISERS = (DDP_CALL_REFUSED,)
