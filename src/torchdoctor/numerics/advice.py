"""What to try once the overflow dump has named the module that went bad: the lines `InfNanDetected`'s message
ends with (and ``report.advice``); the dump itself stays transformers' text.

- a weight that is itself inf/nan (any dtype): the weights are already broken, and no precision setting brings
  them back (after the first batch: the batch before's update made them; ``check_gradients=True`` shows where);
- the backward pass's first frame handed an inf/nan ``grad_output``: the loss, computed after the model, made it;
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
LOSS_FIX = (
    "fix: check torch.isfinite(loss) before backward, and guard the loss: x.clamp_min(1e-12).log(), "
    "torch.log_softmax instead of softmax().log(), a divisor clamped with .clamp(min=1)"
)
MIXED_PRECISION_FIX = (
    "fix: train in mixed precision instead: fp32 weights, fp16/bf16 computation under torch.autocast "
    '(Lightning precision="16-mixed" or "bf16-mixed"; Hugging Face TrainingArguments(fp16=True) or bf16=True)'
)


def fix_for(
    model: torch.nn.Module, frame: Frame, frames: list[Frame] | None = None, max_frames: int = 0
) -> str:
    """What to try for the dump's last (bad) frame (``frames``: the saved ones, oldest first, ending with it, of
    at most ``max_frames``), for the exception's message; "" when there is nothing sure to say.

    >>> fix_for(model, frame)  # doctest: +SKIP
    'torchdoctor.keep_in_fp32(model, "encoder.block.1.layer.1.DenseReluDense")'
    """
    broken = [e for e in frame.entries if e.bad and _is_weight(e)]
    if broken:
        return broken_weights(frame.module_name, broken, frame.batch_number, frame.direction)
    first = _first_in_backward(frames or [frame], max_frames)
    if frame.direction == "backward" and _handed_bad_gradient(frame) and first:
        return loss_made_it(frame)
    if not any(e.dtype in _REDUCED_PRECISION for e in frame.entries):
        return fp32_advice(model, frame, frames if frames else [frame])
    name, module = _block(model, frame.module_name)
    half = _half_dtypes(module) or (_half_dtypes(model) if not _has_parameters(module) else [])
    if half:
        return half_weights(half)
    if not frame.module_name or module is None:
        return ""
    return past_fp32(model, frame, frames if frames else [frame]) or suggestion(name)


def broken_weights(
    module_name: str, entries: list[Entry], batch_number: int = 0, direction: str = "forward"
) -> str:
    """The weights themselves hold inf/nan: say so, and what brings a run back from there. Found in a forward
    after the first batch, they went bad in the update after the batch before (its loss, backward or step)."""
    prefix = f"{module_name}." if module_name else ""
    names = ", ".join(f"{prefix}{e.name}" for e in entries)
    what = " and ".join(sorted({word for e in entries for word in (e.notes or {}).get("has", ["infs"])}))
    holds = "holds" if len(entries) == 1 else "hold"
    lines = [
        f"the weights are already broken: {names} {holds} {what}; no change of precision (keep_in_fp32 "
        "included) brings them back"
    ]
    if direction == "forward" and batch_number > 0:
        lines.append(
            f"batch {batch_number - 1}'s forward ran without inf/nan, so its loss, backward or optimizer step "
            "made them: rerun with check_gradients=True to see the first gradient that went bad (a loss that is "
            "itself inf/nan, such as the log of 0, shows as the model's own grad_output)"
        )
    return "\n".join(lines + [BROKEN_WEIGHTS_FIX])


def loss_made_it(frame: Frame) -> str:
    """The first gradient of the backward pass arrived inf/nan: what comes after the model's modules made it.
    In float16 that can also be a GradScaler's loss scale, which skips such a step by itself."""
    where = f"{frame.module_name}'s output" if frame.module_name else "the model's output"
    scaled = any(e.bad and e.name.startswith("grad_output") and e.dtype == "float16" for e in frame.entries)
    scaler = (
        " (or, with a GradScaler, the loss scale overflowed float16: the scaler skips that step and lowers the "
        "scale by itself, so a detector in backward stops a run that would have gone on)"
        if scaled
        else ""
    )
    return (
        f"the gradient reaching {where}, the first of the backward pass, is already inf/nan: it was made after "
        "the model's modules, by the loss (in training_step / compute_loss / the training loop) or its "
        f"backward: likely a log of 0, a division by 0 or a sqrt of 0 there{scaler}\n" + LOSS_FIX
    )


def half_weights(dtypes: list[str]) -> str:
    """The weights are fp16/bf16 themselves: nothing can be kept in fp32; mixed precision is the fix."""
    return (
        f'the weights are {" and ".join(dtypes)} (model.half(), or Lightning precision="16-true"/"bf16-true"), '
        "so no module can be kept in fp32\n" + MIXED_PRECISION_FIX
    )


def _handed_bad_gradient(frame: Frame) -> bool:
    return any(e.bad and e.name.startswith("grad_output") for e in frame.entries)


def _first_in_backward(frames: list[Frame], max_frames: int) -> bool:
    """Whether the bad (last) backward frame is its batch's first: no saved backward frame of the same batch
    before it, and none dropped (the buffer was not full, or it reaches back into an earlier batch)."""
    bad, before = frames[-1], frames[:-1]
    if any(f.batch_number == bad.batch_number for f in before):
        return False
    return len(frames) < max_frames or any(f.batch_number < bad.batch_number for f in before)


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
