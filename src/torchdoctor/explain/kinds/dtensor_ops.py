"""DTensor refusing an op: an in-place op that would change its placement, mixed operands, an op without a rule.

``torch/distributed/tensor/_ops/utils.py``: an in-place op on a DTensor must keep its input's placement; when
no sharding strategy of the op does ("{op}: in-place operations that require placement changes are not
supported. The input has placement {placement}, but no valid strategy preserves this placement ..."), DTensor
refuses it. Under FSDP2 or tensor parallelism the parameters are DTensors sharded as Shard(0): an optimizer or
a custom update that computes its update over the whole matrix (Muon's Newton-Schulz, Shampoo) or as a
replicated tensor and adds it in place is the usual writer. The message names the op and the placement, not
whose code called it (the script's or a library's optimizer): likely, a library's bug named.

``_dispatch.py``: a plain torch.Tensor among a DTensor op's arguments ("got mixed torch.Tensor and DTensor"), and
``_op_schema.py`` / ``_ops``: DTensors of two meshes in one op. Both name the op, not whose code mixed them (a model
sharded only in part, or a library's gradient clipping under tensor parallelism): likely, a library's bug named.
``_sharding_prop.py``: an op no sharding strategy is registered for in this torch (certain: the op named, the fix
an update or local tensors).
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _inplace_placement(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    op = first(hits, "op") or "an in-place op"
    placement = first(hits, "placement")
    where = f" (placed as {placement})" if placement else ""
    return (
        f"{op} would have to change the placement of the DTensor it writes into{where}: DTensor refuses in-place "
        "ops whose result it cannot keep in the input's placement" + on_ranks(hits),
        "Find what writes into a sharded parameter in place (FSDP2's and tensor parallelism's parameters are "
        "DTensors, sharded as Shard(0)): an optimizer step or a custom update that computes its update as a full "
        "or replicated tensor. Give the update the parameter's placement first "
        "(distribute_tensor(update, p.device_mesh, p.placements), or work on p.to_local() and its local shard), "
        "or use the out-of-place form. Optimizers that transform whole matrices (Muon's Newton-Schulz "
        "orthogonalisation, Shampoo) need the full matrix: gather it (p.full_tensor()), update, redistribute; "
        "and keep parameters they cannot shard (1-D, or rank-1 [1, N] heads whose dim 0 is smaller than the "
        "mesh) on AdamW, or train that model with DDP.",
    )


DTENSOR_INPLACE_PLACEMENT = Recogniser(
    kind="dtensor_inplace_placement",
    templates=("torch:in-place-operations-that-require-placement",),
    title="an in-place op on a DTensor that would change its placement",
    anchors=("in-place operations that require placement changes are not supported",),
    match=R(
        r"(?:(?P<op>aten\.[\w.]{1,60}): )?in-place operations that require placement changes are not supported"
        r"(?:[^\n]{0,40}?placement (?P<placement>\((?:[^()\n]|\([^()\n]{0,40}\)){1,80}\)))?"
    ),
    describe=_inplace_placement,
    **OPERATOR_REFUSAL,
)


def _loaded_into_dtensors(hits: list[Hit]) -> tuple[str, str]:
    """load_state_dict's copy of one checkpoint tensor into the parameter of the same name raised DTensor's
    refusal (nn/modules/module.py _load_from_state_dict, "While copying the parameter named ..."): one of the two
    is a DTensor, the other a plain tensor."""
    return (
        f"load_state_dict could not copy {first(hits, 'loading_param')}: one side is a DTensor (a parameter of a "
        "model sharded with FSDP2's fully_shard or tensor parallelism, or a state dict such a model saved) and the "
        "other a plain tensor, and DTensor copies only from a DTensor" + on_ranks(hits),
        "A model sharded with fully_shard (FSDP2) or parallelize_module loads only a sharded state dict through "
        "load_state_dict. A full state dict (plain tensors: torch.load of a consolidated file, from_pretrained's "
        "weights, a LoRA snapshot) has to be sharded on the way in: set_model_state_dict(model, full_sd, "
        "options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)) (rank 0 holding the dict, a "
        "meta-device model materialised with to_empty first), or per tensor distribute_tensor(t, "
        "param.device_mesh, param.placements) then load_state_dict(sharded, assign=True); or load it before "
        "fully_shard. The other way round (a sharded model's own state_dict() saved with torch.save and loaded into "
        "an unsharded model), save a full one instead: get_model_state_dict(model, "
        "options=StateDictOptions(full_state_dict=True, cpu_offload=True)), or {k: v.full_tensor() for k, v in "
        "state.items()}; a sharded checkpoint written with dcp.save loads with dcp.load into model.state_dict().",
    )


def _mixed_operands(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "loading_param"):
        return _loaded_into_dtensors(hits)
    op = first(hits, "mixed_op") or first(hits, "mesh_op") or "a DTensor op"
    if first(hits, "mesh_op") or first(hits, "cross_mesh"):
        what = f"{op} was given DTensors on different device meshes"
    else:
        what = f"{op} was given plain torch.Tensors beside DTensors"
    # torch/nn/utils/clip_grad.py (the foreach norm of the gradients) and torch/optim's foreach steps (Adam, AdamW,
    # SGD: _multi_tensor_* run _foreach_mul_ / _add_ / lerp_ / addcmul_ / addcdiv_ ... over params, grads, state)
    if re.fullmatch(r"aten\._foreach_norm\.\w+|aten\.linalg_vector_norm\.\w+", op):
        where = "; here gradient clipping (clip_grad_norm_) over gradients of which some are DTensors and some not"
    elif re.fullmatch(r"aten\._foreach_(?:mul|add|sub|div|lerp|addcmul|addcdiv|sqrt|maximum)_?\.\w+", op):
        where = (
            "; here an optimizer's foreach step over DTensor parameters with plain-tensor state (restored with "
            "optimizer.load_state_dict from a full optimizer state dict, or set by hand)"
        )
    else:
        where = ""
    return (
        what
        + ": DTensor runs an op only when every tensor argument is a DTensor on the same mesh"
        + where
        + on_ranks(hits),
        "Under FSDP2 (fully_shard) or tensor parallelism the parameters (and their gradients) are DTensors; a plain "
        "tensor reaches the same op when only part of the model was sharded (a module left out of fully_shard or of "
        "the parallelize_plan), when a tensor made in forward or in the optimizer (a mask, a buffer, a constant) "
        "meets a sharded one, or when gradient clipping or an optimizer handles both kinds together (clip_grad_norm_ "
        "over parameters of which only some are sharded, or of two meshes: FSDP's and TP's). Shard every module "
        "that owns parameters (call fully_shard on the root too), make the plain tensor a DTensor on the same mesh "
        "(DTensor.from_local(t, mesh, [Replicate()]) or distribute_tensor), or compute on local tensors "
        "(x.to_local() / x.full_tensor()). For clipping, compute the norm per mesh and combine it, or update "
        "torch (2.6+ clips DTensor gradients of one mesh) and the library that calls it. For an optimizer step, "
        "restore its state with set_optimizer_state_dict(model, optimizer, state, "
        "options=StateDictOptions(full_state_dict=True)), which shards a full state as the parameters are, rather "
        "than optimizer.load_state_dict; build the optimizer after fully_shard.",
    )


DTENSOR_MIXED_OPERANDS = Recogniser(
    # torch/distributed/tensor/_dispatch.py: a plain tensor among a DTensor op's arguments; _op_schema.py,
    # _ops/single_dim_strategy.py, _ops/_tensor_ops.py: DTensors of two meshes in one op
    kind="dtensor_mixed_operands",
    templates=(
        "torch:got-mixed-torch-tensor-and-dtensor",
        "torch:dtensor-does-not-support-cross-mesh",
        "torch:cannot-run-on-inputs-with-different",
        "torch:all-operands-in-must-have-the",
    ),
    title="a DTensor op given plain tensors or DTensors of another mesh",
    anchors=(
        "got mixed torch.Tensor and DTensor",
        "DTensor does not support cross-mesh operation",
        "on inputs with different meshes: got",
        "must have the same mesh, but got",
    ),
    match=R(
        r"(?:(?P<mixed_op>aten\.[\w.]{1,60}): )?got mixed torch\.Tensor and DTensor|"
        r"(?P<cross_mesh>DTensor does not support cross-mesh operation on (?P<mesh_op>[\w.]{1,60}))|"
        r"Cannot run [\w.]{1,60} on inputs with different meshes|All operands in [\w.]{1,60} must have the same mesh"
    ),
    # nn/modules/module.py _load_from_state_dict quoting the exception of its copy (torch_native.tsv
    # while-copying-the-parameter-named): the parameter it was copying
    facts=(R(r"While (?:copying|swapping) the parameter named (?P<loading_param>\"[^\"\n]{1,200}\")"),),
    # the message names the op, not whose code mixed the tensors: the script's sharding, or a library's (a
    # Trainer's tensor parallelism clipping gradients before its release supported it)
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "library_version_bug",
            "a library's FSDP2 / tensor-parallel integration mixing them (its gradient clipping or optimizer), "
            "fixed in a later release",
            "When the traceback's frames are a library's (transformers' or accelerate's Trainer, a training "
            "framework), search its issues for the message and update it; meanwhile turn off what it does with "
            "the mixed tensors (max_grad_norm=-1 / 0 disables the Trainer's gradient clipping).",
            unless=("loading_param",),
        ),
    ),
    describe=_mixed_operands,
)


def _unsupported_op(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    op = first(hits, "dtensor_op") or "an op"
    return (
        f"DTensor has no sharding rule for {op} in this torch: the op cannot run on DTensor arguments (FSDP2 or "
        "tensor-parallel parameters, or activations)" + on_ranks(hits),
        "Each op a DTensor meets needs a registered sharding strategy, and each release adds some: update torch "
        "(the nightly or the next release may have it), or run the op on local tensors: x.to_local() for the shard, "
        "x.full_tensor() for the whole value, and wrap the result back (DTensor.from_local(y, mesh, placements)); "
        "torch.distributed.tensor.experimental.local_map does this around a function, and register_sharding "
        "adds a rule for a custom op. Keep modules that call it (a custom kernel, an unusual loss) out of the "
        "parallelized part.",
    )


DTENSOR_UNSUPPORTED_OP = Recogniser(
    # torch/distributed/tensor/_sharding_prop.py propagate_op_sharding: an op without a DTensor sharding strategy
    # (torch 2.0's torch/distributed/_tensor/sharding_prop.py: "... does not have a DistributedTensor rule registered.")
    kind="dtensor_unsupported_op",
    templates=(
        "torch:operator-does-not-have-sharding-strategy",
        "torch_native:operator-no-distributedtensor-rule",
    ),
    title="an op DTensor has no sharding rule for",
    anchors=(
        "does not have a sharding strategy registered",
        "does not have a DistributedTensor rule registered",
    ),
    match=R(
        r"Operator (?P<dtensor_op>[\w.]{1,80}) does not have a (?:sharding strategy|DistributedTensor rule) registered"
    ),
    describe=_unsupported_op,
)

RECOGNISERS = (DTENSOR_INPLACE_PLACEMENT, DTENSOR_MIXED_OPERANDS, DTENSOR_UNSUPPORTED_OP)
