"""`DebugUnderflowOverflow` and `detect_overflow`: transformers' detector, same text, faster and harder to break.

Switch by changing the import::

    from torchdoctor import DebugUnderflowOverflow   # was: from transformers.debug_utils import ...

    debug_overflow = DebugUnderflowOverflow(model)   # forward hooks on every module, root included
    loss = model(**batch).loss                       # raises InfNanDetected (a ValueError) at the first inf/nan

Forward hooks on every module record one frame per call (parameters, inputs, outputs: abs min and abs max);
the last ``max_frames_to_save`` frames are printed when an inf or nan shows up. The batch number advances when
the root module's forward returns. ``trace_batch_nums`` prints every frame of those batches (0-indexed)
instead of detecting; ``abort_after_batch_num`` stops the run after that batch.

Where it differs from transformers' (all on purpose):

- Extra lines where transformers sees nothing: keyword arguments (``input[mask]``; unset ``None`` ones are left
  out), dicts, lists, dataclasses and ``ModelOutput``s at any depth (``output[loss]``), so a nan loss inside a
  ``ModelOutput`` is caught. Every line transformers prints is printed the same, in the same order.
- Never crashes the training: empty, bool, integer, complex, sparse, nested, meta, quantized, fp8 tensors
  and tensor subclasses are measured or labelled ("empty", "meta", "unreadable").
- One reduction per tensor; a parameter is measured once per batch (again only if changed in place), an
  activation once even when it is one module's output and the next one's input.
- On accelerators the statistics stay on the device and are read back once per batch, when the root module
  returns (and once at the end of a watched backward pass); the dump still ends at the first bad frame, and
  the ``x has nans``/``x has infs`` lines before it come from the abs max (a nan wins). On CPU it raises at
  the first bad frame, as transformers does.
- The buffer never holds more than ``max_frames_to_save`` frames (transformers' grows without bound after a
  trace); hooks come off with ``.remove()`` or at the end of a ``with`` block; after an ``InfNanDetected``
  the detector starts afresh, so a run that catches it and skips the batch keeps being watched.
- With more than one rank, the dump says which rank and host it comes from; ``file=`` or ``logger=`` redirect
  all output (stdout by default, like transformers).

Beyond it (issue 7): ``check_gradients=True`` watches the backward pass too; fp16/bf16/fp8 values that pass
``headroom`` (50%) of their dtype's largest value are warned about once per module and slot, and once per
tensor (not again where it is passed on unchanged), with the rank when there are several; fp8 e4m3fn
saturation is counted; ``underflow=True`` measures the share of zeros and subnormals in fp16/bf16 tensors
(always shown in traced batches) and prints a summary per batch; the dump is data too (``detector.frames``,
``to_json()``, ``report.plot("overflow.png")``); the exception's message ends with the fix to try
(`advice`, also ``report.advice``), while the dump itself stays transformers' text.

What a batch is: one call of the root module's forward, and the backward that follows it. Under gradient
accumulation every micro-batch is a batch. Under activation checkpointing the recomputed forward calls of
the checkpointed modules show up as forward frames of the same batch, among its backward frames.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Iterable
from functools import partial
from typing import Any, TextIO

import torch

from torchdoctor.numerics.advice import fix_for
from torchdoctor.numerics.dump import OverflowReport, dump_text
from torchdoctor.numerics.frames import Frame
from torchdoctor.numerics.gradients import GradientWatch
from torchdoctor.numerics.measure import Measurement, Measurer
from torchdoctor.numerics.options import check_model, check_options
from torchdoctor.numerics.precision import LIMITS, headroom_message, saturation_message
from torchdoctor.numerics.readback import RawFrame, read_back
from torchdoctor.numerics.stats import abs_min_max, nan_and_inf
from torchdoctor.numerics.walk import expand, frame_items

_REDUCED_PRECISION = set(LIMITS)
# on a batch that never finishes (the root module is never called) read back at least this often
_MAX_PENDING_FRAMES = 4096


class InfNanDetected(ValueError):
    """Raised at the first inf/nan. A ``ValueError``, like transformers', so ``except ValueError`` still works.

    ``batch_number`` (0-indexed batch it happened in), ``module_name`` (qualified name of the module whose
    frame first went bad, ``""`` for the root), ``report`` (the dump text, with ``.frames``, ``.to_json()``,
    ``.plot()``), ``direction`` ("forward" or "backward"). For an fp16/bf16 frame the message ends with what
    to try (``report.advice``: the ``keep_in_fp32`` call, mixed precision, or a broken weight).
    """

    def __init__(
        self, message: str, batch_number: int, module_name: str, report: OverflowReport, direction: str
    ) -> None:
        super().__init__(message)
        self.batch_number = batch_number
        self.module_name = module_name
        self.report = report
        self.direction = direction


class DebugUnderflowOverflow:
    """Watch every module of ``model`` for inf/nan; print the frames that led to the first one, and raise.

    Args:
        model: the module to watch (hooks go on it and on every submodule).
        max_frames_to_save: how many frames back the dump shows.
        trace_batch_nums: print every frame of these batches (0-indexed) instead of detecting.
        abort_after_batch_num: raise ``ValueError`` once this batch has finished.
        file: where the output goes (default ``sys.stdout`` at the time of printing).
        logger: a ``logging.Logger`` to send the output to instead (dumps at ERROR, warnings at WARNING).
        sync: "auto" (accelerators: read back once per batch; CPU: at once), "batch" or "frame".
        check_gradients: also watch the backward pass (module gradients and parameter gradients).
        headroom: warn once per module and slot (and once per tensor) when an fp16/bf16/fp8 value passes
            this fraction of its dtype's largest value; None turns it off.
        underflow: measure the share of zeros and subnormals in fp16/bf16 tensors and print it per batch.

    Examples:
        >>> with DebugUnderflowOverflow(model):             # doctest: +SKIP
        ...     loss = model(**batch).loss
    """

    def __init__(
        self,
        model: torch.nn.Module,
        max_frames_to_save: int = 21,
        trace_batch_nums: Iterable[int] | None = None,
        abort_after_batch_num: int | None = None,
        *,
        file: TextIO | None = None,
        logger: Any = None,
        sync: str = "auto",
        check_gradients: bool = False,
        headroom: float | None = 0.5,
        underflow: bool = False,
    ) -> None:
        check_model(model)
        max_frames_to_save, trace_batch_nums, abort_after_batch_num = check_options(
            max_frames_to_save, trace_batch_nums, abort_after_batch_num, file, sync=sync, headroom=headroom
        )
        self.model = model
        self.max_frames_to_save = max_frames_to_save
        self.trace_batch_nums = trace_batch_nums
        self.abort_after_batch_num = abort_after_batch_num
        self.file = file
        self.logger = logger
        self.sync = sync
        self.check_gradients = check_gradients
        self.headroom = headroom
        self.underflow = underflow
        self.batch_number = 0  # transformers' counter: advances when the root module's forward returns
        self.total_calls = 0
        self.report: OverflowReport | None = None  # the last dump
        self.warnings: list[str] = []  # headroom and saturation warnings given so far
        self.underflow_summary: list[dict[str, Any]] = []  # one entry per batch and direction
        self._trace = set(self.trace_batch_nums)
        self._buffer: deque[RawFrame] = deque(maxlen=max_frames_to_save)
        self._backward_buffer: deque[RawFrame] = deque(maxlen=max_frames_to_save)
        self._banner: int | None = 0  # "*** Starting batch number=N ***" goes into the next frame
        self._pending: list[RawFrame] = []  # frames whose statistics are still on the device
        self._warned: set[tuple[str, str, str]] = set()
        self._values_warned: dict[int, Measurement] = {}  # this batch's values past the headroom, by identity
        self._underflow: dict[str, list] = {}  # direction -> [tiny, numel, worst share, worst slot]
        self._measurer = Measurer(sync, underflow)
        self._measure_activation = self._measurer.activation
        self._gradients = GradientWatch(
            model, self._measurer, self._record, self._finished_batch, self._backward_pass_ended
        )
        self._handles: list[Any] = [
            module.register_forward_hook(partial(self._forward_hook, name), with_kwargs=True)
            for name, module in model.named_modules()
        ]
        if check_gradients:
            self._gradients.install()

    # -- public ----------------------------------------------------------------------------------------

    def remove(self) -> None:
        """Take every hook off the model; the detector stops watching. Safe to call twice."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._gradients.remove()
        self._pending = []
        self._measurer.clear()

    def __enter__(self) -> DebugUnderflowOverflow:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

    @property
    def frames(self) -> list[Frame]:
        """The frames of the last dump as data; before any dump, the forward frames saved so far."""
        return list(self.report.frames) if self.report is not None else [r.frame() for r in self._buffer]

    def to_json(self, indent: int | None = 2) -> str:
        """The last dump (or the frames saved so far) as JSON."""
        import json

        if self.report is not None:
            return self.report.to_json(indent)
        return json.dumps({"detected": None, "frames": [f.to_dict() for f in self.frames]}, indent=indent)

    # -- forward ---------------------------------------------------------------------------------------

    def _forward_hook(
        self, name: str, module: torch.nn.Module, args: tuple, kwargs: dict, output: Any
    ) -> None:
        batch = self.batch_number
        # activation checkpointing re-running a forward during the backward of the last batch
        recomputing = batch > 0 and torch._C._current_graph_task_id() != -1
        if recomputing:
            batch -= 1
        trace = batch in self._trace
        self.total_calls += 1
        is_root = module is self.model
        if is_root:
            self.batch_number += 1
        measurer = self._measurer
        measurer.tiny = self.underflow or trace
        # plain calls instead of `with torch.no_grad()`: this runs for every module call
        grad_was_enabled = torch.is_grad_enabled()
        torch._C._set_grad_enabled(False)
        try:
            items = []
            params = module._parameters
            if params:
                for param_name, param in params.items():
                    if param is not None:
                        items.append((param_name, measurer.parameter(param, batch)))
            items += frame_items(args, kwargs, output, self._measure_activation)
        finally:
            torch._C._set_grad_enabled(grad_was_enabled)
        if self.check_gradients and grad_was_enabled:
            self._gradients.hook_call(name, module, args, output, batch, trace)
        banner = None if recomputing else self._banner  # the next batch's banner waits for its first frame
        raw = RawFrame(name, type(module).__name__, batch, banner, items, self.batch_number, trace)
        if is_root:
            self._banner = self.batch_number
        elif not recomputing:
            self._banner = None
        self._record(raw, end_of_batch=is_root)
        if is_root:
            measurer.new_batch()
            self._values_warned.clear()
            self._gradients.end_of_forward()
            self._summarise_underflow(batch, "forward")
        if self.abort_after_batch_num is not None and self.batch_number > self.abort_after_batch_num:
            raise ValueError(
                f"DebugUnderflowOverflow: aborting after {self.batch_number} batches due to"
                f" `abort_after_batch_num={self.abort_after_batch_num}` arg"
            )

    # -- backward: what the gradient watch asks of the detector ------------------------------------------

    def _finished_batch(self) -> tuple[int, bool]:
        """The batch a backward pass belongs to (the one whose forward returned last), and whether it is traced."""
        batch = max(self.batch_number - 1, 0)
        return batch, batch in self._trace

    def _backward_pass_ended(self) -> None:
        if self._pending:
            self._flush()
        self._values_warned.clear()
        self._summarise_underflow(self._finished_batch()[0], "backward")

    # -- reading back, tracing, dumping ----------------------------------------------------------------

    def _record(self, raw: RawFrame, end_of_batch: bool = False) -> None:
        if self._measurer.defers:
            self._pending.append(raw)
            if end_of_batch or len(self._pending) >= _MAX_PENDING_FRAMES:
                self._flush()
        else:
            self._handle(raw)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        read_back(pending)
        for raw in pending:
            self._handle(raw)

    def _handle(self, raw: RawFrame) -> None:
        buffer = self._buffer if raw.direction == "forward" else self._backward_buffer
        bad = False
        for slot, m in raw.items:
            if m.has:
                bad = True
            elif m.dtype in _REDUCED_PRECISION and not m.label:
                self._check_precision(raw, slot, m)
        if raw.trace:
            buffer.clear()
            self._say_has(raw)
            self._print(raw.frame().text())
            return
        buffer.append(raw)
        if bad:
            self._say_has(raw)
            self._dump_and_raise(raw, buffer)

    def _check_precision(self, raw: RawFrame, slot: str, m: Measurement) -> None:
        """Headroom and saturation warnings (once per module, slot and kind; once per tensor), underflow totals."""
        dtype, high, notes = m.dtype, m.abs_max, m.notes or {}
        # what a module receives was produced elsewhere, and warned about there
        produced = not slot.startswith(("input", "grad_output"))
        if produced:
            where = raw.module_name or raw.class_name
            # a tensor passed on unchanged (Dropout, an identity, a parent returning its child's output) is
            # the same measurement: it was warned about where it was made
            passed_on = id(m) in self._values_warned
            message = headroom_message(where, slot, dtype, high, self.headroom) if self.headroom else ""
            if message:
                self._values_warned[id(m)] = m
                if not passed_on and (where, slot, "headroom") not in self._warned:
                    self._warned.add((where, slot, "headroom"))
                    self._warn(message)
            if notes.get("saturated"):
                self._values_warned[id(m)] = m
                if not passed_on and (where, slot, "saturated") not in self._warned:
                    self._warned.add((where, slot, "saturated"))
                    self._warn(saturation_message(where, slot, dtype, notes["saturated"], notes.get("numel")))
        if "tiny" in notes:
            totals = self._underflow.setdefault(raw.direction, [0, 0, -1.0, ""])
            totals[0] += notes["tiny"]
            totals[1] += notes["numel"]
            share = notes["tiny"] / notes["numel"]
            if share > totals[2]:
                totals[2], totals[3] = share, f"{raw.module_name} {slot}".strip()

    def _summarise_underflow(self, batch: int, direction: str) -> None:
        totals = self._underflow.pop(direction, None)
        if not totals or not totals[1] or not self.underflow:
            return
        tiny, numel, worst, where = totals
        self.underflow_summary.append(
            {
                "batch_number": batch,
                "direction": direction,
                "tiny": tiny,
                "numel": numel,
                "worst": where,
                "worst_share": worst,
            }
        )
        what = "activations" if direction == "forward" else "gradients"
        self._print(
            f"batch {batch} {direction}: {tiny / numel:.1%} of fp16/bf16 {what} are zero or subnormal "
            f"(most: {where} {worst:.1%})"
        )

    def _say_has(self, raw: RawFrame) -> None:
        for name, measurement in raw.items:
            for word in measurement.has or ():
                self._print(f"{name} has {word}")

    def _dump_and_raise(self, raw: RawFrame, buffer: deque[RawFrame]) -> None:
        from torchdoctor.distributed.ranks import current

        frames = [r.frame() for r in buffer]
        frame = frames[-1] if frames else raw.frame()  # max_frames_to_save=0 keeps none
        rank = current()
        rank_line = f"on rank {rank.rank} of {rank.world_size} (host {rank.host})" if rank.distributed else ""
        text = dump_text(frames, raw.header_batch, frame.direction, extra_header=rank_line)
        # into the exception, not the dump: that stays transformers' text
        advice = fix_for(self.model, frame, frames, self.max_frames_to_save)
        report = OverflowReport(
            text,
            frames,
            frame.module_name,
            frame.batch_number,
            frame.direction,
            rank={"rank": rank.rank, "world_size": rank.world_size, "host": rank.host},
            advice=advice,
        )
        self.report = report
        self._print(text, error=True)
        # start afresh: a caller that catches this and skips the batch keeps being watched
        buffer.clear()
        self._pending = []
        self._measurer.new_batch()
        self._values_warned.clear()
        self._gradients.start_afresh()
        where = frame.module_name or "the model"
        raise InfNanDetected(
            "DebugUnderflowOverflow: inf/nan detected, aborting as there is no point running further. "
            "Please scroll up above this traceback to see the activation values prior to this event. "
            f"First inf/nan in {frame.direction} of {where} ({frame.class_name}), batch {frame.batch_number}."
            + (f"\n{advice}" if advice else ""),
            frame.batch_number,
            frame.module_name,
            report,
            frame.direction,
        )

    def _warn(self, message: str) -> None:
        from torchdoctor.distributed.ranks import current

        rank = current()
        if rank.distributed:  # the same words as the dump's rank line
            message = f"{message} on rank {rank.rank} of {rank.world_size} (host {rank.host})"
        self.warnings.append(message)
        if self.logger is not None:
            self.logger.warning(message)
        else:
            self._print(message)

    def _print(self, text: str, error: bool = False) -> None:
        if self.logger is not None:
            (self.logger.error if error else self.logger.info)(text)
        else:
            print(text, file=self.file if self.file is not None else sys.stdout)


def detect_overflow(var: Any, ctx: str) -> bool:
    """Whether ``var`` holds a nan or an inf; prints ``"{ctx} has nans"`` / ``"{ctx} has infs"`` if so.

    Same as ``transformers.debug_utils.detect_overflow`` for a tensor; also takes dicts, lists, tuples,
    dataclasses and ``ModelOutput``s (each inner tensor named ``ctx[key]``), and never raises.

    >>> detect_overflow(torch.tensor([1.0, float("inf")]), "logits")
    logits has infs
    True
    """
    detected = False
    for name, value in expand(var, ctx):
        if not isinstance(value, torch.Tensor):
            continue
        result = abs_min_max(value)
        if isinstance(result, str) or (result[1] == result[1] and result[1] != float("inf")):
            continue
        detected = True
        nan, inf = nan_and_inf(value)
        if nan or not inf:
            print(f"{name} has nans")
        if inf:
            print(f"{name} has infs")
    return detected
