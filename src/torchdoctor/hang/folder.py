"""The hang verdict after the fact, from the folder ``torchdoctor launch --watchdog`` left.

Reads what each rank left (`torchdoctor.hang.files`): its stack, its flight-recorder dump, its call sites,
where it was last seen moving; a rank whose file is missing, empty or unreadable is kept with the reason,
and the verdict is made from the rest, as the watchdog made it at the time.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from torchdoctor.findings import Finding
from torchdoctor.hang.at_exit import KIND as EXIT_KIND
from torchdoctor.hang.failure import EXITS_FILE, failure_verdict
from torchdoctor.hang.files import RankFiles, ranks_with_files, written_at
from torchdoctor.hang.flight_records import read_flight_records
from torchdoctor.hang.places import grouped
from torchdoctor.hang.report import verdict
from torchdoctor.hang.source import Frame
from torchdoctor.hang.stacks import RankStack, dumps_in, forked_helper
from torchdoctor.hang.verdict import Verdict


def stacks_in(directory: Path) -> list[RankStack]:
    """One `RankStack` per rank that left a file in ``directory``: its main thread's frames from
    ``rank<N>.stack``, or the reason there are none."""
    stacks = []
    fired = written_at(directory / "flight-recorder.request")  # when the watchdog fired, where it did
    for rank in ranks_with_files(directory):
        files = RankFiles(directory, rank)
        meta = _meta(files)
        stack = RankStack(rank, meta.get("pid"), str(meta.get("host", "")))
        stacks.append(stack)
        done = written_at(files.done)
        # a rank stopped with the run after the watchdog fired leaves its .done then: it had not returned
        if done and (not fired or done < fired):
            stack.note = "its script had already returned"
        else:
            stack.frames, stack.helpers, stack.note = _main_thread(files, meta.get("main_thread"))
        if not stack.frames:
            try:
                stack.last_seen = [Frame(*f) for f in json.loads(files.where.read_text())]
            except (OSError, ValueError, TypeError):  # never written: the rank never moved, or is gone
                pass
        where = meta.get("cwd")
        stack.frames, stack.last_seen = _from(where, stack.frames), _from(where, stack.last_seen)
        stack.helpers = [(pid, _from(where, frames)) for pid, frames in stack.helpers]
    return stacks


def _from(directory: object, frames: list[Frame]) -> list[Frame]:
    """``frames`` with each relative path (a script started as ``train.py``) made absolute from the worker's
    folder, where the file is there: ``explain`` run from another folder reads the lines, and the conditions
    on the rank around them, as the watchdog did."""
    if not isinstance(directory, str) or not directory:
        return frames
    found = []
    for frame in frames:
        path = os.path.join(directory, frame.file)
        relative = not (os.path.isabs(frame.file) or frame.file.startswith("<"))
        found.append(Frame(path, frame.line, frame.function) if relative and os.path.isfile(path) else frame)
    return found


def _meta(files: RankFiles) -> dict:
    try:
        meta = json.loads(files.meta.read_text())
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError):  # the stack and dump still speak for the rank
        return {}


def _main_thread(
    files: RankFiles, main: int | None
) -> tuple[list[Frame], list[tuple[int, list[Frame]]], str]:
    """The rank's main thread at its last dump, and its DataLoader workers' stacks dumped after it (as the
    watchdog asked them, pid unknown here: 0), or why there is no stack."""
    try:
        text = files.stack.read_text(errors="replace")
    except FileNotFoundError:
        return [], [], "no stack file"
    except OSError as error:
        return [], [], f"its stack file could not be read: {error.strerror or error}"
    # faulthandler lists the oldest thread, the main one, last
    mains = [d.get(main) or list(d.values())[-1] for d in dumps_in(text)]
    own = [i for i, frames in enumerate(mains) if not forked_helper(frames)]
    if not own:
        return [], [], "its stack file is empty (the rank did not answer the watchdog's signal)"
    helpers = [(0, frames) for frames in mains[own[-1] + 1 :] if forked_helper(frames)]
    return mains[own[-1]], helpers, ""


def folder_verdict(directory: Path) -> tuple[list[RankStack], dict, Verdict]:
    """The stacks, the flight-recorder records and the verdict for the watchdog folder ``directory``: the
    hang verdict when the ranks left stacks, the failed job's verdict (`failure.failure_verdict`) when they
    left none and some rank died or raised."""
    stacks = stacks_in(directory)
    notes: dict[int, list[str]] = {}
    records = read_flight_records(directory, notes)
    folders = {rank: _meta(RankFiles(directory, rank)).get("cwd") for rank in records}
    for rank, record in records.items():
        for collectives in record.collectives.values():
            for collective in collectives:
                collective.frames = _from(folders[rank], collective.frames)
    by_rank = {s.rank: s for s in stacks}
    for rank, reasons in notes.items():
        if rank in by_rank:
            by_rank[rank].evidence += reasons
    # the watchdog fired (it asked for the dumps): a hang, whatever is missing
    asked = (directory / "flight-recorder.request").exists()
    at_exit = _exit_verdict(directory)
    if not asked and at_exit is not None:  # the launcher saw a process outlive its script
        return stacks, records, at_exit
    if not asked and not any(_has_stack(RankFiles(directory, s.rank)) for s in stacks):  # a failed job
        failed = failure_verdict(directory, _torchrun_output(directory))
        if failed is not None:
            return stacks, records, failed
    return stacks, records, verdict(stacks, records)


def _exit_verdict(directory: Path) -> Verdict | None:
    """The launcher's verdict on a hang at exit (`torchdoctor.hang.at_exit`), from ``verdict.json``: a rank
    whose process outlived its script leaves no stack, and whether it was still running is known only then."""
    try:
        said = json.loads((directory / "verdict.json").read_text())
        if said.get("kind") != EXIT_KIND:
            return None
        where = said.get("where")
        at = Frame(where["file"], int(where["line"]), "") if where else None
        return Verdict(str(said["text"]), EXIT_KIND, [int(r) for r in said["culprits"]], at)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):  # none, or not ours: read the rest
        return None


def _has_stack(files: RankFiles) -> bool:
    try:
        return files.stack.stat().st_size > 0
    except OSError:  # no stack file: nothing was asked of this rank
        return False


def _torchrun_output(directory: Path) -> str:
    """What torchrun said about the workers' exits: its summary's exit codes, kept by the launcher, and its
    error files, where its log folder is there (``torchrun/``)."""
    texts = []
    for path in [directory / EXITS_FILE, *sorted((directory / "torchrun").rglob("error.json"))[:64]]:
        try:
            texts.append(path.read_text(errors="replace"))
        except OSError:  # one file fewer (an older folder has no torchrun.exits): the ranks' own files speak
            continue
    return "\n".join(texts)


OURS = re.compile(
    r"^(rank\d+\.(json|stack|fr|fr-none|calls|counts|where|done|beat|exit|fatal|tmp)|verdict\.json|torchrun\.exits"
    r"|flight-recorder\.request|started\.\d+\.\d+|interrupted\.\d+|said\.\d+)$"
)


def is_ours(path: Path) -> bool:
    """A file of ours in a watchdog folder (read by `folder_finding`, not as a log)."""
    return bool(OURS.match(path.name))


def folder_finding(directory: Path) -> Finding:
    """`torchdoctor explain FOLDER`'s finding for a watchdog folder: the same verdict the watchdog gave."""
    stacks, records, found = folder_verdict(directory)
    details = {
        **found.to_dict(),
        "folder": str(directory),
        "ranks": [s.rank for s in stacks],
        "dumps": sorted(records),
        "evidence_not_used": {s.rank: s.evidence for s in stacks if s.evidence},
    }
    lines = found.text.splitlines()
    summary = lines[0] if lines else found.kind
    rest = lines[1:]
    if found.culprits:
        where = f" at {found.where.file}:{found.where.line}" if found.where else ""
        rest.append(f"Culprit: rank(s) {', '.join(map(str, found.culprits))}{where}.")
    # a call every rank made with sizes of its own blames no rank, yet is the job's failure, and sure
    sure = found.kind == "mismatch" and found.where is not None
    if found.kind in ("all_inside", "stuck", "unclear") or not (found.culprits or sure):
        status = "warn"
    else:
        status = "fail"
    where_ranks = grouped(stacks) if any(s.frames for s in stacks) else []
    fix = "\n".join(rest + ([""] + where_ranks if where_ranks else []))
    return Finding("log.hang_verdict", status, summary, details, fix or None)
