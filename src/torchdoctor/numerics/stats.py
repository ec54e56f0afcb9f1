"""The absolute min and max of any tensor, in one reduction, without ever raising.

transformers computes ``var.abs().min()``, ``var.abs().max()``, ``isnan(var).any()`` and ``isinf(var).any()``:
six kernels and four host syncs per tensor, and a crash on empty, bool, sparse, nested, meta and fp8
tensors. Here a single ``torch.aminmax(t.abs())`` does the job, because a non-finite abs-max already means the
tensor holds an inf or a nan (a nan propagates through max). Tensors that have no values to read are given a
label instead ("empty", "meta", "unreadable").
"""

from __future__ import annotations

import torch

# dtypes whose abs() or aminmax() has no kernel on some backends: measured as float32 copies
_UPCAST = {
    getattr(torch, name)
    for name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
    if hasattr(torch, name)
}
_NO_ABS = {torch.bool, torch.uint8}
_WIDEN = {torch.int8, torch.int16, torch.int32}
_SCRATCH_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.float64}
# dtypes with abs() and aminmax() kernels on every backend, measured without any conversion
_ABS_DTYPES = {
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.float64,
    torch.int64,
    torch.complex64,
    torch.complex128,
}
_SPARSE_COMPRESSED = {torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc}
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def values_of(t: torch.Tensor) -> tuple[torch.Tensor | None, bool, str]:
    """A dense tensor holding ``t``'s stored values, whether ``t`` also has implicit zeros, and a label.

    The label is "" when there are values to measure, otherwise why not ("empty", "meta").
    """
    if type(t) not in _PLAIN_TYPES:
        t = _plain(t)
    if t.is_meta:
        return None, False, "meta"
    implicit_zeros = False
    layout = t.layout
    if layout is torch.sparse_coo:
        # an uncoalesced tensor may store one element as several entries that add up
        values = (t if t.is_coalesced() else t.coalesce())._values()
        implicit_zeros = values.numel() < t.numel()
    elif layout in _SPARSE_COMPRESSED:
        values = t.values()
        implicit_zeros = values.numel() < t.numel()
    elif t.is_nested:
        values = t.values()
    else:
        values = t
    if values.is_quantized:
        values = values.dequantize()
    if values.numel() == 0:
        return (None, False, "empty") if not implicit_zeros else (None, True, "")
    if values.dtype in _UPCAST:
        values = values.float()
    elif values.dtype in _WIDEN:  # abs(-128) does not fit in int8
        values = values.to(torch.int64)
    return values, implicit_zeros, ""


def _plain(t: torch.Tensor) -> torch.Tensor:
    """The tensor a subclass wraps (DTensor's local shard, …), or the subclass itself if it wraps none."""
    flatten = getattr(t, "__tensor_flatten__", None)
    if flatten is not None:
        try:
            names, _ = flatten()
            if names:
                return _plain(getattr(t, names[0]))
        except Exception:  # noqa: BLE001 - a subclass with an unusual flatten: measure it as it is
            pass
    return t


def abs_min_max_lazy(t: torch.Tensor, scratch: dict | None = None) -> tuple[torch.Tensor, torch.Tensor] | str:
    """``(abs min, abs max)`` as 0-d tensors on ``t``'s device (no host sync), or the label of why there are none.

    ``scratch`` (a dict the caller keeps) lets CPU tensors reuse one buffer for ``abs``: a fresh large
    buffer per call costs page faults that outweigh the reduction itself. Call under ``torch.no_grad()``;
    may raise on exotic tensors (the caller turns that into "unreadable").
    """
    if t.is_meta:
        return "meta"
    if type(t) in _PLAIN_TYPES and t.dtype in _ABS_DTYPES:
        try:  # the common case, plain dense tensors; the rest (empty, sparse, nested) raise and go the long way
            if scratch is not None and t.is_cpu and t.dtype in _SCRATCH_DTYPES:
                return torch.aminmax(torch.abs(t, out=scratch_for(t, scratch)))
            return torch.aminmax(t.abs())
        except Exception:  # noqa: BLE001 - any tensor type (subclasses, fakes, meta) may refuse this: the detector must not break the user's step
            pass
    values, implicit_zeros, label = values_of(t)
    if label:
        return label
    if values is None:  # sparse with no stored element: all zeros
        zero = torch.zeros((), device=t.device)
        return zero, zero
    magnitudes = values if values.dtype in _NO_ABS else values.abs()
    low, high = torch.aminmax(magnitudes)
    if implicit_zeros:
        low = torch.zeros_like(low)
    return low, high


def scratch_for(t: torch.Tensor, scratch: dict) -> torch.Tensor:
    """A buffer shaped like ``t``, carved out of the one kept in ``scratch`` for its dtype (grown as needed).

    The views are kept too (under ``(dtype, shape)``): a model's shapes repeat at every step, and carving
    a view costs two more dispatches per measured tensor.
    """
    key = (t.dtype, t.shape)
    view = scratch.get(key)
    if view is not None:
        return view
    buffer = scratch.get(t.dtype)
    numel = t.numel()
    if buffer is None or buffer.numel() < numel:
        for old in [k for k in scratch if isinstance(k, tuple) and k[0] == t.dtype]:
            del scratch[old]  # views of the buffer being replaced
        buffer = scratch[t.dtype] = torch.empty(numel, dtype=t.dtype)
    view = scratch[key] = buffer[:numel].view(t.shape)
    return view


def abs_min_max(t: torch.Tensor) -> tuple[float, float] | str:
    """``(abs min, abs max)`` of ``t`` as Python floats, or a label ("empty", "meta", "unreadable").

    Never raises. A tensor holding an inf or a nan has a non-finite abs max.

    >>> abs_min_max(torch.tensor([-3.0, 0.5]))
    (0.5, 3.0)
    """
    try:
        with torch.no_grad():
            result = abs_min_max_lazy(t)
            if isinstance(result, str):
                return result
            return float(result[0].item()), float(result[1].item())
    except Exception:  # noqa: BLE001 - any tensor type (subclasses, fakes, meta) may refuse this: the detector must not break the user's step
        return "unreadable"


def nan_and_inf(t: torch.Tensor) -> tuple[bool, bool]:
    """Whether ``t`` holds a nan, and whether it holds an inf (two more reductions: call only when not finite)."""
    try:
        with torch.no_grad():
            values, _, label = values_of(t)
            if label or values is None or not (values.is_floating_point() or values.is_complex()):
                return False, False
            return bool(torch.isnan(values).any().item()), bool(torch.isinf(values).any().item())
    except Exception:  # noqa: BLE001 - any tensor type (subclasses, fakes, meta) may refuse this: the detector must not break the user's step
        return False, False
