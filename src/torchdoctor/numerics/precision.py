"""Reduced precision: how close a tensor came to its dtype's largest value, fp8 saturation, underflow.

fp16 overflows at 65504, bf16 at about 3.39e38, fp8 e5m2 at 57344. fp8 e4m3fn has no inf at all: a cast
saturates at ±448, so an overflow there is silent; the saturated elements are counted instead. At the other
end, values below the smallest normal number lose precision (subnormals) or vanish (zeros): their share is
the underflow figure.
"""

from __future__ import annotations

import torch

from torchdoctor.numerics.stats import values_of

# largest finite value per dtype name
LIMITS = {
    name: float(torch.finfo(getattr(torch, name)).max)
    for name in ("float16", "bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
    if hasattr(torch, name)
}
# fp8 formats without inf: an out-of-range cast lands on the largest value
SATURATING = {name: LIMITS[name] for name in ("float8_e4m3fn", "float8_e4m3fnuz") if name in LIMITS}
# smallest normal value, for the underflow share of fp16/bf16 tensors
TINY = {name: float(torch.finfo(getattr(torch, name)).tiny) for name in ("float16", "bfloat16")}


def extra_counts(t: torch.Tensor, dtype: str, underflow: bool) -> dict | None:
    """``{"saturated": n, "numel": m}`` for a saturating fp8 tensor; ``{"tiny": n, "numel": m}`` for fp16/bf16
    when ``underflow``. Counts are 0-d tensors (read back later); None when there is nothing to count."""
    saturating = SATURATING.get(dtype)
    tiny = TINY.get(dtype) if underflow else None
    if saturating is None and tiny is None:
        return None
    values, implicit_zeros, label = values_of(t)
    if label or values is None:
        return None
    magnitudes = values.abs()
    if saturating is not None:
        return {"saturated": (magnitudes >= saturating).sum(), "numel": t.numel()}
    # implicit zeros of a sparse tensor are zeros too
    zeros = t.numel() - values.numel() if implicit_zeros else 0
    return {"tiny": (magnitudes < tiny).sum() + zeros, "numel": t.numel()}


def headroom_message(module_name: str, slot: str, dtype: str, abs_max: float, fraction: float) -> str:
    """``"<module> <slot> reached 6.27e+04 = 96% of float16 max"`` when ``abs_max`` passed ``fraction`` of it."""
    limit = LIMITS.get(dtype)
    if limit is None or not (abs_max >= fraction * limit) or abs_max == float("inf"):
        return ""
    return f"{module_name} {slot} reached {abs_max:.2e} = {abs_max / limit:.0%} of {dtype} max"


def saturation_message(module_name: str, slot: str, dtype: str, saturated: int, numel: int | None) -> str:
    of = f" of {numel}" if numel else ""
    return f"{module_name} {slot}: {saturated}{of} elements saturated at ±{SATURATING[dtype]:g} ({dtype} has no inf)"
