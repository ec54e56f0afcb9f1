"""DistributedDataParallel's and DataParallel's own refusals of how they were called.

Communication hooks (PowerSGD's state among them), the Join context, post-local SGD's model averagers, bucket
settings, a device mesh; DataParallel's scatter and gather meeting CPU tensors.

``torch/nn/parallel/distributed.py`` (``register_comm_hook``, ``_get_ddp_join_hook``, ``_set_static_graph``,
``_register_fused_optim``, ``DistributedDataParallel.__init__``), ``torch/nn/parallel/_functions.py`` and ``comm.py``
(DataParallel's Broadcast / Gather / reduce_add), ``torch/distributed/algorithms/`` (``join.py``,
``ddp_comm_hooks/powerSGD_hook.py``, ``model_averaging/``), torch 1.8-2.13. Each message names its own mistake:
certain once a real log shows it. DDP's unused parameters, its parameters on several devices and the other checks
kinds/wrapper_usage.py and kinds/placement.py know stay theirs.
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
    # torch/distributed/algorithms: Join, PowerSGD's state, post-local SGD's model averagers
    (
        "The join context manager requires at least one joinable",
        "Join([...]) takes the Joinable objects of the loop: `with Join([ddp_model]):` (and the "
        "ZeroRedundancyOptimizer, if any), not an empty list.",
    ),
    (
        "constructor calls the ``Joinable`` constructor",
        "A class deriving from Joinable must call super().__init__() in its __init__, before Join uses it.",
    ),
    (
        "Detected at least one rank that exhausted inputs. Throwing across all ranks.",
        "Join(..., throw_on_early_termination=True) stops every rank as soon as one runs out of batches: the ranks "
        "got different numbers of batches (a dataset split unevenly by hand, drop_last=False with sizes that do not "
        "divide, an IterableDataset not sharded evenly). Give each rank the same number of batches "
        "(DistributedSampler pads to equal length; drop_last=True), or leave throw_on_early_termination False so "
        "Join shadows the missing collectives.",
    ),
    (
        "Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled",
        "PowerSGDState(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=...) needs "
        "start_powerSGD_iter of 2 or more with error feedback or warm start (1000 is the usual value: vanilla "
        "all-reduce for the first iterations).",
    ),
    (
        "Please set a small value such as 1e-8 as `orthogonalization_epsilon` in PowerSGD state.",
        "A gradient matrix has an all-zero column (a frozen or unused part of a layer), which PowerSGD cannot "
        "orthogonalise: PowerSGDState(..., orthogonalization_epsilon=1e-8).",
    ),
    (
        "Arg ``warmup_steps`` must be a non-negative number.",
        "PeriodicModelAverager(period=4, warmup_steps=100): warmup_steps is 0 or more, period 1 or more (period 1 "
        "gains nothing over DDP's own all-reduce).",
    ),
    (
        "Arg ``period`` must be a positive value.",
        "PeriodicModelAverager(period=4, warmup_steps=100): warmup_steps is 0 or more, period 1 or more (period 1 "
        "gains nothing over DDP's own all-reduce).",
    ),
    (
        "Arg ``period_group_size_dict`` must not be empty.",
        "HierarchicalModelAverager(period_group_size_dict=OrderedDict([(2, 4), (4, 16)]), warmup_steps=100): "
        "periods in increasing order mapped to group sizes, the last size the whole process group's.",
    ),
    (
        "must be equal to the size of arg ``process_group``",
        "HierarchicalModelAverager's period_group_size_dict must end with the size of the whole group "
        "(dist.get_world_size()): e.g. OrderedDict([(2, 8), (4, world_size)]).",
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
        "torch:the-join-context-manager-requires-at",
        "torch:check-that-the-constructor-calls-the",
        "torch:detected-at-least-one-rank-that",
        "torch:expect-start-powersgd-iter-if-use",
        "torch:the-matrices-to-be-orthogonalized-has",
        "torch:arg-warmup-steps-must-be-non",
        "torch:arg-period-must-be-positive-value",
        "torch:arg-period-group-size-dict-must",
        "torch:the-last-value-in-arg-period",
    ),
)

RECOGNISERS = (DDP_CALL_REFUSED,)
