"""How long a rank's other threads waited for a CPU: its communication threads among them.

A collective's time is not all the link's. gloo does its sends and receives on threads of its own (and NCCL
its proxy threads); when the machine's other work keeps those threads off a CPU, the rank leaves its
collectives late and looks slow in communication, its link no slower. The training thread's own waiting does
not show it: the kernel queues those threads, not it. The figure is in every window and in the verdict's
figures (``--json``), not yet in the verdict: calling such a rank `host` was tried (2026-11-29) and not kept.
On the healthy runs it came from, both `communication` false alarms were a rank whose collectives took 9-12 ms
longer while its other threads waited 11-15 ms per step longer than usual; but on a machine at load 10 the
planted slow links' threads waited longer too, and 5 of 6 named 10% slow links became `host`
(docs/stragglers-measurements.md).

Read from Linux's ``/proc/self/task/<tid>/schedstat`` (the second field: nanoseconds ready to run but kept
off a CPU), once per published window, not per step: a process with many threads (an intra-op pool of a
hundred) costs a read per thread. A file stays open while its thread lives; the list of threads is read
again at each window. None elsewhere.
"""

from __future__ import annotations

import os
import threading

TASKS = "/proc/self/task"


class OtherThreads:
    """The waiting for a CPU of every thread of this process but the one that created it (the training
    thread), since the last `waited`."""

    def __init__(self) -> None:
        self.me = threading.get_native_id()
        self.open: dict[int, tuple[int, int]] = {}  # thread id -> (its schedstat's fd, nanoseconds so far)
        self.usable = os.path.isdir(TASKS)
        if self.usable:
            self.waited()

    def waited(self) -> float | None:
        """Seconds the other threads waited for a CPU since the last call (threads seen for the first time
        count from now; threads gone since count up to their last read); None where it cannot be read."""
        if not self.usable:
            return None
        try:
            present = {int(name) for name in os.listdir(TASKS)}
        except (OSError, ValueError):
            self.close()
            return None
        total = 0
        for tid in list(self.open):
            fd, before = self.open[tid]
            now = _read(fd) if tid in present else None
            if now is None:
                os.close(fd)
                del self.open[tid]
                continue
            total += max(0, now - before)
            self.open[tid] = (fd, now)
        for tid in present - self.open.keys() - {self.me}:
            try:
                fd = os.open(f"{TASKS}/{tid}/schedstat", os.O_RDONLY)
            except OSError:  # ended meanwhile
                continue
            now = _read(fd)
            if now is None:
                os.close(fd)
            else:
                self.open[tid] = (fd, now)
        return total / 1e9

    def close(self) -> None:
        """Close every file kept open; nothing is read after."""
        for fd, _ in self.open.values():
            os.close(fd)
        self.open.clear()
        self.usable = False


def _read(fd: int) -> int | None:
    """The nanoseconds a thread has waited for a CPU so far, or None once its file cannot be read."""
    try:
        return int(os.pread(fd, 100, 0).split()[1])
    except (OSError, IndexError, ValueError):
        return None
