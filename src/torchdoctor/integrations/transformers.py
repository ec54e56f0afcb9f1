"""The overflow detector in a Hugging Face ``Trainer``: ``DebugUnderflowOverflowCallback``.

    from torchdoctor.integrations.transformers import DebugUnderflowOverflowCallback

    trainer = Trainer(model, args, train_dataset=..., callbacks=[DebugUnderflowOverflowCallback()])
    trainer.train()  # prints the dump and raises InfNanDetected at the first inf/nan

Needs the ``transformers`` extra: ``pip install 'torchdoctor[transformers]'``.
"""

from __future__ import annotations

import logging
from typing import Any

try:
    from transformers import TrainerCallback
except ImportError as error:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "torchdoctor.integrations.transformers needs transformers: pip install 'torchdoctor[transformers]'"
    ) from error

from torchdoctor.integrations._attach import Attached, options

logger = logging.getLogger(__name__)


class DebugUnderflowOverflowCallback(TrainerCallback):
    """Watch the model for inf/nan while a ``Trainer`` trains it, with ``DebugUnderflowOverflow``'s options.

    The detector goes on at ``on_train_begin`` and comes off at ``on_train_end``, or on the way out of the
    forward that raised. Each process hooks only its own copy of the model (the unwrapped one, so module names
    are the model's, not ``module.…``), and in a multi-process run the dump names the rank it comes from.

    With ``TrainingArguments(debug="underflow_overflow")`` as well, this callback takes over: transformers'
    detector is taken off the model so that one dump is printed, this one. ``Trainer`` cannot run that option
    under ``DataParallel`` (several GPUs in one process) and neither can this: use ``torchrun``.

    A "batch" is one forward of the model: each micro-batch under gradient accumulation, and evaluation
    forwards count too.
    """

    def __init__(
        self,
        max_frames_to_save: int = 21,
        trace_batch_nums: list[int] | None = None,
        abort_after_batch_num: int | None = None,
        *,
        file: Any = None,
        check_gradients: bool = False,
    ) -> None:
        self.options = options(
            max_frames_to_save, trace_batch_nums, abort_after_batch_num, file, check_gradients
        )
        self._attached: Attached | None = None

    @property
    def detector(self):
        """The ``DebugUnderflowOverflow`` watching the model now; None outside training."""
        return self._attached.detector if self._attached and self._attached.attached else None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.remove()  # left on by a train() that raised outside the forward
        if model is None:
            raise ValueError("DebugUnderflowOverflowCallback: the Trainer passed no model to on_train_begin")
        if getattr(args, "n_gpu", 1) > 1:
            raise ValueError(
                f"DebugUnderflowOverflowCallback cannot watch a model under DataParallel (n_gpu={args.n_gpu}): "
                "DataParallel replicates the model each step, without the hooks; run one process per GPU with "
                "torchrun instead"
            )
        removed = _remove_transformers_detector(model)
        if removed:
            logger.warning(
                "debug=underflow_overflow and DebugUnderflowOverflowCallback are both on: using torchdoctor's "
                "detector, took transformers' off %d modules",
                removed,
            )
        self._attached = Attached(model, self.options)

    def on_train_end(self, args, state, control, **kwargs):
        self.remove()

    def remove(self) -> None:
        """Take the detector off the model now (it comes off by itself when training ends)."""
        if self._attached is not None:
            self._attached.remove()
            self._attached = None


def _remove_transformers_detector(model) -> int:
    """Take ``transformers.debug_utils.DebugUnderflowOverflow``'s hooks off ``model``; how many modules had one.

    transformers keeps no handles to the hooks it registers for ``debug="underflow_overflow"``, so they are
    found by their owner in each module's hook dict.
    """
    from transformers.debug_utils import DebugUnderflowOverflow as TransformersDetector

    removed = 0
    for module in model.modules():
        theirs = [
            hook_id
            for hook_id, hook in module._forward_hooks.items()
            if isinstance(getattr(hook, "__self__", None), TransformersDetector)
        ]
        for hook_id in theirs:
            del module._forward_hooks[hook_id]
            module._forward_hooks_with_kwargs.pop(hook_id, None)
            module._forward_hooks_always_called.pop(hook_id, None)
        removed += bool(theirs)
    return removed
