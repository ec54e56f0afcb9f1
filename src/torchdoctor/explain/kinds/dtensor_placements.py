"""A DTensor made or redistributed with placements torch refuses.

distribute_tensor, DTensor.from_local, redistribute, distribute_module.

``torch/distributed/tensor/_api.py`` (``distribute_tensor``, ``DTensor.from_local``, ``redistribute``,
``distribute_module``), ``_dtensor_spec.py`` (the placements of one DTensor), ``_redistribute.py`` (moving between
placements), ``placement_types.py`` and ``_utils.py`` (shapes from placements), torch 2.4-2.13. Each message names its
own mistake: certain once a real log shows it. An op DTensor has no rule for, plain tensors mixed with DTensors, and
in-place ops that would change a placement are kinds/dtensor_ops.py's; a placement list of the wrong length is
``device_mesh_config``'s (kinds/placement.py).
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "DDP, FSDP and where tensors are"

_ALREADY_DTENSOR = (
    "distribute_tensor was handed a tensor that is already a DTensor (a parameter that fully_shard or "
    "parallelize_module already sharded, or a module distributed twice): to move it to other placements call "
    "t.redistribute(mesh, placements); to place a module's parameters once, apply one of fully_shard / "
    "parallelize_module / distribute_module per module, in the order FSDP2 + TP expect (parallelize_module first, "
    "then fully_shard)."
)

_HYBRID = (
    "One tensor dimension may be sharded over one mesh dimension: [Shard(0), Shard(0)] on a 2-D mesh is refused. "
    "Shard different tensor dimensions ([Shard(0), Shard(1)]), or replicate over one mesh dimension ([Replicate(), "
    "Shard(0)]), or flatten the two mesh dimensions into one (mesh['dp', 'tp']._flatten()) and shard over that."
)

_CROSS_MESH = (
    "redistribute moves a DTensor between placements on its own mesh only: to move it to another DeviceMesh, take "
    "the full value (t.full_tensor()) or the local shard (t.to_local()) and build a DTensor on the other mesh "
    "(distribute_tensor / DTensor.from_local), or make both parts of the model use one mesh (its slices, mesh['tp'])."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    (
        "to a different device mesh",  # "Cannot distribute a DTensor with device mesh {} to a different device mesh"
        _ALREADY_DTENSOR,
    ),
    ("to a different placements", _ALREADY_DTENSOR),
    (
        "`distribute_tensor` should be used to distribute leaf tensors! but found non-leaf tensor!",
        "distribute_tensor takes a leaf tensor (a parameter or a tensor made without gradient history): call it on "
        "the tensor before computing with it, or on t.detach(); to make a DTensor from a computed value inside the "
        "graph use DTensor.from_local(local_part, mesh, placements), which keeps gradients flowing.",
    ),
    (
        "distribute_module should only be called once on a module",
        "A module was distributed twice (distribute_module, or parallelize_module / a framework's tensor parallelism "
        "applied again): apply it once per module, and not both a framework's TP and the script's own.",
    ),
    (
        "the local_tensor argument only accepts torch.Tensor but got",
        "DTensor.from_local(local_tensor, mesh, placements) takes the rank's local torch.Tensor: pass the tensor "
        "(not a DTensor, a list or a NumPy array; a DTensor is already distributed, use redistribute).",
    ),
    (
        "placements is needed for redistribute!",
        "DTensor.redistribute needs the target placements: t.redistribute(mesh, [Replicate()]) (one per mesh "
        "dimension).",
    ),
    (
        "redistributing to Partial is for internal use only!",
        "redistribute refuses Partial as a target: redistribute to Replicate() or Shard(d); a pending sum appears "
        "only from ops (a matmul of row-sharded operands), not from redistribute.",
    ),
    (
        "Replicate to Partial(",
        "A replicated DTensor cannot become Partial: redistribute to Replicate() or Shard(d), or build the Partial "
        "value with DTensor.from_local(local_part, mesh, [Partial()]) where each rank holds its share of the sum.",
    ),
    (
        "Redistribution from one partial type (",
        "A Partial DTensor of one reduction (sum, avg, max) cannot turn into a Partial of another: redistribute it to "
        "Replicate() (which reduces it) first, then apply the other reduction.",
    ),
    (
        "Mixed Partial reduce types are not supported in the same placement list.",
        "Every Partial in one placement list must use the same reduce_op: [Partial('sum'), Partial('sum')], not "
        "'sum' and 'max'; reduce one of them first (redistribute to Replicate() on that mesh dimension).",
    ),
    (
        "Trying to distribute tensor with unsupported placements",
        "distribute_tensor places a tensor with Shard(d) or Replicate() per mesh dimension (Partial and custom "
        "placements come from ops, not from distributing a full tensor): use one of those two.",
    ),
    (
        "Any checkpointing related operations are not supported for DTensor with partial placements!",
        "A DTensor with a Partial placement (a pending sum) was saved: reduce it first, t.redistribute(mesh, "
        "[Replicate()]) (or a Shard), before building the state dict, or save the module's parameters, which are "
        "never Partial.",
    ),
    ("is already sharded on mesh dim", _HYBRID),
    ("DeviceMesh dimension can't be mapped to two dimension of the same tensor", _HYBRID),
    (
        "cannot be both shard and partial!",
        "A mesh dimension holds one placement per DTensor: Shard or Partial, not both; redistribute the Partial to "
        "Replicate() first.",
    ),
    ("Cross device mesh comm not supported yet!", _CROSS_MESH),
    (
        "greater than tensor ndim",
        "A Shard(d) placement names a dimension the tensor does not have (d counts from 0, less than tensor.ndim): "
        "shard a dimension that exists (Shard(0) for a 1-D bias), or Replicate() a 0-D or small tensor.",
    ),
    (
        "Non-sharded dimensions should have identical size across ranks.",
        "Each rank's local tensor given to DTensor.from_local(..., [Shard(d)]) must match the others' in every "
        "dimension but d: make the other dimensions equal (pad them), or shard along the dimension that differs.",
    ),
    (
        "while ExplicitRedistributionContext was active",
        "Inside ExplicitRedistributionContext an op needed its inputs moved to other placements: redistribute them "
        "yourself before the op (t.redistribute(mesh, [...])), as the message's op schema shows, or leave the "
        "context to let DTensor do it.",
    ),
    (
        "as_strided not supported with DTensor",
        "as_strided has no DTensor rule: call it on the local tensor (t.to_local()) or the full one "
        "(t.full_tensor()), or use view / reshape / narrow, which DTensor supports.",
    ),
    (
        "To use DTensor API with xla, you must install the torch_xla package!",
        "A DeviceMesh on 'xla' needs torch_xla: pip install torch_xla in the same release as torch.",
    ),
)

DTENSOR_PLACEMENTS = refusal_recogniser(
    kind="dtensor_placements",
    title="a DTensor made or redistributed with placements torch refuses",
    refusals=REFUSALS,
    templates=(
        "torch:cannot-distribute-dtensor-with-device-mesh",
        "torch:cannot-distribute-dtensor-with-placements-to",
        "torch:distribute-tensor-should-be-used-to",
        "torch:distribute-module-should-only-be-called",
        "torch:the-local-tensor-argument-only-accepts",
        "torch:placements-is-needed-for-redistribute",
        "torch:can-not-redistribute-from-to-redistributing",
        "torch:replicate-to-partial-conversion-is-not",
        "torch:redistribution-from-one-partial-type-to",
        "torch:mixed-partial-reduce-types-are-not",
        "torch:trying-to-distribute-tensor-with-unsupported",
        "torch:any-checkpointing-related-operations-are-not",
        "torch:tensor-dim-is-already-sharded-on",
        "torch:devicemesh-dimension-can-be-mapped-to",
        "torch:devicemesh-dimension-cannot-be-both-shard",
        "torch:cross-device-mesh-comm-not-supported",
        "torch:sharding-dim-greater-than-tensor-ndim",
        "torch:sharding-dim-greater-than-tensor-ndim-2",
        "torch:non-sharded-dimensions-should-have-identical",
        "torch:implicit-redistribution-occurred-for-while-explicitredistributioncontext",
        "torch:as-strided-not-supported-with-dtensor",
        "torch:to-use-dtensor-api-with-xla",
    ),
)

RECOGNISERS = (DTENSOR_PLACEMENTS,)
