"""The hang verdict after the fact, from the folder ``torchdoctor launch --watchdog`` left.

Reads what each rank left (`torchdoctor.hang.files`): its stack, its flight-recorder dump, its call sites,
where it was last seen moving; a rank whose file is missing, empty or unreadable is kept with the reason,
and the verdict is made from the rest, as the watchdog made it at the time.
"""

from __future__ import annotations

import json
from pathlib import Path

from torchdoctor.hang.files import RankFiles, ranks_with_files
from torchdoctor.hang.report import RankStack, Verdict, parse_faulthandler, verdict
from torchdoctor.hang.source import Frame


def stacks_in(directory: Path) -> list[RankStack]:
    """One `RankStack` per rank that left a file in ``directory``: its main thread's frames from
    ``rank<N>.stack``, or the reason there are none."""
    stacks = []
    for rank in ranks_with_files(directory):
        files = RankFiles(directory, rank)
        meta = _meta(files)
        stack = RankStack(rank, meta.get("pid"), str(meta.get("host", "")))
        stacks.append(stack)
        if files.done.exists():
            stack.note = "its script had already returned"
        else:
            stack.frames, stack.note = _main_thread(files, meta.get("main_thread"))
        if not stack.frames:
            try:
                stack.last_seen = [Frame(*f) for f in json.loads(files.where.read_text())]
            except (OSError, ValueError, TypeError):  # never written: the rank never moved, or is gone
                pass
    return stacks


def _meta(files: RankFiles) -> dict:
    try:
        meta = json.loads(files.meta.read_text())
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError):  # the stack and dump still speak for the rank
        return {}


def _main_thread(files: RankFiles, main: int | None) -> tuple[list[Frame], str]:
    try:
        text = files.stack.read_text(errors="replace")
    except FileNotFoundError:
        return [], "no stack file"
    except OSError as error:
        return [], f"its stack file could not be read: {error.strerror or error}"
    threads = parse_faulthandler(text)
    if not threads:
        return [], "its stack file is empty (the rank did not answer the watchdog's signal)"
    # faulthandler lists the oldest thread, the main one, last
    return threads.get(main) or list(threads.values())[-1], ""


def folder_verdict(directory: Path) -> tuple[list[RankStack], dict, Verdict]:
    """The stacks, the flight-recorder records and the verdict for the watchdog folder ``directory``."""
    from torchdoctor.hang.watchdog import read_flight_records

    stacks = stacks_in(directory)
    notes: dict[int, list[str]] = {}
    records = read_flight_records(directory, notes)
    by_rank = {s.rank: s for s in stacks}
    for rank, reasons in notes.items():
        if rank in by_rank:
            by_rank[rank].evidence += reasons
    return stacks, records, verdict(stacks, records)
