"""Launcher mode, in the launcher: ask every worker for its stack (a signal; ``faulthandler`` answers even in
C code), read the answers, and say what a rank's silence means (its process state); a rank that waits for
its DataLoader workers has their stacks asked for too.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from torchdoctor.hang.files import RankFiles
from torchdoctor.hang.flight_records import FLIGHT_RECORDER_REQUEST, answered, began_answering
from torchdoctor.hang.progress import children_of
from torchdoctor.hang.source import Frame
from torchdoctor.hang.stack_signal import catches
from torchdoctor.hang.stacks import RankStack, parse_faulthandler
from torchdoctor.hang.worker import DUMP_SIGNAL
from torchdoctor.process_state import is_running, stat_of, wait_channel

# /proc/PID/stat's state letters, for a rank that does not answer: what its silence means
_STATES = {
    "T": "its process is stopped (SIGSTOP or Ctrl-Z, a debugger, a scheduler's suspend): it runs nothing "
    "until `kill -CONT {pid}`",
    "t": "its process is stopped by a debugger (ptrace): it runs nothing until the debugger lets go",
    "D": "its process waits inside the kernel, uninterruptibly (disk, network filesystem or driver I/O; "
    "or swapping){wchan}",
    "Z": "its process has exited (a zombie its parent has not collected)",
    "R": "its process is running but did not answer: busy in a C call that blocks signals, or starved of "
    "CPU (swapping, an oversubscribed node)",
    "S": "its process sleeps in a C call{wchan} and did not answer the signal",
}


def silence(pid: int) -> str:
    """What it means that process ``pid`` gave no stack: ``"its process is stopped (...)"``."""
    stat = stat_of(pid)
    if stat is None:
        return "the process had already exited"
    letter, channel = stat.state, wait_channel(pid)
    said = _STATES.get(letter, f"its process state is {letter!r}")
    return said.format(pid=pid, wchan=f" (in {channel})" if channel else "")


def workers_in(directory: Path) -> list[dict]:
    """What each worker that started said about itself (its ``rank<N>.json``: rank, pid, host, ...)."""
    workers = []
    for path in sorted(directory.glob("rank*.json")):
        try:
            workers.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return workers


def workers_running(directory: Path) -> bool:
    """Whether any worker that started (its ``rank<N>.json``, the latest of a restart) still runs."""
    return any(is_running(w.get("pid", -1), w.get("started")) for w in workers_in(directory))


# A worker's sampler thread looks for the request every second at most (`worker.prepare_worker`) and begins its
# answer by writing its counts. One that has not begun this long after the request, while its stack came, runs
# no Python thread: its main thread holds the GIL in C code (a custom op, a regex backtracking), and the rest of
# the wait would only delay the report. One that began gets the whole wait for its dump.
START_ANSWER = 2.0
# A process stopped (SIGSTOP, Ctrl-Z, a debugger's stop) runs nothing, so it cannot answer until someone continues
# it: one that stayed stopped from the request to START_ANSWER is not waited for longer.
STOPPED = ("T", "t")


def collect_stacks(directory: Path, wait: float = 5.0) -> list[RankStack]:
    """Signal every live worker to write its stack, wait (at most ``wait`` seconds) and read them."""
    workers = workers_in(directory)
    asked = []
    stacks = []
    try:
        (directory / FLIGHT_RECORDER_REQUEST).touch()  # each worker's sampler thread answers within a second
        asked_ns = (directory / FLIGHT_RECORDER_REQUEST).stat().st_mtime_ns
    except OSError:
        asked_ns = None
    start_at: dict[int, int] = {}  # where each stack file ends before this request: a second one appends
    for worker in workers:
        stack = RankStack(worker["rank"], worker["pid"], worker.get("host", ""))
        stacks.append(stack)
        try:
            start_at[stack.rank] = (directory / f"rank{worker['rank']}.stack").stat().st_size
        except OSError:
            start_at[stack.rank] = 0
        if (directory / f"rank{worker['rank']}.done").exists():
            stack.note = "its script had already returned"
            continue
        if not is_running(worker["pid"], worker.get("started")):
            stack.note = "the process had already exited"
            continue
        if catches(worker["pid"], DUMP_SIGNAL) is False:  # the signal would end the rank, not dump its stack
            stack.note = (
                f"not asked: its handler of signal {int(DUMP_SIGNAL)} was replaced (a library that puts every "
                "signal's handler back) and not yet registered again"
            )
            continue
        try:
            os.kill(worker["pid"], DUMP_SIGNAL)
            asked.append((worker, stack))
        except OSError as error:
            stack.note = f"cannot signal pid {worker['pid']}: {error.strerror}"
    began = time.monotonic()
    deadline = began + wait
    pending = list(asked)
    sizes: dict[int, int] = {}
    recording = [w["rank"] for w, _ in asked]
    moved: set[int] = set()  # ranks seen not stopped since the request
    stopped: list[tuple[dict, RankStack]] = []  # stopped throughout the first START_ANSWER s
    while (pending or recording) and time.monotonic() < deadline:
        time.sleep(0.1)
        recording = [r for r in recording if not answered(directory / f"rank{r}")]
        if asked_ns is not None and time.monotonic() - began >= START_ANSWER:
            recording = _still_answering(directory, [s for _, s in asked], recording, asked_ns)
        for worker, stack in list(pending):
            state = stat_of(worker["pid"])
            if state is None or state.state not in STOPPED:
                moved.add(stack.rank)
            elif stack.rank not in moved and time.monotonic() - began >= START_ANSWER:
                pending.remove((worker, stack))
                stopped.append((worker, stack))
                recording = [r for r in recording if r != stack.rank]
                continue
            path = directory / f"rank{worker['rank']}.stack"
            size = path.stat().st_size if path.exists() else 0
            if size > start_at[stack.rank] and sizes.get(stack.rank) == size:  # written, no longer growing
                try:
                    with open(path, "rb") as dump:
                        dump.seek(start_at[stack.rank])
                        threads = parse_faulthandler(dump.read().decode(errors="replace"))
                except OSError as error:
                    stack.note = f"its stack file {path} could not be read: {error.strerror or error}"
                    pending.remove((worker, stack))
                    continue
                # faulthandler lists the oldest thread, the main one, last
                stack.frames = threads.get(worker.get("main_thread")) or [[], *threads.values()][-1]
                pending.remove((worker, stack))
            sizes[stack.rank] = size
    for waited, silent in ((wait, pending), (START_ANSWER, stopped)):
        for worker, stack in silent:
            stack.note = f"did not answer within {waited:g}s: {silence(worker['pid'])}"
            stack.last_seen = _last_seen(directory, stack.rank)
    for stack in stacks:
        if not stack.frames and not stack.last_seen:
            stack.last_seen = _last_seen(directory, stack.rank)
        elif stack.pid and waits_for_loader(stack.frames):
            stack.helpers = _loader_workers(directory / f"rank{stack.rank}.stack", stack.pid)
    _lock_holders(stacks)
    return stacks


def _still_answering(
    directory: Path, stacks: list[RankStack], recording: list[int], asked_ns: int
) -> list[int]:
    """The ranks of ``recording`` worth waiting for still: not one whose stack came while no Python thread of
    it has begun to answer the request made at ``asked_ns`` (`START_ANSWER`); why is noted in its evidence."""
    for stack in stacks:
        if (
            stack.rank in recording
            and stack.frames
            and not began_answering(directory / f"rank{stack.rank}", asked_ns)
        ):
            recording = [r for r in recording if r != stack.rank]
            stack.evidence.append(
                f"it did not begin its flight-recorder dump within {START_ANSWER:g}s of the request, while its "
                "stack (written from C) came: no Python thread of it ran (its main thread holds the GIL in C code, "
                "or the machine is starved of CPU), so it was not waited for"
            )
    return recording


def _lock_holders(stacks: list[RankStack], locks: str | None = None) -> None:
    """Each rank blocked on a file lock (``flock``, ``fcntl.lockf``) that another rank's process holds: its
    ``lock_held_by``, read from ``/proc/locks`` (a waiter's line starts with ``->``, the holder's has the same
    device and inode). A lock taken before a collective and released after it deadlocks there."""
    if locks is None:
        try:
            locks = Path("/proc/locks").read_text()
        except OSError:  # no /proc: nothing to say of locks
            return
    holders: dict[str, int] = {}
    waiting: dict[int, str] = {}
    for line in locks.splitlines():
        fields = line.split()
        blocked = len(fields) > 1 and fields[1] == "->"
        fields = [f for f in fields[1:] if f != "->"]
        if len(fields) < 5 or not fields[3].isdigit():
            continue
        pid, inode = int(fields[3]), fields[4]
        if blocked:
            waiting[pid] = inode
        else:
            holders.setdefault(inode, pid)
    by_pid = {s.pid: s.rank for s in stacks if s.pid}
    for stack in stacks:
        holder = by_pid.get(holders.get(waiting.get(stack.pid or -1, ""), -1))
        if holder is not None and holder != stack.rank:
            stack.lock_held_by = holder


def waits_for_loader(frames: list[Frame]) -> bool:
    """Whether the innermost frames wait for a DataLoader worker's batch."""
    return any(
        f.file.replace(os.sep, "/").endswith("torch/utils/data/dataloader.py")
        and f.function in ("_try_get_data", "_get_data")
        for f in frames[-6:]
    )


def _loader_workers(stack_file: Path, pid: int, wait: float = 3.0) -> list[tuple[int, list[Frame]]]:
    """The stacks of ``pid``'s child processes (its DataLoader workers, forked with faulthandler's handler
    and the open stack file): each is asked in turn, and its dump read from the end of the file."""
    found = []
    for child in children_of(pid):
        # a child not forked from the rank (spawned) has no handler: the signal would end it
        if catches(child, DUMP_SIGNAL) is False:
            continue
        try:
            before = stack_file.stat().st_size
            os.kill(child, DUMP_SIGNAL)
        except OSError:  # gone meanwhile, or the file went with the folder
            continue
        deadline, size = time.monotonic() + wait, -1
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = stack_file.stat().st_size if stack_file.exists() else 0
            if now > before and now == size:
                break
            size = now
        with open(stack_file, "rb") as dump:
            dump.seek(before)
            threads = parse_faulthandler(dump.read().decode(errors="replace"))
        if threads:
            found.append((child, list(threads.values())[-1]))
    return found


def _last_seen(directory: Path, rank: int) -> list[Frame]:
    """Where the rank's sampler last saw its main thread move (``rank<N>.where``), or nothing."""
    try:
        return [Frame(*f) for f in json.loads(RankFiles(directory, rank).where.read_text())]
    except (OSError, ValueError, TypeError):  # never written (a rank that never moved): nothing seen
        return []
