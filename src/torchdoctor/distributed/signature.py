"""What a collective call passes, as debug mode compares it between ranks: shapes, dtypes, devices, source or
destination rank and reduce op (the signature), and a cheap key of the same for the hot path.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any


def tensor_signature(data: Any) -> dict[str, Any]:
    """Shapes, dtypes and device types of a (nested list/tuple/dict of) tensor(s), in the same nesting."""
    return {
        "shape": _nested(data, shape_of),
        "dtype": _nested(data, lambda t: str(t.dtype)),
        "device": _nested(data, lambda t: t.device.type),
    }


def _op(op: Any) -> str:
    return "SUM" if op is None else str(op).rsplit(".", 1)[-1]


def _one(tensor: Any) -> dict[str, Any]:
    return {"shape": list(tensor.shape), "dtype": str(tensor.dtype), "device": tensor.device.type}


def _pair(output: Any, input: Any) -> dict[str, Any]:
    return {
        "shape": f"output {list(output.shape)}, input {list(input.shape)}",
        "dtype": f"output {output.dtype}, input {input.dtype}",
        "device": f"output {output.device.type}, input {input.device.type}",
    }


def _describe_all_reduce(tensor, op=None, group=None, *args, **kwargs):
    return group, {**_one(tensor), "reduce op": _op(op)}


def _describe_all_gather(tensor_list, tensor, group=None, *args, **kwargs):
    return group, _one(tensor)


def _describe_all_gather_into_tensor(output_tensor, input_tensor, group=None, *args, **kwargs):
    return group, _pair(output_tensor, input_tensor)


def _describe_reduce_scatter_tensor(output, input, op=None, group=None, *args, **kwargs):
    return group, {**_pair(output, input), "reduce op": _op(op)}


def _describe_broadcast(tensor, src=None, group=None, *args, group_src=None, **kwargs):
    return group, {**_one(tensor), "src": src if group_src is None else f"group rank {group_src}"}


def _describe_reduce(tensor, dst=None, op=None, group=None, *args, group_dst=None, **kwargs):
    dst = dst if group_dst is None else f"group rank {group_dst}"
    return group, {**_one(tensor), "dst": dst, "reduce op": _op(op)}


def _describe_barrier(group=None, *args, **kwargs):
    return group, {}


# The hot path: a hashable key of what a call passes, without building the signature (done once per new key).
# This rank's own cache key, never compared across ranks: the device itself (``cuda:1``) costs a fifth of its
# ``.type``, and a tensor that moves to another device is only checked in once more.
def _quick_all_reduce(tensor, op=None, group=None, *args, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device, op)


def _quick_all_gather(tensor_list, tensor, group=None, *args, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device)


def _quick_pair(output, input, group=None, *args, **kwargs):
    return group, (
        output.shape,
        input.shape,
        output.dtype,
        input.dtype,
        output.device,
        input.device,
    )


def _quick_all_gather_into_tensor(output_tensor, input_tensor, group=None, *args, **kwargs):
    return _quick_pair(output_tensor, input_tensor, group)  # torch's parameter names, which callers may pass


def _quick_reduce_scatter_tensor(output, input, op=None, group=None, *args, **kwargs):
    return group, (*_quick_pair(output, input)[1], op)


def _quick_broadcast(tensor, src=None, group=None, *args, group_src=None, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device, src, group_src)


def _quick_reduce(tensor, dst=None, op=None, group=None, *args, group_dst=None, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device, dst, op, group_dst)


def _quick_barrier(group=None, *args, **kwargs):
    return group, ()


QUICK = {
    "all_reduce": _quick_all_reduce,
    "all_gather": _quick_all_gather,
    "all_gather_into_tensor": _quick_all_gather_into_tensor,
    "all_gather_single": _quick_all_gather_into_tensor,
    "reduce_scatter_tensor": _quick_reduce_scatter_tensor,
    "reduce_scatter_single": _quick_reduce_scatter_tensor,
    "broadcast": _quick_broadcast,
    "reduce": _quick_reduce,
    "barrier": _quick_barrier,
}

DESCRIBE = {
    "all_reduce": _describe_all_reduce,
    "all_gather": _describe_all_gather,
    "all_gather_into_tensor": _describe_all_gather_into_tensor,
    "all_gather_single": _describe_all_gather_into_tensor,
    "reduce_scatter_tensor": _describe_reduce_scatter_tensor,
    "reduce_scatter_single": _describe_reduce_scatter_tensor,
    "broadcast": _describe_broadcast,
    "reduce": _describe_reduce,
    "barrier": _describe_barrier,
}


def _nested(data: Any, leaf: Callable[[Any], Any]) -> Any:
    if isinstance(data, (list, tuple)):
        return [_nested(item, leaf) for item in data]
    if isinstance(data, Mapping):
        return {str(key): _nested(value, leaf) for key, value in data.items()}
    if is_tensor(data):
        return leaf(data)
    return type(data).__name__


def is_tensor(data: Any) -> bool:
    """Whether ``data`` is a ``torch.Tensor`` (nested tensors included), without importing torch."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(data, torch.Tensor)


def shape_of(tensor: Any) -> Any:
    """``list(tensor.shape)``; for a nested tensor, which has no single shape, its components' shapes."""
    if getattr(tensor, "is_nested", False):
        return {"nested": [list(part.shape) for part in tensor.unbind()]}
    return list(tensor.shape)
