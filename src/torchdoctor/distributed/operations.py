"""Collectives on tensors and nested lists/tuples/dicts of tensors, checked across ranks in debug mode.

Same names, arguments and results as ``accelerate.utils``' operations, but they work under plain
``torch.distributed`` (torchrun, SLURM, MPI): no ``Accelerator`` state needed. Without an initialised process
group of two or more ranks they return their input (``reduce`` and ``gather`` as accelerate do).

In debug mode (``TORCHDOCTOR_DEBUG_MODE=1``) each first checks in with the other ranks (see
`torchdoctor.distributed.debug`) and raises `DistributedOperationException` on every rank on a mismatch.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from torchdoctor.distributed import debug
from torchdoctor.distributed.debug_settings import debug_mode_enabled
from torchdoctor.distributed.raising import DistributedOperationException
from torchdoctor.distributed.signature import is_tensor, tensor_signature

__all__ = [
    "CannotPadNestedTensorWarning",
    "DistributedOperationException",
    "all_reduce",
    "broadcast",
    "broadcast_object_list",
    "gather",
    "gather_object",
    "pad_across_processes",
    "reduce",
]

REDUCTIONS = ("mean", "sum", "max", "min", "none")


class CannotPadNestedTensorWarning(UserWarning):
    """``pad_across_processes`` was given a nested tensor, which has no single size to pad: left as it is."""

    __module__ = "torchdoctor.distributed"


def gather(tensor: Any) -> Any:
    """Gather every rank's tensors, concatenated along the first dimension (0-dim tensors become 1-dim).

    Example::

        gather(torch.tensor([rank]))       # on 2 ranks: tensor([0, 1])
    """
    dist = _dist()
    if dist is None:
        return tensor
    _verify("torchdoctor.distributed.gather", tensor)
    c10d = dist.distributed_c10d
    world = dist.get_world_size()
    into_tensor = dist.get_backend() != "gloo"  # gloo has no all_gather_into_tensor

    def gather_one(t):
        t = t.clone()[None] if t.ndim == 0 else t.contiguous()
        if into_tensor:
            out = t.new_empty((world * t.shape[0], *t.shape[1:]))
            c10d.all_gather_into_tensor(out, t)
            return out
        parts = [t.new_empty(t.shape) for _ in range(world)]
        c10d.all_gather(parts, t)
        import torch

        return torch.cat(parts, dim=0)

    return _apply(gather_one, tensor)


def gather_object(object: Any) -> Any:
    """Gather a picklable object from every rank; lists are concatenated (rank 0's items first).

    Example::

        gather_object([f"rank {rank}"])    # on 2 ranks: ['rank 0', 'rank 1']
    """
    dist = _dist()
    if dist is None:
        return object
    _verify("torchdoctor.distributed.gather_object", None)
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.distributed_c10d.all_gather_object(gathered, object)
    if all(isinstance(item, (list, tuple)) for item in gathered):
        return [x for item in gathered for x in item]
    return gathered


def reduce(tensor: Any, reduction: str = "mean", scale: float = 1.0) -> Any:
    """New tensors holding the ``reduction`` (``mean``, ``sum``, ``max``, ``min`` or ``none``) over all ranks,
    times ``scale``. The inputs are left as they are.

    Example::

        reduce(torch.tensor([float(rank)]))  # on 2 ranks: tensor([0.5000])
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction={reduction!r}: expected one of {', '.join(REDUCTIONS)}")
    dist = _dist()
    if dist is not None:
        _verify("torchdoctor.distributed.reduce", tensor)

    def reduce_one(t):
        t = t.clone()
        if dist is not None and reduction != "none":
            dist.distributed_c10d.all_reduce(t, _reduce_op(dist, reduction))
            if reduction == "mean":
                t /= dist.get_world_size()
        if scale != 1.0:
            t *= scale
        return t

    return _apply(reduce_one, tensor)


def all_reduce(tensor: Any, reduction: str = "sum") -> Any:
    """Reduce every tensor in place across ranks (``sum``, ``mean``, ``max`` or ``min``) and return ``tensor``.

    Example::

        all_reduce({"loss": loss, "tokens": tokens})      # both summed over the ranks, in place
    """
    if reduction not in REDUCTIONS[:-1]:
        raise ValueError(f"reduction={reduction!r}: expected one of {', '.join(REDUCTIONS[:-1])}")
    dist = _dist()
    if dist is None:
        return tensor
    _verify("torchdoctor.distributed.all_reduce", tensor, {"reduce op": reduction})

    def all_reduce_one(t):
        dist.distributed_c10d.all_reduce(t, _reduce_op(dist, reduction))
        if reduction == "mean":
            t /= dist.get_world_size()
        return t

    return _apply(all_reduce_one, tensor)


def broadcast(tensor: Any, from_process: int = 0) -> Any:
    """Overwrite every rank's tensors in place with those of rank ``from_process``, and return them."""
    dist = _dist()
    if dist is None:
        return tensor
    _verify("torchdoctor.distributed.broadcast", tensor, {"src": from_process})

    def broadcast_one(t):
        dist.distributed_c10d.broadcast(t, src=from_process)
        return t

    return _apply(broadcast_one, tensor)


def broadcast_object_list(object_list: list, from_process: int = 0) -> list:
    """Overwrite ``object_list`` in place with rank ``from_process``'s picklable objects, and return it."""
    dist = _dist()
    if dist is None:
        return object_list
    _verify(
        "torchdoctor.distributed.broadcast_object_list",
        None,
        {"src": from_process, "shape": len(object_list)},
    )
    dist.distributed_c10d.broadcast_object_list(object_list, src=from_process)
    return object_list


def pad_across_processes(tensor: Any, dim: int = 0, pad_index: int = 0, pad_first: bool = False) -> Any:
    """Pad every tensor along ``dim`` with ``pad_index`` to the largest size any rank has, so it can be gathered.

    A nested tensor is returned as it is, with a `CannotPadNestedTensorWarning` (as accelerate does).
    """
    try:
        return _apply(_pad_one, tensor, dim=dim, pad_index=pad_index, pad_first=pad_first)
    except DistributedOperationException as error:
        raise DistributedOperationException(
            "Error found while calling `torchdoctor.distributed.pad_across_processes`. "
            "Please see the earlier error for more details."
        ) from error


# --- helpers ---------------------------------------------------------------------------------------------


def _dist():
    """``torch.distributed`` when there is a process group of two or more ranks, else None."""
    import torch.distributed as dist

    from torchdoctor.distributed.ranks import say_if_alone_under_accelerate

    say_if_alone_under_accelerate()  # accelerate's own collectives do nothing there: the ranks train alone

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist
    return None


def _verify(operation: str, data: Any, extra: Mapping[str, Any] | None = None) -> None:
    if not debug_mode_enabled():
        return
    debug.enable()  # debug mode covers the user's own torch.distributed calls too
    signature = {} if data is None else tensor_signature(data)
    debug.check_collective(operation, {**signature, **(extra or {})})


def _reduce_op(dist, reduction: str):
    return {"max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}.get(reduction, dist.ReduceOp.SUM)


def _apply(function, data: Any, **kwargs) -> Any:
    """``function`` applied to every tensor of a nested list/tuple/dict, keeping the container types."""
    if isinstance(data, (list, tuple)):
        items = [_apply(function, item, **kwargs) for item in data]
        if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
            return type(data)(*items)
        return type(data)(items)
    if isinstance(data, Mapping):
        return type(data)({key: _apply(function, value, **kwargs) for key, value in data.items()})
    if is_tensor(data):
        return function(data, **kwargs)
    raise TypeError(
        f"Unsupported type {type(data).__name__} passed to `{function.__name__}`: only nested lists, tuples "
        "and dicts of tensors can be passed."
    )


def _pad_one(tensor: Any, dim: int = 0, pad_index: int = 0, pad_first: bool = False) -> Any:
    import torch

    if tensor.is_nested:  # no single shape; its components' sizes are not ours to change
        warnings.warn(
            f"pad_across_processes cannot pad a nested tensor (of {tensor.size(0)} tensors): left as it is",
            CannotPadNestedTensorWarning,
            stacklevel=4,
        )
        return tensor
    if dim >= tensor.ndim or dim < -tensor.ndim:
        return tensor
    dim = dim % tensor.ndim
    sizes = gather(torch.tensor(tensor.shape, device=tensor.device)[None]).cpu()
    longest = int(sizes[:, dim].max())
    if longest == tensor.shape[dim]:
        return tensor
    shape = list(tensor.shape)
    shape[dim] = longest
    padded = tensor.new_full(shape, pad_index)
    start = longest - tensor.shape[dim] if pad_first else 0
    padded.narrow(dim, start, tensor.shape[dim]).copy_(tensor)
    return padded
