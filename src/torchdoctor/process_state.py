"""What the kernel says about a process: ``/proc/PID/stat`` read in one place, with the guard against a
reused pid (a pid names one process only together with its start time)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class ProcessStat(NamedTuple):
    """The fields of ``/proc/PID/stat`` we use."""

    parent: int
    group: int
    started: int  # clock ticks after boot: with the pid, it names one process even after the pid is reused
    state: str  # R, S, D, T, Z (zombie), X (dead), ...


def stat_of(pid: int) -> ProcessStat | None:
    """``/proc/PID/stat`` of a process, or None when it is gone (or this system has no ``/proc``)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses
    return ProcessStat(int(fields[1]), int(fields[2]), int(fields[19]), fields[0])


def started_at(pid: int | None = None) -> int | None:
    """The start time of process ``pid`` (default: this one), to tell it later from one that reuses its pid."""
    stat = stat_of(os.getpid() if pid is None else pid)
    return None if stat is None else stat.started


def is_running(pid: int, started: int | None = None) -> bool:
    """Whether process ``pid`` runs (is not a zombie) and, when ``started`` is given, is the process that
    started then rather than a later one with the same pid. Without ``/proc``, asks the kernel."""
    stat = stat_of(pid)
    if stat is not None:
        return stat.state not in ("Z", "X") and (started is None or stat.started == started)
    if os.path.exists("/proc/self/stat"):
        return False  # /proc is there and the pid is not: gone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it runs, but it is not ours
        return started is None
    return True


def wait_channel(pid: int) -> str:
    """Where in the kernel process ``pid`` sleeps (``/proc/PID/wchan``), or "" when it runs or cannot be told."""
    try:
        channel = Path(f"/proc/{pid}/wchan").read_text().strip()
    except OSError:
        return ""
    return "" if channel in ("0", "") else channel
