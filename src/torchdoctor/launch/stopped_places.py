"""Where each rank was when Ctrl-C stopped a launch, for the ranks that cannot say it themselves.

A rank stopped by Ctrl-C says where its script was as its KeyboardInterrupt goes by (`bootstrap`). A rank
blocked in torch's C++ code (a collective, a store's wait, ``init_process_group``) never raises it: Python runs
its handler only once the call returns, and the launch ends the process first. So each worker has
``faulthandler`` write its stacks to the launch's folder when SIGINT comes (its handler runs in C, even then),
before Python's own handler; a rank that said where it was removes its note; the launcher says it for the
others, in the same words.
"""

from __future__ import annotations

import faulthandler
import linecache
import os
import re
import signal
import time
from pathlib import Path
from typing import TextIO

from torchdoctor.hang.odd_rank import collective_at, culprit_sentence, odd_rank_out
from torchdoctor.hang.source import Frame, is_user_code
from torchdoctor.hang.stacks import forked_helper, parse_faulthandler

_open: list[TextIO] = []  # the note faulthandler writes to, open until the process ends


def _note(directory: str, rank: str) -> Path:
    return Path(directory) / f"interrupted.{rank}"


def note_where_stopped(directory: str | None, rank: str) -> None:
    """In a worker of a launch (``directory``: its folder): on SIGINT, write this process's stacks there, then
    let Python's handler raise KeyboardInterrupt as before."""
    if not directory:
        return
    try:
        note = open(_note(directory, rank), "w")  # noqa: SIM115 - faulthandler writes to it until the end
    except OSError:  # the launcher removed its folder: the run is over anyway
        return
    faulthandler.register(signal.SIGINT, file=note, all_threads=True, chain=True)
    _open.append(note)


def said_itself(directory: str | None, rank: str, place: str = "") -> None:
    """The rank's KeyboardInterrupt went by: it says where it was itself, its note is not needed; ``place`` (where
    it said it was, "" for no line of the user's) is left for the launcher, which names the rank the others waited
    for (`odd_rank_line`): a rank that raised it was in Python, in no collective."""
    if directory:
        try:
            os.remove(_note(directory, rank))
        except OSError:  # never written, or the folder went
            pass
        try:
            Path(directory, f"said.{rank}").write_text(place)
        except OSError:  # the folder went: the run is over anyway
            pass


def _where_the_rank_was(note: str) -> list[Frame]:
    """The main thread's frames in the rank's own first stack in its note: where it was when the first Ctrl-C came.
    Its forked DataLoader workers inherit the handler and the note, so their stacks (torch's worker loop under the
    rank's ``trainer.fit``, found with a Lightning run) are in it too, in no set order; a later stack of the rank's
    own is its shutdown (a second SIGINT while Lightning tears down), not the step it was stopped in. Read block by
    block: a worker's threads need not repeat the rank's thread ids, so dumps are not told apart by them."""
    blocks = re.split(r"(?m)^(?=(?:Current thread|Thread) 0x[0-9a-fA-F]+)", note)
    threads = [frames for block in blocks for frames in parse_faulthandler(block).values() if frames]
    # a thread threading started has its _bootstrap outermost; the main thread (a rank's or a fork's) does not
    mains = [
        frames
        for frames in threads
        if not (
            frames[0].function == "_bootstrap" and frames[0].file.replace("\\", "/").endswith("/threading.py")
        )
    ]
    own = [frames for frames in mains if not forked_helper(frames)]
    return (own or mains or [[]])[0]


def loader_worker_line(directory: str | None, rank: str, own: set[tuple[str, int]], wait: float = 0.5) -> str:
    """``"data.py:41 in __getitem__: time.sleep(3600)"``: where this rank's DataLoader worker was when Ctrl-C came,
    from the stack it wrote into the rank's note (a forked worker inherits the handler and the note; Ctrl-C at a
    terminal reaches it with the rank). A rank waiting for its loader says only its ``for`` line, the worker's is
    the one that does not return (session 43, minGPT-ddp with a worker stuck in ``__getitem__``). Waits up to
    ``wait`` seconds for the worker's stack; "" where none has a line of the user's under the worker's loop (the
    signal sent to the launch alone does not reach the workers; a worker waiting for its next index). The rank and
    its worker write into the note at once, their lines can mix: a line of the rank's own (``own``: file, line)
    is never said to be the worker's."""
    if not directory:
        return ""
    deadline = time.monotonic() + wait
    while True:
        try:
            note = _note(directory, rank).read_text(errors="replace")
        except OSError:  # never written, or the folder went
            return ""
        found = _worker_line(note, own)
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def _worker_line(note: str, own: set[tuple[str, int]]) -> str:
    blocks = re.split(r"(?m)^(?=(?:Current thread|Thread) 0x[0-9a-fA-F]+)", note)
    for frames in (f for block in blocks for f in parse_faulthandler(block).values()):
        loop = [i for i, f in enumerate(frames) if f.function == "_worker_loop"]
        if not (frames and loop and forked_helper(frames)):
            continue
        users = [f for f in frames[loop[-1] :] if is_user_code(f.file) and (f.file, f.line) not in own]
        if users:
            where = users[-1]
            code = linecache.getline(where.file, where.line).strip()
            return f"{where.file}:{where.line} in {where.function}" + (f": {code}" if code else "")
    return ""


def places_of_the_others(directory: Path) -> list[str]:
    """``torchdoctor: rank 1 was interrupted at train.py:12 in <module>: store.wait(["saved"])`` for each rank
    whose note is left (it never raised KeyboardInterrupt): the innermost line of the user's code in its main
    thread's stack, and the call below it that had not returned."""
    return [
        f"torchdoctor: rank {rank} was interrupted at {place}"
        for rank, (place, _) in _blocked(directory).items()
    ]


def odd_rank_line(directory: Path) -> str:
    """``torchdoctor: ranks 0, 2 were waiting in barrier and rank 1 was not in it (...)`` where every rank's place
    is known and all but one were blocked in the same collective (`odd_rank_out`); "" otherwise."""
    places: dict[int, tuple[str, str | None]] = dict(_blocked(directory))
    for path in directory.glob("said.*"):
        rank = path.suffix.lstrip(".")
        try:
            said = path.read_text(errors="replace").strip()
        except OSError:
            continue
        if rank.isdigit() and said:
            places[int(rank)] = (said, None)
    if set(places) != _started(directory):
        return ""  # a rank that started and said nothing (it had crashed, or no line of it was the user's)
    found = odd_rank_out({rank: collective_at(place) for rank, (place, _) in places.items()})
    if found is None:
        return ""
    return f"torchdoctor: {culprit_sentence(found, places[found[0]][0])}."


def _started(directory: Path) -> set[int]:
    """The ranks whose worker started here: ``started.RANK.PID`` (`torchdoctor.launch.bootstrap.mark_started`)."""
    names = (path.name.split(".") for path in directory.glob("started.*"))
    return {int(parts[1]) for parts in names if len(parts) == 3 and parts[1].isdigit()}


def _blocked(directory: Path) -> dict[int, tuple[str, str | None]]:
    """{rank: (where it was, the call below the user's line that had not returned)} for each rank whose note is
    left, in the order of the ranks."""
    found: dict[int, tuple[str, str | None]] = {}
    for path in sorted(directory.glob("interrupted.*"), key=lambda p: p.suffix):
        rank = path.suffix.lstrip(".")
        try:
            note = path.read_text(errors="replace")
        except OSError:  # gone meanwhile: nothing to say of it
            continue
        if not rank.isdigit():
            continue
        frames = _where_the_rank_was(note)
        user = [i for i, f in enumerate(frames) if is_user_code(f.file)]
        if not user:
            continue
        where = frames[user[-1]]
        code = linecache.getline(where.file, where.line).strip()
        below = frames[user[-1] + 1 :]
        waiting = f" (blocked in {below[-1].function}, which had not returned)" if below else ""
        place = f"{where.file}:{where.line} in {where.function}" + (f": {code}" if code else "") + waiting
        found[int(rank)] = (place, below[-1].function if below else None)
    return dict(sorted(found.items()))
