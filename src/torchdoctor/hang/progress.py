"""What counts as progress in a rank, and the thread that watches for it.

**Progress** means any of:

- the Python stack of a rank's main thread changed since the last look (a thread samples it every second,
  reading only; a training loop moves all the time, a rank waiting in a collective or a sleep does not);
- a rank called `heartbeat()` (for a step that sits on one line, one long C call, for minutes);
- under ``torchdoctor launch``, a worker wrote anything to stdout or stderr (`torchdoctor.hang.supervise`).

A main thread that waits for a DataLoader worker moves while the worker uses CPU; one loading a large
extension (``import torch``) sits on one line for seconds, which counts as progress for ``IMPORT_GRACE`` s.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from torchdoctor.hang.source import Frame
from torchdoctor.hang.stacks import frames_of

_beat = [time.monotonic()]  # when this process last called heartbeat()


def heartbeat() -> None:
    """Tell the watchdog this rank is making progress: call it once per step where one step may sit on a
    single line for longer than the watchdog's timeout (a long C call, a slow ``next(loader)``)."""
    _beat[0] = time.monotonic()


IMPORT_GRACE = 120.0


def _importing(frame) -> bool:
    """Whether the innermost frame is the import machinery's (a module being loaded)."""
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib")


def _waits_for_loader_frame(frame) -> bool:
    """Whether the main thread (its innermost frames) waits for a DataLoader worker's batch."""
    for _ in range(6):
        if frame is None:
            return False
        if frame.f_code.co_name in ("_try_get_data", "_get_data") and frame.f_code.co_filename.endswith(
            "dataloader.py"
        ):
            return True
        frame = frame.f_back
    return False


def _children_cpu(pid: int) -> int:
    """CPU ticks (user + system) the child processes of ``pid`` have used so far; 0 where there is no /proc."""
    total = 0
    for child in children_of(pid):
        try:
            with open(f"/proc/{child}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):  # gone meanwhile: it works no more
            continue
    return total


def _stack_signature(frame) -> tuple:
    signature = []
    while frame is not None:
        signature.append((id(frame.f_code), frame.f_lineno))
        frame = frame.f_back
    return tuple(signature)


class ProgressSampler:
    """A daemon thread that looks at the main thread's stack every ``interval`` seconds and calls
    ``on_progress()`` when it moved or `heartbeat()` was called, and ``on_idle(idle_seconds)`` when not;
    ``on_tick()`` first, every time."""

    def __init__(
        self,
        interval: float,
        on_progress: Callable[[], None] = lambda: None,
        on_idle: Callable[[float], None] = lambda idle: None,
        on_tick: Callable[[], None] = lambda: None,
    ) -> None:
        self.interval = interval
        self.on_progress, self.on_idle, self.on_tick = on_progress, on_idle, on_tick
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        self._children_busy = 0  # CPU ticks of this process's children (DataLoader workers) last seen
        self._thread = threading.Thread(target=self._run, name="torchdoctor-watchdog", daemon=True)

    def start(self) -> ProgressSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        last_signature, last_beat, last_move = None, _beat[0], time.monotonic()
        while not self._stop.wait(self.interval):
            self.on_tick()
            frame = sys._current_frames().get(self._main)
            signature = _stack_signature(frame)
            importing = _importing(frame)
            loading = signature == last_signature and _waits_for_loader_frame(frame)
            del frame
            if loading:  # the main thread waits for a DataLoader worker: progress while the worker works
                busy = _children_cpu(os.getpid())
                if busy > self._children_busy:
                    self._children_busy = busy
                    last_move = time.monotonic()
                    self.on_progress()
                    continue
            # loading a large extension (``import torch``) sits on one line for seconds on a busy machine:
            # that is progress, for at most IMPORT_GRACE seconds (an import that never ends is a hang too)
            if importing and time.monotonic() - last_move < IMPORT_GRACE:
                last_signature = signature
                self.on_progress()
                continue
            if signature != last_signature or _beat[0] != last_beat:
                last_signature, last_beat, last_move = signature, _beat[0], time.monotonic()
                self.on_progress()
            else:
                self.on_idle(time.monotonic() - last_move)


def children_of(pid: int) -> list[int]:
    """The child processes of ``pid`` (from ``/proc/PID/task/*/children``); none where there is no /proc."""
    children = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            children += [int(c) for c in (task / "children").read_text().split()]
    except (OSError, ValueError):  # gone, or no /proc: no helpers to ask
        pass
    return children


def main_frames() -> list[Frame]:
    """The main thread's frames now, outermost first (from any thread)."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    return frames_of(frame) if frame is not None else []
