"""The per-step record of one rank: how long each step took and where the time went.

A step runs from one optimizer step to the next (or from one outermost forward to the next when the script
has no optimizer). Within it the hooks (`torchdoctor.stragglers.hooks`) add up the time spent waiting for data
(the DataLoader's ``next()``) and inside collectives, and stamp the wall-clock time this rank arrived at its
last collective of the step. Everything else is the rank's own compute: its thread's CPU time (``time.thread_time``)
and the time the kernel kept it waiting for a CPU tell host contention (a core shared with another process) from more work. At the first `ARRIVALS`
collectives of each step the rank notes the group and the wall-clock time it arrived: comparing them across
ranks tells who arrived last (the straggler) and who waited (its victims).

Every `WINDOW` steps the rank publishes its rows under one store key (`window_key`), which rank 0 reads
(`torchdoctor.stragglers.aggregate`): one ``set`` per rank per window, never a collective. With them, how long
the rank's other threads (gloo's, NCCL's proxies: its communication) waited for a CPU over the window's steps
(``threads_waited``, `torchdoctor.stragglers.threads`): a collective left late for that is not a slow link.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

from torchdoctor.stragglers.device import DeviceClock
from torchdoctor.stragglers.threads import OtherThreads

try:
    import resource
except ImportError:  # Windows: no per-thread usage, the preemptions are None
    resource = None

WINDOW = 10  # steps per published window
ARRIVALS = 8  # collectives per step whose arrival is noted
KEY_PREFIX = "torchdoctor/straggler"
# A row: step seconds, data seconds, collective seconds, CPU seconds of the compute (this thread's), the
# arrivals: [[group, wall-clock time in, out], ...] at the step's first collectives, in order (out only for
# blocking ones), the seconds the thread was ready to run but kept off the CPU (the kernel's run-queue wait;
# None where there is none), and the times the thread was put on a CPU in the step (every wake-up after a
# sleep, every time it got the CPU back from another thread; None where there is none), and the times the kernel
# took the CPU from the thread while it could still run (its involuntary context switches, from getrusage:
# None where there is no per-thread usage). A busy process on the rank's core takes the thread off its CPU more
# often, where its waiting for a CPU, dominated by the machine's load, does not show a 5% share (the README's
# straggler figures); the sleeps in next() and in the collectives add to the first, not to the second. The
# preemptions confirm the waiting for a CPU (`verdict.CONFIRMED`); the times put on a CPU are recorded, not judged.
# Last, the seconds the CUDA device surely worked in the step outside collectives, from CUDA events
# (`torchdoctor.stragglers.device`; None on CPU, where no event is made, and where the events were not done in
# time). Rows recorded before it have no such field and read as CPU rows.
FIELDS = ("step", "data", "comm", "cpu", "arrivals", "runq", "switched", "preempted", "device")
# RUSAGE_THREAD: Linux only (2.7 us a read here, against 4.5 us for the schedstat read)
_THREAD_USAGE = getattr(resource, "RUSAGE_THREAD", None) if resource is not None else None


def window_key(window: int, rank: int) -> str:
    """The store key of ``rank``'s rows of window ``window``."""
    return f"{KEY_PREFIX}/w{window}/r{rank}"


def end_key(rank: int) -> str:
    """The store key a rank sets when its run is over: how many windows it published."""
    return f"{KEY_PREFIX}/end/r{rank}"


class StepRecord:
    """What one rank measured, step by step, and the publishing of it.

    The hooks call `add_data`, `add_comm`, `arrived` and `step_boundary`; ``publish(window, payload)`` gets
    each full window (``{"first_step", "host", "rows", "cpus"}``, handed over: the record keeps no reference to
    it; `torchdoctor.stragglers.watch` has it set in the store as JSON, off this thread); without it the rows
    are dropped. ``"cpus"``: the CPUs the flushing thread (the training thread, but for the last window) may
    run on.
    """

    def __init__(self, window: int = WINDOW) -> None:
        self.window = window
        self.rows: list[list[Any]] = []  # rows not yet published
        self.published = 0  # windows published
        self.latest = -1  # the number of the latest window published
        self.steps = 0
        self.host = socket.gethostname()
        self.publish = None
        self.optimizer: int | None = None  # the id of the optimizer whose steps mark the steps, once seen
        self._lock = threading.Lock()
        self._reset(time.perf_counter(), time.thread_time())
        self._started = False
        self._runq_fd: int | None = None
        self._runq_begin = 0.0
        self._slices_begin = 0
        self._preempted_begin = 0
        self._others: OtherThreads | None = None  # the rank's other threads, from its first step
        self.device: DeviceClock | None = None  # on CUDA: the steps' events (`use_device`)
        self._device_asked = False

    def _reset(self, now: float, cpu_now: float) -> None:
        self.begin, self.cpu_begin = now, cpu_now
        self.data = self.comm = self.cpu_elsewhere = 0.0
        self.arrivals: list[list] = []

    def use_device(self, parameters: Any, again: bool = False) -> None:
        """Time the device too where the training runs on CUDA (``parameters``: the first decides). Asked at the
        first outermost forward (the model's), and ``again`` at the optimizer's first step: a first forward of a
        module without parameters or still on the CPU (a warm-up before ``.cuda()``) does not decide for the
        run, nor an optimizer whose parameters are kept on the CPU (offloaded) for a model on CUDA: the first
        on CUDA is kept. On CPU nothing is made."""
        if self.device is not None or (self._device_asked and not again):
            return
        self._device_asked = True
        self.device = DeviceClock.on(parameters)

    def add_data(self, seconds: float, cpu: float) -> None:
        """Time (and CPU time) spent in a DataLoader ``next()``."""
        self.data += seconds
        self.cpu_elsewhere += cpu

    def add_comm(self, seconds: float, cpu: float) -> None:
        """Time (and CPU time) spent inside a collective."""
        self.comm += seconds
        self.cpu_elsewhere += cpu

    def arrived(self, group: str, wall: float) -> list | None:
        """This rank reached a collective of ``group`` at wall-clock time ``wall``; the entry noted (`left`
        adds when the rank left it), or None past `ARRIVALS`."""
        if len(self.arrivals) < ARRIVALS:
            entry = [group, wall]
            self.arrivals.append(entry)
            return entry
        return None

    @staticmethod
    def left(entry: list | None, wall: float) -> None:
        """The rank left the blocking collective noted as ``entry`` at wall-clock time ``wall``: a rank whose
        collectives end later than its peers' same collectives is slow in communication itself."""
        if entry is not None and len(entry) == 2:
            entry.append(wall)

    def ddp_reduced(self, group: str, ready: float, ready_wall: float, done: float, done_wall: float) -> None:
        """DDP's gradients of one backward: this rank's last one was ready at ``ready`` (wall-clock
        ``ready_wall``: it arrived at the reduction), and the backward returned, reduced, at ``done``."""
        self.comm += max(0.0, done - ready)
        self.left(self.arrived(group, ready_wall), done_wall)

    def restart(self) -> None:
        """Forget the steps so far: from here steps are counted at the optimizer's step, the same point on
        every rank (the forwards counted before it, a calibration or a warm-up, differ from rank to rank)."""
        with self._lock:
            self.rows, self.steps, self._started = [], 0, False
            if self.device is not None:
                self.device.forget()
        self.step_boundary()

    def step_boundary(self) -> None:
        """One step is over: keep its row, publish a full window."""
        now, cpu_now = time.perf_counter(), time.thread_time()
        runq, slices = self._scheduler() or (None, None)
        preempted_now = self._preempted()
        if not self._started:  # the first boundary starts the first step
            self._started = True
            if self._others is None:
                self._others = OtherThreads()
            else:
                self._others.waited()  # restarted: the first window's threads count from here
            self._reset(now, cpu_now)
            self._runq_begin, self._slices_begin = runq or 0.0, slices or 0
            self._preempted_begin = preempted_now or 0
            if self.device is not None:
                self.device.boundary(None)
            return
        comm = self.comm
        step = now - self.begin
        cpu = max(0.0, cpu_now - self.cpu_begin - self.cpu_elsewhere)
        kept_off = None if runq is None else max(0.0, runq - self._runq_begin)
        switched = None if slices is None else max(0, slices - self._slices_begin)
        preempted = None if preempted_now is None else max(0, preempted_now - self._preempted_begin)
        self._runq_begin, self._slices_begin = runq or 0.0, slices or 0
        self._preempted_begin = preempted_now or 0
        row = [step, self.data, min(comm, step), cpu, self.arrivals, kept_off, switched, preempted, None]
        self.rows.append(row)
        self.steps += 1
        self._reset(now, cpu_now)
        if self.device is not None:
            self.device.boundary(row)  # its device time filled in once its events are done
        # a window goes once its rows' device times are read (or given up on: at most `device.LAG` steps late)
        pending = self.device.pending() if self.device is not None else 0
        if len(self.rows) - pending >= self.window:
            self.flush(self.window)

    def _scheduler(self) -> tuple[float, int] | None:
        """(seconds this thread, the training's: the one that steps, has waited for a CPU so far; the times
        it was put on a CPU so far), from Linux's ``/proc/self/task/<tid>/schedstat``; None elsewhere."""
        if self._runq_fd is None:
            try:
                self._runq_fd = os.open(f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY)
            except OSError:  # not Linux, or no schedstat: the host part falls back to wall minus CPU time
                self._runq_fd = -1
        if self._runq_fd < 0:
            return None
        try:
            fields = os.pread(self._runq_fd, 100, 0).split()
            return int(fields[1]) / 1e9, int(fields[2])
        except (OSError, IndexError, ValueError):  # the file went away or changed shape: stop reading it
            self._runq_fd = -1
            return None

    @staticmethod
    def _preempted() -> int | None:
        """The times so far the kernel took the CPU from this thread while it could still run (its
        involuntary context switches); None where there is no per-thread usage."""
        if _THREAD_USAGE is None:
            return None
        try:
            return resource.getrusage(_THREAD_USAGE).ru_nivcsw
        except OSError:
            return None

    def flush(self, count: int | None = None) -> None:
        """Publish the first ``count`` rows kept so far (all by default, the end of the run: each window's
        apart) as their window, numbered by step (window ``w`` holds steps ``w * window`` to
        ``(w + 1) * window - 1`` on every rank); nothing when there are none. Device times not read by then
        stay unknown (None)."""
        if count is None:
            if self.device is not None:
                self.device.settle()
            while len(self.rows) > self.window:
                self.flush(self.window)
        with self._lock:
            if not self.rows:
                return
            if self.publish is None:  # no process group yet: nobody to compare with
                self.rows = []
                return
            first = self.steps - len(self.rows)
            rows, self.rows = self.rows[: count or len(self.rows)], self.rows[count or len(self.rows) :]
            payload = {"first_step": first, "host": self.host, "rows": rows}
            cpus = _cpus()
            if cpus is not None:
                payload["cpus"] = cpus
            if self._others is not None:
                payload["threads_waited"] = self._others.waited()
            self.latest = first // self.window
            self.publish(self.latest, payload)
            self.published += 1


def _cpus() -> list[int] | None:
    """The CPUs the calling thread may run on, or None where the system does not say (not Linux)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    try:
        return sorted(os.sched_getaffinity(0))
    except OSError:
        return None
