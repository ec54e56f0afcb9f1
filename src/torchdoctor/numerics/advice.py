"""What to try once the overflow dump has named the module that went bad: the line the dump ends with."""

from __future__ import annotations

import torch

from torchdoctor.numerics.fp32 import suggestion
from torchdoctor.numerics.frames import Frame
from torchdoctor.numerics.precision import LIMITS

_REDUCED_PRECISION = set(LIMITS)
_HALF = (torch.float16, torch.bfloat16)


def fix_for(model: torch.nn.Module, frame: Frame) -> str:
    """The ``keep_in_fp32(...)`` line to try when the bad frame computed in reduced precision under autocast.

    Not for the root, and not where the weights themselves are fp16/bf16 (``model.half()``): keeping a
    module in fp32 needs fp32 weights, so there the fix is to train with autocast instead.
    """
    if not frame.module_name or not any(e.dtype in _REDUCED_PRECISION for e in frame.entries):
        return ""
    modules = dict(model.named_modules())
    name = frame.module_name
    module = modules.get(name)
    # a leaf that overflowed (a Linear, a Dropout) is best kept in fp32 with the block that feeds it
    if module is not None and not any(True for _ in module.children()) and "." in name:
        name = name.rsplit(".", 1)[0]
        module = modules.get(name, module)
    if module is None or any(p.dtype in _HALF for p in module.parameters()):
        return ""
    return suggestion(name)
