"""Launcher mode, in the launcher: ``torchdoctor launch --watchdog`` waits for torchrun, passing its output on,
and when no worker made progress for the timeout, collects every worker's stack and flight-recorder dump,
prints one report, writes ``verdict.json`` and stops the run (exit status 1); a job that failed instead gets
the verdict of which rank failed first (`torchdoctor.hang.failure`).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from torchdoctor.distributed.waiting import WAIT_LINE
from torchdoctor.hang.at_exit import exit_report, stuck_at_exit
from torchdoctor.hang.collect import collect_stacks, workers_in, workers_running
from torchdoctor.hang.failure import failure_verdict, keep_exit_codes
from torchdoctor.hang.files import RankFiles
from torchdoctor.hang.flight_records import FLIGHT_RECORDER_REQUEST, read_flight_records, why_no_dumps
from torchdoctor.hang.job import JobExchange
from torchdoctor.hang.places import collective_of
from torchdoctor.hang.progress import IMPORT_GRACE
from torchdoctor.hang.report import format_report, verdict
from torchdoctor.hang.source import is_user_code
from torchdoctor.hang.stacks import RankStack
from torchdoctor.hang.verdict import Verdict
from torchdoctor.process_state import is_running


def stuck_for(directory: Path, last_output: float = 0.0, now: float | None = None) -> float:
    """Seconds since any worker last made progress (``last_output``: when a worker last wrote output, as
    ``time.time()``); 0 while no worker has started the script yet (see ``supervise``'s ``start_timeout``)."""
    now = time.time() if now is None else now
    latest = None
    running = [
        w
        for w in workers_in(directory)
        if not RankFiles(directory, w["rank"]).done.exists() and is_running(w["pid"], w.get("started"))
    ]
    if not running:  # the scripts have all returned or died: a slow exit, or a failure, is not a hang
        return 0.0
    for worker in running:
        try:
            beat = (directory / f"rank{worker['rank']}.beat").stat().st_mtime
        except OSError:
            continue
        latest = beat if latest is None else max(latest, beat)
    if latest is None:
        return 0.0
    return now - max(latest, last_output)


def _still_importing(stacks: list[RankStack], running_for: float) -> bool:
    """Whether every rank that is not in a collective is loading a module, early in the run: while a
    large extension loads (``import torch`` on a busy machine) the sampler thread cannot run, so no
    progress is seen, but the import ends by itself."""
    importing = [s for s in stacks if s.frames and s.frames[-1].file.startswith("<frozen importlib")]
    elsewhere = [s for s in stacks if s.frames and not collective_of(s.frames) and s not in importing]
    return bool(importing) and not elsewhere and running_for < IMPORT_GRACE


def outside_the_scripts(stacks: list[RankStack], scripts: dict[int, str]) -> bool:
    """Whether no rank waits in a collective and no rank's stack shows a line of the user's code (its
    ``scripts``, rank -> path, count as the user's even when installed): every rank is starting (Python and
    runpy before the script's first line) or ending (its script returned: runpy's clean-up, a DataLoader's
    workers shut down as the iterator goes), which is not a hang of the script, however long the step holds
    the GIL on a busy machine."""
    live = [s for s in stacks if s.frames]
    if not live or any(collective_of(s.frames) for s in live):
        return False
    return not any(
        is_user_code(f.file) or os.path.realpath(f.file) == scripts.get(s.rank)
        for s in live
        for f in s.frames
    )


@dataclass
class Supervision:
    """What `supervise` saw: the exit status, and the hang report when the watchdog stopped the run."""

    returncode: int
    report: str = ""


def supervise(
    process: subprocess.Popen,
    directory: Path,
    timeout: float,
    stop_run: Callable[[], None],
    poll: float = 0.25,
    start_timeout: float | None = None,
) -> Supervision:
    """Wait for ``process`` (torchrun, its stdout and stderr piped), passing its output on; when no worker
    made progress for ``timeout`` seconds, collect every worker's stack, call ``stop_run()`` and return the
    report with exit status 1.

    No worker has progress to make before it starts, so the rendezvous is bounded apart: when no worker has
    started ``start_timeout`` seconds after the call, ``stop_run()`` too, and exit status 1 with no report
    (the caller knows which nodes it waited for)."""
    began = time.monotonic()
    last_output = [time.time()]
    said: collections.deque = collections.deque(maxlen=64)  # torchrun's last output: its failure summary
    pumps = [
        threading.Thread(target=_pump, args=(pipe, out, last_output, keep), daemon=True)
        for pipe, out, keep in ((process.stdout, sys.stdout, None), (process.stderr, sys.stderr, said))
    ]
    for pump in pumps:
        pump.start()
    result = None
    job: JobExchange | None = None
    looked_for_job = False
    outside_since = None  # since when every firing has found every rank outside its script (starting, ending)
    moving_at_exit: dict[
        int, tuple[int, float]
    ] = {}  # rank -> CPU ticks of a process past its script, when they grew
    while result is None and process.poll() is None:
        time.sleep(poll)
        if start_timeout is not None and time.monotonic() - began > start_timeout:
            if not workers_in(directory) and process.poll() is None:
                stop_run()
                result = Supervision(1)
                break
        if not looked_for_job:  # once all of this node's workers have started: are there other nodes?
            workers = workers_in(directory)
            # all of them: whether this node hosts rank 0 is only known once rank 0's file is there too
            if workers and len(workers) >= int(workers[0].get("local_world_size", 1)):
                looked_for_job = True
                job = JobExchange.connect(workers)
        asked = job is not None and job.asked(lambda: workers_running(directory))
        if not asked and stuck_for(directory, last_output[0]) < timeout:
            at_exit = stuck_at_exit(directory, timeout, moving_at_exit)
            if at_exit and process.poll() is None:  # every script returned, a process does not end
                text, found = exit_report(at_exit, timeout, directory)
                write_verdict(directory, found, 0.0)
                stop_run()
                result = Supervision(1, text)
            continue
        fired = time.monotonic()
        stacks = collect_stacks(directory)
        scripts = {w["rank"]: w.get("script", "") for w in workers_in(directory)}
        if not asked and outside_the_scripts(stacks, scripts):
            outside_since = outside_since or time.monotonic()
        else:
            outside_since = None
        between = outside_since is not None and time.monotonic() - outside_since < IMPORT_GRACE
        if not asked and (between or _still_importing(stacks, time.monotonic() - began)):
            # loading a module (its thread starved of the GIL), a script not started or already returned: not a hang
            last_output[0] = time.time()
            for path in [
                directory / FLIGHT_RECORDER_REQUEST,
                *directory.glob("rank*.fr"),
                *directory.glob("rank*.fr-none"),
            ]:
                path.unlink(missing_ok=True)  # asked again, answered again, at the real hang
            continue
        notes: dict[int, list[str]] = {}
        records = read_flight_records(directory, notes)
        for stack in stacks:
            stack.evidence += notes.get(stack.rank, [])
        if job is not None:
            result = Supervision(1, job.report(stacks, records, directory, timeout, stop_run))
            break
        if process.poll() is not None:  # finished while we looked: not a hang
            break
        where = f"Full stacks: {directory}/rank*.stack"
        dumps = any(directory.glob("rank*.fr"))  # records may come from call sites alone (rank*.calls)
        where += f", flight-recorder dumps: {directory}/rank*.fr" if dumps else why_no_dumps(directory)
        found = verdict(stacks, records)
        text = format_report(stacks, timeout, where + ". The run was stopped.", records, found=found)
        write_verdict(directory, found, time.monotonic() - fired)
        stop_run()
        result = Supervision(1, text)
    for pump in pumps:
        pump.join(timeout=5)  # an orphaned worker may hold the pipe open; do not wait for it forever
    if result is None:
        result = Supervision(process.wait())
        if result.returncode != 0:
            result.report = _failure_report(directory, b"".join(said).decode(errors="replace"))
    return result


def _failure_report(directory: Path, torchrun_output: str) -> str:
    """The verdict for a job that failed: which rank failed first and where (`failure.failure_verdict`)."""
    keep_exit_codes(directory, torchrun_output)
    found = failure_verdict(directory, torchrun_output)
    if found is None:
        return ""
    write_verdict(directory, found, 0.0)
    lines = failed_lines(found)
    lines.append(f"What each rank left: {directory}/rank*; the verdict as JSON: {directory}/{VERDICT_FILE}.")
    return "\n".join(lines) + "\n"


def failed_lines(found: Verdict) -> list[str]:
    """A failed job's verdict as the launcher prints it: ``torchdoctor: failed: …`` and the culprit."""
    lines = [f"torchdoctor: failed: {found.text}"]
    if found.culprits:
        where = f" at {found.where.file}:{found.where.line}" if found.where else ""
        lines.append(f"Culprit: rank(s) {', '.join(map(str, found.culprits))}{where}.")
    return lines


VERDICT_FILE = "verdict.json"


def write_verdict(directory: Path, found: Verdict, seconds: float) -> None:
    """``verdict.json`` in the kept folder: the verdict for scripts (culprit ranks, file and line, kind)
    and how many seconds it took from the watchdog firing."""
    try:
        (directory / VERDICT_FILE).write_text(json.dumps({**found.to_dict(), "seconds": round(seconds, 2)}))
    except OSError:  # the folder went: the report on stderr still says it all
        pass


def _pump(pipe, out: TextIO, last_output: list[float], keep: collections.deque | None = None) -> None:
    """Copy ``pipe`` to ``out`` as it comes (no line buffering: progress bars use \\r), noting the time
    (and keeping the last chunks in ``keep``)."""
    target = getattr(out, "buffer", None)
    while True:
        chunk = os.read(pipe.fileno(), 65536)
        if not chunk:
            return
        if _is_progress(chunk):
            last_output[0] = time.time()
        if keep is not None:
            keep.append(chunk)
        if target is not None:
            target.write(chunk)
        else:
            out.write(chunk.decode(errors="replace"))
        out.flush()


def _is_progress(chunk: bytes) -> bool:
    """Whether a worker's output says it moved: any line but those a wait prints while nothing moves (debug
    mode's ``torchdoctor: waited 15 s of 300 for rank 1 …``, every 10 s, would otherwise keep a watchdog of 10 s
    or more from ever firing)."""
    return bool(WAIT_LINE.sub(b"", chunk).strip())
