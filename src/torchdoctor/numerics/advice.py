"""What to try once the overflow dump has named the module that went bad: the lines `InfNanDetected`'s message
ends with (and ``report.advice``); the dump itself stays transformers' text.

- a weight that is itself inf/nan (any dtype): the weights are already broken, and no precision setting brings
  them back;
- a frame that computed in fp32/fp64: what `full_precision` says (inputs that arrived inf/nan, or values that
  grew past fp32's range);
- weights in half precision (``model.half()``, Lightning ``precision="16-true"``): nothing can be kept in fp32,
  so train in mixed precision instead (fp32 weights, half-precision computation);
- otherwise, under autocast with fp32 weights: the ``keep_in_fp32(...)`` call for the block that overflowed,
  unless a weight or input of it is past what fp32 can square (1.84e+19): then the growth advice.
"""

from __future__ import annotations

import torch

from torchdoctor.numerics.fp32 import suggestion
from torchdoctor.numerics.frames import Entry, Frame
from torchdoctor.numerics.full_precision import fp32_advice, past_fp32
from torchdoctor.numerics.precision import LIMITS

_REDUCED_PRECISION = set(LIMITS)
_HALF = (torch.float16, torch.bfloat16)

BROKEN_WEIGHTS_FIX = (
    "fix: restore the last good checkpoint, then lower the learning rate or clip gradients "
    "(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0) before optimizer.step())"
)
MIXED_PRECISION_FIX = (
    "fix: train in mixed precision instead: fp32 weights, fp16/bf16 computation under torch.autocast "
    '(Lightning precision="16-mixed" or "bf16-mixed"; Hugging Face TrainingArguments(fp16=True) or bf16=True)'
)


def fix_for(model: torch.nn.Module, frame: Frame, frames: list[Frame] | None = None) -> str:
    """What to try for the dump's last (bad) frame (``frames``: the saved ones, oldest first, ending with it), for
    the exception's message; "" when there is nothing sure to say.

    >>> fix_for(model, frame)  # doctest: +SKIP
    'torchdoctor.keep_in_fp32(model, "encoder.block.1.layer.1.DenseReluDense")'
    """
    broken = [e for e in frame.entries if e.bad and _is_weight(e)]
    if broken:
        return broken_weights(frame.module_name, broken)
    if not any(e.dtype in _REDUCED_PRECISION for e in frame.entries):
        return fp32_advice(model, frame, frames if frames else [frame])
    name, module = _block(model, frame.module_name)
    half = _half_dtypes(module) or (_half_dtypes(model) if not _has_parameters(module) else [])
    if half:
        return half_weights(half)
    if not frame.module_name or module is None:
        return ""
    return past_fp32(model, frame, frames if frames else [frame]) or suggestion(name)


def broken_weights(module_name: str, entries: list[Entry]) -> str:
    """The weights themselves hold inf/nan: say so, and what brings a run back from there."""
    prefix = f"{module_name}." if module_name else ""
    names = ", ".join(f"{prefix}{e.name}" for e in entries)
    what = " and ".join(sorted({word for e in entries for word in (e.notes or {}).get("has", ["infs"])}))
    holds = "holds" if len(entries) == 1 else "hold"
    return (
        f"the weights are already broken: {names} {holds} {what}; no change of precision (keep_in_fp32 "
        "included) brings them back\n" + BROKEN_WEIGHTS_FIX
    )


def half_weights(dtypes: list[str]) -> str:
    """The weights are fp16/bf16 themselves: nothing can be kept in fp32; mixed precision is the fix."""
    return (
        f'the weights are {" and ".join(dtypes)} (model.half(), or Lightning precision="16-true"/"bf16-true"), '
        "so no module can be kept in fp32\n" + MIXED_PRECISION_FIX
    )


def _is_weight(entry: Entry) -> bool:
    """A parameter's own line (``weight``, ``bias``), not an input, output or gradient."""
    return not entry.name.startswith(("input", "output", "grad_")) and not entry.name.endswith(".grad")


def _block(model: torch.nn.Module, name: str) -> tuple[str, torch.nn.Module | None]:
    """The module to keep in fp32 for a bad frame of ``name``: a leaf that overflowed (a Linear, a Dropout)
    is best kept with the block that feeds it."""
    modules = dict(model.named_modules())
    module = modules.get(name)
    if module is not None and not any(True for _ in module.children()) and "." in name:
        name = name.rsplit(".", 1)[0]
        module = modules.get(name, module)
    return name, module


def _has_parameters(module: torch.nn.Module | None) -> bool:
    return module is not None and any(True for _ in module.parameters())


def _half_dtypes(module: torch.nn.Module | None) -> list[str]:
    if module is None:
        return []
    return sorted({str(p.dtype).removeprefix("torch.") for p in module.parameters() if p.dtype in _HALF})
