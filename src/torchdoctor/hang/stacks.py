"""A rank's stack, as the hang report sees it: `RankStack`, read from ``faulthandler``'s text or live frames.

What one rank's stack holds (its frames, outermost first, or why there are none, where it was last seen
moving, its DataLoader workers' stacks), and the plain form it travels in between processes (`stack_dict`).
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field

from torchdoctor.hang.source import Frame


@dataclass
class RankStack:
    """Where one rank was when the stacks were taken; ``frames`` outermost first, empty when unknown."""

    rank: int
    pid: int | None = None
    host: str = ""
    frames: list[Frame] = field(default_factory=list)
    note: str = ""  # why there is no stack: "exited", "did not answer within 5s", ...
    last_seen: list[Frame] = field(default_factory=list)  # where it was last seen moving, when no stack
    evidence: list[str] = field(default_factory=list)  # what of this rank could not be read, and why
    helpers: list[tuple[int, list[Frame]]] = field(
        default_factory=list
    )  # (pid, frames) of its DataLoader workers
    lock_held_by: int | None = None  # the rank holding the file lock this rank waits for (from /proc/locks)


def parse_faulthandler(text: str) -> dict[int, list[Frame]]:
    """Thread id -> frames (outermost first) from what ``faulthandler`` writes."""
    threads: dict[int, list[Frame]] = {}
    frames: list[Frame] | None = None
    for line in text.splitlines():
        header = re.match(r"(?:Current thread|Thread) (0x[0-9a-fA-F]+)", line)
        if header:
            frames = threads.setdefault(int(header[1], 16), [])
            continue
        frame = re.match(r'\s+File "(.*)", line (\d+) in (.*)$', line)
        if frame and frames is not None:
            frames.insert(0, Frame(frame[1], int(frame[2]), frame[3].strip()))
    return threads


def dumps_in(text: str) -> list[dict[int, list[Frame]]]:
    """Each dump in a stack file, in the order written: thread id -> frames (outermost first). One file holds
    several: the rank's own, a second one where the watchdog asked again, then its DataLoader workers' (forked
    with the rank's handler and open file); a thread id seen again starts the next dump."""
    dumps: list[dict[int, list[Frame]]] = []
    lines: list[str] = []
    seen: set[int] = set()
    for line in text.splitlines():
        header = re.match(r"(?:Current thread|Thread) (0x[0-9a-fA-F]+)", line)
        if header and int(header[1], 16) in seen:
            dumps.append(parse_faulthandler("\n".join(lines)))
            lines, seen = [], set()
        if header:
            seen.add(int(header[1], 16))
        lines.append(line)
    if seen:
        dumps.append(parse_faulthandler("\n".join(lines)))
    return dumps


def forked_helper(frames: list[Frame]) -> bool:
    """Whether these frames are a process forked by the rank (a DataLoader worker): its main thread runs on
    under multiprocessing's fork of the rank."""
    return any(
        f.function == "_launch" and f.file.replace("\\", "/").endswith("multiprocessing/popen_fork.py")
        for f in frames
    )


def frames_of(frame) -> list[Frame]:
    """A live Python frame and its callers, outermost first."""
    return [Frame(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack(frame)]


def stack_dict(stack: RankStack) -> dict:
    """The stack as plain data (JSON-able), as a rank sends it to the one that writes the report."""
    return {
        "rank": stack.rank,
        "pid": stack.pid,
        "host": stack.host,
        "frames": [[f.file, f.line, f.function] for f in stack.frames],
    }
