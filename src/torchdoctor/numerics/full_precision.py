"""What to try when the bad frame computed in fp32 (or fp64): no precision setting helps there.

Two cases, told apart from the bad frame's own lines:

- the frame's inputs were already inf/nan when they arrived, in fp32: no module before it made them (its
  frame would have been the bad one), so they came with the batch, or from an operation in the parent
  module's own forward between its submodules (a division by a zero sum, the log of 0); when a sibling saved
  before it computed in fp16/bf16 (the leaf was kept in fp32, its parent was not), the parent's own operations
  likely overflowed, and the ``keep_in_fp32`` call for the parent is given instead;
- finite inputs, inf/nan out: a value passed fp32's range (3.40e+38). Values past its square root (1.84e+19)
  overflow once squared (a LayerNorm's variance, a norm, a matmul), so the message names the first saved
  frame that went past it (where the values come from) and the model's largest weight: a learning rate
  too high or a wrong init grows weights until the activations overflow fp32.

The same advice replaces the ``keep_in_fp32`` line for an fp16/bf16 frame whose finite weights or inputs are
past 1.84e+19 already (`past_fp32`): run in fp32, the block would overflow again further on.
"""

from __future__ import annotations

import math

import torch

from torchdoctor.numerics.fp32 import suggestion
from torchdoctor.numerics.frames import Entry, Frame
from torchdoctor.numerics.precision import LIMITS

FP32_MAX = float(torch.finfo(torch.float32).max)
SQUARE_OVERFLOW = math.sqrt(FP32_MAX)  # 1.84e+19: past it, squaring overflows fp32

GROWTH_FIX = (
    "fix: find where those values come from: lower the learning rate, clip gradients "
    "(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0) before optimizer.step()), check the weights' "
    "init or scale, and restore the last good checkpoint if the weights already grew; keep_in_fp32 and "
    "mixed precision cannot help (fp32 overflows too)"
)
ARRIVAL_FIX = (
    "fix: check the batch (torch.isfinite(x).all() on each input tensor) and any division, log or sqrt "
    "in {parent}'s forward (a mask that sums to 0: clamp the divisor, e.g. mask.sum().clamp(min=1))"
)


def fp32_advice(model: torch.nn.Module, frame: Frame, frames: list[Frame]) -> str:
    """The advice for a bad frame that computed in fp32/fp64; "" when its lines show neither case."""
    arrived = [e for e in frame.entries if e.bad and _arriving(e, frame.direction)]
    if arrived and frame.direction == "forward":
        return _arrival(model, frame, arrived, frames)
    if any(e.bad for e in frame.entries if _arriving(e, frame.direction)):
        return ""
    return _growth(model, frame, frames)


def past_fp32(model: torch.nn.Module, frame: Frame, frames: list[Frame]) -> str:
    """For an fp16/bf16 bad frame: the growth advice when one of its finite values (a weight, an input) is past
    1.84e+19 already, where keeping the block in fp32 only moves the overflow further on; "" otherwise."""
    large = [e for e in frame.entries if not e.label and not e.bad and float(e.max) > SQUARE_OVERFLOW]
    if not large:
        return ""
    where = frame.module_name or "the model"
    reduced = next((e.dtype for e in frame.entries if e.dtype in LIMITS), "reduced precision")
    first = (
        f"{where} overflowed {reduced}, but its {large[0].name} is "
        f"{float(large[0].max):.2e}, past {SQUARE_OVERFLOW:.2e} (its square overflows fp32): keep_in_fp32 would "
        "only move the overflow further on"
    )
    return _growth(model, frame, frames, first)


def _arriving(entry: Entry, direction: str) -> bool:
    """What the module was handed: its inputs (forward) or the gradient of its output (backward)."""
    return entry.name.startswith("grad_output" if direction == "backward" else "input")


def _arrival(model: torch.nn.Module, frame: Frame, arrived: list[Entry], frames: list[Frame]) -> str:
    parent = frame.module_name.rsplit(".", 1)[0] if "." in frame.module_name else ""
    parent_words = f"{parent} ({type(model.get_submodule(parent)).__name__})" if parent else "the model"
    names = ", ".join(f"{e.name} ({e.dtype or e.label})" for e in arrived)
    where = frame.module_name or "the model"
    reduced = _reduced_in(parent, frames) if parent else ""
    if reduced and not _has_half_weights(model.get_submodule(parent)):
        # e.g. keep_in_fp32 on the leaf alone: its inputs are upcast, but its parent's own operations
        # (attention scores, a matmul) ran in half precision and may be what overflowed
        return (
            f"{where} was handed inf/nan: {names}; no module before it produced it, but {parent_words} "
            f"computed in {reduced} (its modules before {where} did), so an operation of its own between "
            f"its modules (attention scores, a matmul) likely overflowed {reduced}; keeping {where} alone in "
            f"fp32 cannot help\n{suggestion(parent)}\n"
            "if it still fails, it came with the batch: "
            + ARRIVAL_FIX.format(parent=parent).removeprefix("fix: ")
        )
    return (
        f"{where} was handed inf/nan: {names}; no module before it produced it, so it came with the batch or "
        f"from an operation in {parent_words}'s forward between its modules; not a precision problem "
        "(keep_in_fp32 cannot help)\n" + ARRIVAL_FIX.format(parent=parent or "the model")
    )


def _reduced_in(parent: str, frames: list[Frame]) -> str:
    """The half-precision dtype that an earlier saved frame inside ``parent`` (a sibling before the bad
    frame) computed in, in the same batch and direction; "" when none did."""
    bad = frames[-1]
    for frame in reversed(frames[:-1]):
        if frame.batch_number != bad.batch_number or frame.direction != bad.direction:
            break
        if frame.module_name.startswith(parent + "."):
            dtype = next((e.dtype for e in frame.entries if e.dtype in LIMITS and not e.label), "")
            if dtype:
                return dtype
    return ""


def _has_half_weights(module: torch.nn.Module) -> bool:
    return any(p.dtype in (torch.float16, torch.bfloat16) for p in module.parameters())


def _growth(model: torch.nn.Module, frame: Frame, frames: list[Frame], first: str = "") -> str:
    where = frame.module_name or "the model"
    lines = [
        first
        or f"fp32 overflow in {where}: a value passed fp32's largest, {FP32_MAX:.2e}, from finite inputs"
    ]
    origin = _first_past(frames, SQUARE_OVERFLOW)
    if origin is not None:
        name, entry = origin
        lines.append(
            f"values first passed {SQUARE_OVERFLOW:.2e} (its square overflows fp32) in {name} "
            f"{entry.name}: {entry.max:.2e}"
        )
    weight = _largest_weight(model)
    if weight is not None:
        lines.append(f"the largest weight is {weight[0]}: {weight[1]:.2e}")
    return "\n".join(lines + [GROWTH_FIX])


def _first_past(frames: list[Frame], limit: float) -> tuple[str, Entry] | None:
    """The first saved line (a weight, or an output) whose finite abs max passed ``limit``."""
    for frame in frames:
        for entry in frame.entries:
            if entry.label or entry.bad or entry.name.startswith(("input", "grad_output")):
                continue
            if float(entry.max) > limit:
                return frame.module_name or "the model", entry
    return None


def _largest_weight(model: torch.nn.Module) -> tuple[str, float] | None:
    """The parameter with the largest finite abs max, read once when the error is raised."""
    best = None
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            plain = type(parameter.detach()) is torch.Tensor  # a sharded (DTensor) one would need its peers
            if not plain or not parameter.is_floating_point() or parameter.numel() == 0 or parameter.is_meta:
                continue
            value = parameter.detach().abs().max().item()
            if value == value and value != float("inf") and (best is None or value > best[1]):
                best = (name, value)
    return best
