"""What both trainer callbacks share: attach the overflow detector to one model, and take it off again."""

from __future__ import annotations

import logging
import sys
from typing import Any

from torch import nn

from torchdoctor.numerics.options import check_options

logger = logging.getLogger(__name__)


class Attached:
    """The detector on one model, plus a hook that takes it off when an exception leaves the model's forward.

    Trainers tell callbacks when training ends but (the Hugging Face ``Trainer``) not when it raises; the
    overflow itself is raised from inside the model's forward, so the model's own outermost hook is where the
    hooks can come off on the way out. An exception raised elsewhere (in backward, with ``check_gradients``)
    leaves them on until the callback's next ``on_train_begin`` or its ``remove()``.
    """

    def __init__(self, model: nn.Module, options: dict[str, Any]) -> None:
        from torchdoctor.numerics.detector import DebugUnderflowOverflow

        self.model = model
        self.detector = DebugUnderflowOverflow(model, **options)
        self.attached = True
        # the exception being handled (if any) when each call of the model began: one raised inside the
        # forward is a different one; a forward called from a caller's own `except` block sees the same
        self._exception_at_entry: list[BaseException | None] = []
        self._handles = [
            model.register_forward_pre_hook(self._entering, prepend=True),
            # always_call: run even when the forward (or a hook inside it) raises
            model.register_forward_hook(self._leaving, always_call=True),
        ]

    def _entering(self, module: nn.Module, args: Any) -> None:
        self._exception_at_entry.append(sys.exc_info()[1])
        # keep our hook last among the model's forward hooks: torch walks that dict live when the forward
        # raised, and only after its last hook may hooks be taken out of it
        module._forward_hooks.move_to_end(self._handles[1].id)

    def _leaving(self, module: nn.Module, args: Any, output: Any) -> None:
        at_entry = self._exception_at_entry.pop() if self._exception_at_entry else None
        # torch calls this hook from inside its `except` block when the forward raised
        raised = sys.exc_info()[1]
        raised_inside = raised is not at_entry
        if raised_inside and next(reversed(module._forward_hooks)) == self._handles[1].id:
            self.remove()
            _log_advice(raised)

    def remove(self) -> None:
        """Take every hook off the model. Safe to call twice."""
        if self.attached:
            self.attached = False
            self.detector.remove()
            for handle in self._handles:
                handle.remove()


def _log_advice(raised: BaseException | None) -> None:
    """The overflow's advice (what to try: the ``keep_in_fp32`` call, mixed precision) in the training log
    too, as its own record: the dump stays transformers' text, and a trainer's log may be all one reads."""
    from torchdoctor.numerics.detector import InfNanDetected

    if isinstance(raised, InfNanDetected) and raised.report.advice:
        where = raised.module_name or "the model"
        logger.error(
            "inf/nan in %s of %s, batch %d; what to try:\n%s",
            raised.direction,
            where,
            raised.batch_number,
            raised.report.advice,
        )


def options(
    max_frames_to_save: int,
    trace_batch_nums: list[int] | None,
    abort_after_batch_num: int | None,
    file: Any,
    check_gradients: bool,
) -> dict[str, Any]:
    """The detector's keyword arguments, checked up front (by the detector's own checks) so that a bad value
    fails before training starts."""
    frames, batches, abort = check_options(
        max_frames_to_save,
        trace_batch_nums,
        abort_after_batch_num,
        file,
        caller="DebugUnderflowOverflowCallback",
    )
    chosen: dict[str, Any] = {
        "max_frames_to_save": frames,
        "trace_batch_nums": batches if trace_batch_nums is not None else None,
        "abort_after_batch_num": abort,
    }
    # the keyword-only options go through only when set, so the detector's defaults stay its own
    if file is not None:
        chosen["file"] = file
    if check_gradients:
        chosen["check_gradients"] = True
    return chosen
