"""torch's ZeroRedundancyOptimizer refusing its parameters or how it is used with DDP's overlap.

``torch/distributed/optim/zero_redundancy_optimizer.py`` and ``algorithms/ddp_comm_hooks/ddp_zero_hook.py``, torch
1.8-2.13: the parameters it is built on, the
per-rank partition a script may give, and ``overlap_with_ddp=True``, where the optimizer steps inside DDP's
communication hook. Each message names its own mistake: certain once a real log shows it.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "a library refusing its settings"

_PARAMS = (
    "ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.AdamW, lr=...) takes the model's parameters as "
    "an iterable of tensors or of param-group dicts with a 'params' key (list(model.parameters()) works), not the "
    "model, a generator already used up, or a dict of names; at least one parameter must require a gradient."
)

_OVERLAP = (
    "With overlap_with_ddp=True the optimizer steps inside DDP's communication hook: register the hook "
    "(ddp_model.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp_model, zero))), use one parameter "
    "group and an optimizer class that has a functional form (SGD, Adam, AdamW), leave every parameter's "
    "requires_grad as it was, and drop zero.step() from the training loop; or pass overlap_with_ddp=False."
)

_PER_RANK = (
    "params_per_rank (a list of world_size lists of parameters) partitions the parameters by hand: give one list "
    "per rank, made of parameters the optimizer was built on, with a single parameter group, and before the first "
    "step partitions them."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("ZeroRedundancyOptimizer got an empty parameter list", _PARAMS),
    ("`params` argument should be an iterable of Tensors", _PARAMS),
    ("must have a 'params' key mapping to the parameters in the group", _PARAMS),
    (
        "ZeroRedundancyOptimizer only supports using the same dense type for all parameters but got",
        "ZeroRedundancyOptimizer partitions parameters of one tensor type: give it the parameters of one device and "
        "layout (all on the GPU, all dense; sparse embeddings need their own optimizer).",
    ),
    ("ZeroRedundancyOptimizer with `overlap_with_ddp=True` only supports a single parameter group", _OVERLAP),
    (
        "ZeroRedundancyOptimizer with `overlap_with_ddp=True` does not support changing parameter trainability at run time",
        _OVERLAP,
    ),
    ("`step()` should not be included in the training loop when `overlap_with_ddp=True`", _OVERLAP),
    (
        "requires using a functional optimizer, but there is no supported functional optimizer equivalent for",
        _OVERLAP,
    ),
    ("`params_per_rank` must have length equal to the world size", _PER_RANK),
    (
        "Specifying `params_per_rank` should only be done when the parameters have not been partitioned yet",
        _PER_RANK,
    ),
    ("Specifying `params_per_rank` only supports a single parameter group", _PER_RANK),
    (
        "Passing a new parameter in `params_per_rank` that was not passed into the ZeroRedundancyOptimizer constructor",
        _PER_RANK,
    ),
    (
        "`closure` is not supported when using a local functional optimizer",
        "step(closure) needs an optimizer class whose step takes a closure (LBFGS): a functional optimizer does not; "
        "call loss.backward() yourself and zero.step() without a closure.",
    ),
    # torch/distributed/algorithms/ddp_comm_hooks/ddp_zero_hook.py: the hook that steps ZeRO inside DDP's backward
    ("Overlapping DDP with ZeRO only supports a single parameter group", _OVERLAP),
    (
        "ZeroRedundancyOptimizer must be constructed with `overlap_with_ddp=True` to use this hook properly",
        _OVERLAP,
    ),
)

ZERO_REDUNDANCY_OPTIMIZER = refusal_recogniser(
    kind="zero_redundancy_optimizer",
    title="ZeroRedundancyOptimizer refused its parameters or its use with DDP",
    refusals=REFUSALS,
    templates=(
        "torch:zeroredundancyoptimizer-got-an-empty-parameter-list",
        "torch:params-argument-should-be-an-iterable",
        "torch:params-argument-should-be-an-iterable-2",
        "torch:params-argument-should-be-an-iterable-3",
        "torch:each-parameter-group-passed-in-via",
        "torch:zeroredundancyoptimizer-only-supports-using-the-same",
        "torch:zeroredundancyoptimizer-only-supports-using-the-same-2",
        "torch:zeroredundancyoptimizer-with-overlap-with-ddp-true",
        "torch:zeroredundancyoptimizer-with-overlap-with-ddp-true-2",
        "torch:step-should-not-be-included-in",
        "torch:using-ddp-with-overlap-true-requires",
        "torch:params-per-rank-must-have-length",
        "torch:specifying-params-per-rank-should-only",
        "torch:specifying-params-per-rank-only-supports",
        "torch:passing-new-parameter-in-params-per",
        "torch:closure-is-not-supported-when-using",
        "torch:overlapping-ddp-with-zero-only-supports",
        "torch:zeroredundancyoptimizer-must-be-constructed-with-overlap",
    ),
)

RECOGNISERS = (ZERO_REDUNDANCY_OPTIMIZER,)
