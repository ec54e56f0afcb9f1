"""The overflow detector in a Lightning ``Trainer``: ``DebugUnderflowOverflowCallback``.

    from torchdoctor.integrations.lightning import DebugUnderflowOverflowCallback

    trainer = lightning.Trainer(callbacks=[DebugUnderflowOverflowCallback()])
    trainer.fit(model)  # prints the dump and raises InfNanDetected at the first inf/nan

Needs the ``lightning`` extra: ``pip install 'torchdoctor[lightning]'``.
"""

from __future__ import annotations

import warnings
from typing import Any

try:
    from lightning.pytorch import Callback
except ImportError as error:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "torchdoctor.integrations.lightning needs lightning: pip install 'torchdoctor[lightning]'"
    ) from error

from torchdoctor.integrations._attach import Attached, options


class DebugUnderflowOverflowCallback(Callback):
    """Watch the ``LightningModule`` for inf/nan during ``fit``, with ``DebugUnderflowOverflow``'s options.

    The detector goes on at ``on_fit_start`` (so the sanity check and validation are watched too) and comes
    off at ``on_fit_end``, or in ``on_exception`` when fitting raises. Each process hooks only its own
    ``LightningModule`` (never the strategy's wrapper, so names are the module's own), and in a multi-process
    run the dump names the rank it comes from.

    ``module`` names a submodule to watch instead of the whole ``LightningModule``, e.g. ``"model"`` when
    ``training_step`` calls ``self.model(...)`` rather than ``self(...)``: the batch number advances when the
    watched module's forward returns, so watch the module that is called once per batch.
    """

    def __init__(
        self,
        max_frames_to_save: int = 21,
        trace_batch_nums: list[int] | None = None,
        abort_after_batch_num: int | None = None,
        *,
        file: Any = None,
        check_gradients: bool = False,
        module: str | None = None,
    ) -> None:
        self.options = options(
            max_frames_to_save, trace_batch_nums, abort_after_batch_num, file, check_gradients
        )
        self.module = module
        self._attached: Attached | None = None
        self._batch_at_start: int | None = None
        self._warned = False

    @property
    def detector(self):
        """The ``DebugUnderflowOverflow`` watching the model now; None outside ``fit``."""
        return self._attached.detector if self._attached and self._attached.attached else None

    def on_fit_start(self, trainer, pl_module) -> None:
        self.remove()
        self._warned = False
        watched = pl_module
        if self.module:
            try:
                watched = pl_module.get_submodule(self.module)
            except AttributeError:
                names = [name for name, _ in pl_module.named_children()]
                raise ValueError(
                    f"DebugUnderflowOverflowCallback(module={self.module!r}): {type(pl_module).__name__} has no "
                    f"such submodule; its children are {names}"
                ) from None
        self._attached = Attached(watched, self.options)

    def on_train_batch_start(self, trainer, pl_module, batch: Any, batch_idx: int) -> None:
        detector = self.detector
        self._batch_at_start = detector.batch_number if detector is not None else None

    def on_train_batch_end(self, trainer, pl_module, outputs: Any, batch: Any, batch_idx: int) -> None:
        detector = self.detector
        if detector is None or self._warned or detector.batch_number != self._batch_at_start:
            return
        # the watched module's forward never returned during this batch: batch numbers stand still
        self._warned = True
        watched = self.module or type(pl_module).__name__
        children = [name for name, _ in pl_module.named_children()]
        warnings.warn(
            f"DebugUnderflowOverflowCallback: {watched}'s forward was not called during training batch "
            f"{batch_idx}, so the dump's batch numbers will not advance; pass module=<the submodule "
            f"training_step calls>, one of {children}",
            stacklevel=2,
        )

    def on_fit_end(self, trainer, pl_module) -> None:
        self.remove()

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        self.remove()

    def teardown(self, trainer, pl_module, stage: str) -> None:
        self.remove()

    def remove(self) -> None:
        """Take the detector off the model now (it comes off by itself when ``fit`` ends or raises)."""
        if self._attached is not None:
            self._attached.remove()
            self._attached = None
