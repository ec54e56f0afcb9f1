"""The overflow detector's argument checks: one set, used by the detector and by both trainer callbacks.

Each bad value is refused by name before any hook goes on (a callback's before training starts), with
transformers' types: whole numbers of any integer type (``numpy.int64`` too), ``max_frames_to_save=0`` allowed
(the dump then shows no frame, as transformers' does).
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Iterable
from typing import Any

import torch

SYNC_MODES = ("auto", "batch", "frame")


def check_model(model: Any, caller: str = "DebugUnderflowOverflow") -> None:
    """Refuse anything but a ``torch.nn.Module``, naming what was passed."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            f"{caller}: model={model!r} ({type(model).__name__}) is not a torch.nn.Module; pass the model to watch"
        )


def check_options(
    max_frames_to_save: Any,
    trace_batch_nums: Any,
    abort_after_batch_num: Any,
    file: Any = None,
    *,
    sync: Any = "auto",
    headroom: Any = 0.5,
    caller: str = "DebugUnderflowOverflow",
) -> tuple[int, list[int], int | None]:
    """``max_frames_to_save``, ``trace_batch_nums`` (a list) and ``abort_after_batch_num`` as plain ints, or a
    ``TypeError``/``ValueError`` that names the bad value and ``caller``.

    >>> check_options(3, (0, 2), None)
    (3, [0, 2], None)
    """

    def whole(name: str, value: Any, minimum: int) -> int:
        try:
            number = None if isinstance(value, bool) else operator.index(value)
        except TypeError:
            number = None
        if number is None:
            raise TypeError(f"{caller}: {name} is not an int")
        if number < minimum:
            raise ValueError(f"{caller}: {name} must be at least {minimum}")
        return number

    frames = whole(f"max_frames_to_save={max_frames_to_save!r}", max_frames_to_save, 0)
    abort = abort_after_batch_num
    if abort is not None:
        abort = whole(f"abort_after_batch_num={abort!r}", abort, 0)
    if file is not None and not callable(getattr(file, "write", None)):
        raise TypeError(f"{caller}: file={file!r} has no write(); pass an open text file")
    if sync not in SYNC_MODES:
        raise ValueError(f"{caller}: sync={sync!r} is not one of 'auto', 'batch', 'frame'")
    if headroom is not None and not (isinstance(headroom, numbers.Real) and 0 < headroom <= 1):
        raise ValueError(f"{caller}: headroom={headroom!r} must be a fraction in (0, 1]")
    if trace_batch_nums is None:
        return frames, [], abort
    if isinstance(trace_batch_nums, (str, bytes)) or not isinstance(trace_batch_nums, Iterable):
        one = f"; for one batch write [{trace_batch_nums!r}]" if isinstance(trace_batch_nums, int) else ""
        raise TypeError(
            f"{caller}: trace_batch_nums={trace_batch_nums!r} is not a list of batch numbers{one}"
        )
    batches = list(trace_batch_nums)
    where = f"trace_batch_nums={batches!r}: entry"
    return frames, [whole(f"{where} {number!r}", number, 0) for number in batches], abort
