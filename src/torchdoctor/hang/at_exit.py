"""A hang at exit: every rank's script has returned, yet a rank's process does not end.

Python waits at exit for every thread that is not a daemon (a logging or upload thread the script started and
never stopped), then runs its ``atexit`` handlers and destructors; a rank stuck there shows no stack (it no
longer answers the watchdog's signal) and makes no progress, and torchrun waits for it forever. Each worker
notes, as its script returns, the non-daemon threads still running and where (`worker.threads_left`, in
``rank<N>.done``); the launcher names a rank whose process outlives its script by the watchdog's time
(`stuck_at_exit`, `exit_verdict`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from torchdoctor.hang.collect import workers_in
from torchdoctor.hang.files import RankFiles, written_at
from torchdoctor.hang.progress import IMPORT_GRACE
from torchdoctor.hang.source import Frame, is_user_code
from torchdoctor.hang.verdict import Verdict
from torchdoctor.process_state import is_running

KIND = "exit"


def stuck_at_exit(
    directory: Path, timeout: float, moving: dict[int, tuple[int, float]], now: float | None = None
) -> list[tuple[int, float, list]]:
    """``(rank, seconds since its script returned, threads it left)`` of each rank whose process still runs
    ``timeout`` seconds or more after its script returned without using any CPU meanwhile (a process tearing
    torch down on a busy machine takes seconds, and moves), when no rank's script still runs (a rank that
    finished first while the others train is not stuck); empty otherwise. ``moving``: rank -> (its CPU
    ticks, when they last grew), kept by the caller between looks."""
    now = time.time() if now is None else now
    stuck = []
    for worker in workers_in(directory):
        files = RankFiles(directory, worker["rank"])
        alive = is_running(worker["pid"], worker.get("started"))
        returned = written_at(files.done)
        if alive and not returned:
            return []  # a script still runs: the watchdog's ordinary watch covers it
        if not alive:
            continue
        ticks = _cpu_ticks(worker["pid"])
        seen, since = moving.get(worker["rank"], (None, returned))
        if ticks != seen:
            moving[worker["rank"]] = (ticks, since if seen is None else now)
        since = moving[worker["rank"]][1]
        threads = _threads(files.done)
        # without a thread Python waits for, the shutdown may be a clean-up that waits on the network (a
        # logger's upload): given as long as a module's import before it is called stuck
        if now - max(returned, since) >= (timeout if threads else max(timeout, IMPORT_GRACE)):
            stuck.append((worker["rank"], now - returned, threads))
    return stuck


def _cpu_ticks(pid: int) -> int | None:
    """CPU ticks (user + system) process ``pid`` has used, or None without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):  # gone meanwhile, or no /proc
        return None


def _threads(done: Path) -> list:
    try:
        said = json.loads(done.read_text() or "{}")
        return [t for t in said.get("threads_left", []) if isinstance(t, dict)]
    except (OSError, ValueError, AttributeError):  # an older or empty note: the threads are unknown
        return []


def exit_verdict(stuck: list[tuple[int, float, list]]) -> Verdict:
    """The verdict on ranks whose process outlived their script: the thread Python waits for, by name and
    line, or the shutdown step that does not return."""
    sentences, where = [], None
    for rank, seconds, threads in stuck:
        named = []
        for thread in threads:
            frames = [Frame(*f) for f in thread.get("frames", [])]
            inner = next((f for f in reversed(frames) if is_user_code(f.file)), None)
            where = where or inner
            named.append(f"'{thread.get('name', '?')}'" + (f" ({inner})" if inner else ""))
        head = f"rank {rank}'s script returned {seconds:.0f}s ago, but its process has not ended"
        if named:
            sentences.append(
                f"{head}: Python waits at exit for its non-daemon thread(s) {', '.join(named)}. Stop the thread "
                "and join() it before the script returns, or start it with daemon=True."
            )
        else:
            sentences.append(
                f"{head}: a step of its interpreter's shutdown does not return (an atexit handler, the "
                "destructor of a process group, of a DataLoader's workers or of a thread pool)."
            )
    return Verdict("\n".join(sentences), KIND, [rank for rank, _, _ in stuck], where)


def exit_report(stuck: list[tuple[int, float, list]], timeout: float, directory: Path) -> tuple[str, Verdict]:
    """The launcher's report of a hang at exit, in the hang report's form, and its verdict."""
    found = exit_verdict(stuck)
    lines = [f"torchdoctor: hang: no progress for {timeout:g}s. Where every rank is:", ""]
    for rank, _, threads in stuck:
        names = ", ".join(f"'{t.get('name', '?')}'" for t in threads)
        lines.append(
            f"rank {rank}: its script returned; its process waits at exit"
            + (f" for its non-daemon thread(s) {names}" if names else "")
        )
        for thread in threads:
            user = [Frame(*f) for f in thread.get("frames", []) if is_user_code(f[0])]
            lines += [f"    {f}" for f in reversed(user[-4:])]
    lines += ["", found.text]
    if found.culprits:
        at = f" at {found.where.file}:{found.where.line}" if found.where else ""
        lines.append(f"Culprit: rank(s) {', '.join(map(str, found.culprits))}{at}.")
    # not "What each rank left": explain reads that line as a failed job's, whose cause is a traceback
    lines.append(
        f"What the ranks noted as their scripts returned: {directory}/rank*.done. The run was stopped."
    )
    return "\n".join(lines) + "\n", found
