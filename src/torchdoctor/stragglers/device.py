"""A rank's device time per step on CUDA, from CUDA events: never a synchronisation, never a collective.

At each step boundary, and just before and after each timed collective (and DDP's gradient reduction), the
record notes a ``torch.cuda.Event(enable_timing=True)`` on the current stream with the host's time then
(`DeviceClock.mark`). A step's events are read once its last one is done (``query()``, a few steps later: the
device runs behind the host), never waited for; a step whose events are not done within `LAG` steps is
published as unknown (None).

Events give the device's time between two points of the stream, idle or not: a rank whose host is slow leaves
its stream idle, and the time between its events grows as much as a rank given more device work. So only the
time the device surely worked is counted (`busy_seconds`): after each point, the time it took to reach that
point once it was noted (its lag behind the host: everything before it was queued by then, so the device
worked without a pause until it got there), at most the time between the two points. The lag is the event's
device time less its host time, offset so that no event is reached before it was noted (the step's, or the
last step read's end carried to this one through the device's time, `carried_lag`, whichever says more: once
the device caught up with the host anywhere in the run, at a ``loss.item()``, a wait for data, a gloo
collective, its lag is known from there on; a device that never did is counted as idle). The time inside
collectives (NCCL's kernels waiting for the peers) is left out. A step's events are all on one stream (the
arithmetic needs one timeline): a mark on another makes the step unknown. A lower bound: the device work that
ran while the host was still queuing more is not counted, the same on every rank.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any

LAG = 10  # steps whose device time may be pending; the oldest beyond is published as unknown
SPANS = 128  # collectives per step bracketed by events (FSDP: a wait per layer); beyond, its device time is unknown
SETTLE = 0.5  # seconds the end of the run waits at most for the last steps' events (`DeviceClock.settle`)


def busy_seconds(marks: list[tuple[float, float, str]], start_lag: float = 0.0) -> tuple[float, float]:
    """(seconds the device surely worked in one step, the lag of its last mark) from the step's marks
    ``(host seconds, device seconds, kind)``, both counted from the step's first mark, in the host's order:
    kind ``"b"`` before a collective, ``"a"`` after it, anything else a plain point. ``start_lag``: what is
    known of the first mark's lag (the previous step's last). Between two marks the device surely worked the
    later mark's lag, at most the device time between them; not inside a collective."""
    if not marks:
        return 0.0, start_lag
    offset = max([start_lag] + [host - device for host, device, _ in marks])  # the first mark's lag
    busy, depth = 0.0, 0
    previous = marks[0]
    depth = 1 if previous[2] == "b" else 0
    for mark in marks[1:]:
        host, device, kind = mark
        lag = max(0.0, device + offset - host)
        if depth == 0:
            busy += max(0.0, min(device - previous[1], lag))
        depth = depth + 1 if kind == "b" else max(0, depth - 1) if kind == "a" else depth
        previous = mark
    return busy, max(0.0, marks[-1][1] + offset - marks[-1][0])


def carried_lag(lag: float, host: float, device: float) -> float:
    """What the lag known of one event (``lag``: how long after the host noted it the device reached it) says
    of a later event's: ``host`` and ``device`` the seconds from the first to the later on the host and on the
    device. A lower bound where ``lag`` is one; exact where it is exact (the device's clock and the host's run
    together). It links a step to the last one read across the steps in between that were not read (given up
    on, captured into a CUDA graph, over `SPANS`, a restart): the previous step's end lag is that step's start
    lag only where the two are the same event."""
    return max(0.0, lag + device - host)


def _guarded(method: Callable) -> Callable:
    """A clock's method that never breaks the training: where CUDA refuses a call (a graph captured from another
    thread, a device that failed), the clock stops, and the device times from then on are unknown (None)."""

    @functools.wraps(method)
    def guarded(self: DeviceClock, *args: Any) -> Any:
        if self.stopped:
            return None
        try:
            return method(self, *args)
        except Exception as error:  # noqa: BLE001 - whatever CUDA raised: the training goes on without the clock
            self.stopped = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            self._pending, self._marks = [], []
            try:  # said once (the clock stays stopped), so that a run's missing device times have their reason
                print(
                    f"torchdoctor: stragglers: stopped timing the GPU from CUDA events (its device time is "
                    f"unknown from here): {self.stopped}",
                    file=sys.stderr,
                    flush=True,
                )
            except (OSError, ValueError):  # stderr closed: nothing to say it on
                pass
            return None

    return guarded


class DeviceClock:
    """The events of the steps on one CUDA device, read when done; `DeviceClock.on` makes one where the
    training runs on CUDA, else None (on CPU no event is ever made)."""

    def __init__(self, torch: Any, device: Any) -> None:
        self._torch = torch
        self._device = device
        self._marks: list[tuple[float, Any, str]] = []  # the running step's: (host time, event, kind)
        self._stream = 0  # the stream the running step's marks are on (its handle; 0: none yet)
        self._spans = 0  # collectives bracketed in the running step
        self._over = (
            False  # the running step's device time is unknown (over `SPANS`, a graph, another stream)
        )
        self._pending: list[tuple[list, list]] = []  # (marks, row) of each step not yet read
        self._held: list = []  # events let go of while a CUDA graph was being captured: destroyed after it
        # the latest step read: its end's host time, event, lag (`carried_lag` takes it to the next step read)
        self._last: tuple[float, Any, float] | None = None
        self.stopped = ""  # why the clock stopped (`_guarded`), or ""

    @staticmethod
    def on(parameters: Any) -> DeviceClock | None:
        """A clock for the CUDA device the first of ``parameters`` (a model's, an optimizer's) lives on, where
        CUDA is initialised in this process; else None."""
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_initialized():  # never initialised on a CPU build
            return None
        for parameter in parameters:
            device = getattr(parameter, "device", None)
            if device is not None and device.type == "cuda":
                return DeviceClock(torch, device)
            return None
        return None

    def _event(self) -> tuple[float, Any, int] | None:
        """(host time, an event on the current stream, that stream's handle) now; None while the stream is being
        captured into a CUDA graph (an event to time may not be recorded there: the step's device time is then
        unknown)."""
        if self._torch.cuda.is_current_stream_capturing():
            return None
        stream = self._torch.cuda.current_stream(self._device)
        now = time.perf_counter()  # before the record: the device cannot reach the event earlier
        event = self._torch.cuda.Event(enable_timing=True)
        event.record(stream)
        return now, event, stream.cuda_stream

    @_guarded
    def mark(self, kind: str) -> None:
        """Note an event on the current stream now: kind ``"b"`` before a collective, ``"a"`` after it. One on
        another stream than the step's (FSDP2 issues its collectives on streams of its own) makes the step's
        device time unknown: the arithmetic of `busy_seconds` holds on one stream."""
        if kind == "b":
            self._spans += 1
            self._over = self._over or self._spans > SPANS
        if self._over:
            return
        noted = self._event()
        if noted is None or noted[2] != self._stream:
            self._over = True
            return
        self._marks.append((noted[0], noted[1], kind))

    @_guarded
    def event_now(self) -> tuple[float, Any, int] | None:
        """(host time, an event on the current stream, its handle) now, for `span` (None while capturing)."""
        return self._event()

    @_guarded
    def span(self, before: tuple[float, Any, int] | None, after: tuple[float, Any, int] | None) -> None:
        """Add a collective noted elsewhere (DDP's reduction: `event_now` when the rank's last gradient was
        ready, and when its backward returned; None where none could be noted)."""
        self._spans += 1
        self._over = (
            self._over
            or self._spans > SPANS
            or before is None
            or after is None
            or not before[2] == after[2] == self._stream
        )
        if self._over:
            return
        self._marks.extend([(before[0], before[1], "b"), (after[0], after[1], "a")])

    @_guarded
    def boundary(self, row: list | None) -> None:
        """A step is over (``row``: its row, whose last field is its device time, to fill in; None for the first
        boundary, which starts the first step): note its end, which starts the next step, and read the steps
        whose events are done. More than `LAG` pending: the oldest is given up on (its device time stays None)."""
        end = self._event()
        if (
            end is None
        ):  # capturing a CUDA graph: the next step's device time is unknown (no start noted); the
            # events dropped are kept until the capture is over, as are the pending (no event destroyed, no query()
            # made while capturing)
            self._held.extend(self._marks)
            self._marks, self._spans, self._stream, self._over = [], 0, 0, True
            return
        self._held = []
        if row is not None and not self._over and self._marks and end[2] == self._stream:
            self._pending.append((self._marks + [(end[0], end[1], "")], row))
        self._marks, self._spans, self._stream, self._over = [(end[0], end[1], "")], 0, end[2], False
        self.read()
        del self._pending[:-LAG]

    @_guarded
    def read(self) -> None:
        """Fill in the device time of the pending steps whose events are all done, oldest first."""
        while self._pending:
            marks, row = self._pending[0]
            # on one stream the events complete in order: the last one first, then (rarely needed) the others
            if not marks[-1][1].query() or not all(event.query() for _, event, _ in marks):
                return
            self._pending.pop(0)
            first_host, first = marks[0][0], marks[0][1]
            # sorted by host time: DDP's reduction is added at its end (`span`), its first event noted earlier
            points = sorted(
                (
                    (host - first_host, first.elapsed_time(event) / 1000.0, kind)
                    for host, event, kind in marks
                ),
                key=lambda point: point[0],
            )
            now = time.perf_counter()
            start = 0.0
            if self._last is not None:  # the step read before: its end is this step's start, or linked to it
                host, event, lag = self._last
                if event is not first:
                    lag = carried_lag(lag, first_host - host, event.elapsed_time(first) / 1000.0)
                start = min(lag, max(0.0, now - first_host))  # reached by now
            row[-1], lag = busy_seconds(points, start)
            # the step's end was done by now: its lag was no longer (this keeps a drift between the host's clock
            # and the device's from adding up over the run, as the lag is carried from step to step)
            end_host, end = marks[-1][0], marks[-1][1]  # the step's end: noted last (`boundary`)
            self._last = (end_host, end, min(lag, max(0.0, now - end_host)))

    def settle(self, seconds: float = SETTLE) -> None:
        """The run is over: read the pending steps as their events get done, asking every millisecond for at most
        ``seconds`` (never a synchronisation: a device that hung costs that long, once); those not done by then
        stay unknown. Without it the last window's steps, the device a few behind, were mostly unknown, and the
        whole last stretch was judged without the device time."""
        deadline = time.perf_counter() + seconds
        while True:
            self.read()
            if not self._pending or self.stopped or time.perf_counter() >= deadline:
                return
            time.sleep(0.001)

    def pending(self) -> int:
        """The steps whose device time is not read yet."""
        return len(self._pending)

    def forget(self) -> None:
        """Drop every step (the record restarted); the latest lag read stays known (`carried_lag`)."""
        self._pending, self._marks, self._spans, self._over = [], [], 0, False
