"""Rich's boxed traceback (``rich.traceback.install()``: accelerate's launcher, typer's CLIs, kohya's scripts and
others print it) read as Python's own, so that its frames and the user's line are found as in a plain one.

Inside the box a frame is a line ``│ /path/train.py:13 in main │`` (a long path or name wrapped onto the next
line), then the code around the line, the line itself marked ``❱``. Each boxed line becomes one line (the same
count, so line numbers still point into the log): the header ``Traceback (most recent call last):``, each frame
``  File "/path/train.py", line 13, in main`` followed by its marked code line, the rest blank.
"""

from __future__ import annotations

import re

_TOP = re.compile(r"^\s*╭─+ Traceback \(most recent call last\) ─+╮\s*$")
_BOTTOM = re.compile(r"^\s*╰─+╯\s*$")
_INNER = re.compile(r"^\s*│ ?(?P<text>.*?)\s*│\s*$")
_CODE = re.compile(r"^(?:❱\s*|\s+)\d+(?:\s+│|\s*$)")
_MARKED = re.compile(r"^❱\s*\d+\s│?(?P<code>.*)$")
_HEADER = re.compile(r"^(?P<file>\S.{0,500}?):(?P<line>\d+) in (?P<function>\S{1,200})$")


def unboxed(lines: list[str]) -> list[str]:
    """``lines`` with every rich traceback box in them rewritten as Python prints a traceback (the same number of
    lines); ``lines`` itself when there is none."""
    if not any("╭" in line or "╰" in line for line in lines):
        return lines
    result = list(lines)
    # a box whose top is above the lines given (a long traceback with its locals): read from the first line
    inside = not any(_TOP.match(line) for line in lines) and any(_BOTTOM.match(line) for line in lines)
    header: list[tuple[int, str]] = []  # the lines of a frame's header seen so far: (index, text)
    frame_at = None  # where the last frame's line went: its marked code goes on the line after it
    for at, line in enumerate(lines):
        if not inside:
            if _TOP.match(line):
                inside, header, frame_at = True, [], None
                result[at] = "Traceback (most recent call last):"
            continue
        if _BOTTOM.match(line):
            inside = False
            result[at] = ""
            continue
        inner = _INNER.match(line)
        text = inner["text"] if inner else ""
        result[at] = ""
        marked = _MARKED.match(text)
        if marked and frame_at is not None and frame_at + 1 < len(result):
            result[frame_at + 1] = "    " + marked["code"].replace("│", " ").strip()
            continue
        if not text or _CODE.match(text) or text.startswith(("╭", "│", "╰")) or "frames hidden" in text:
            header = []
            continue
        header.append((at, text))
        joined = ""
        for _, piece in header:  # wrapped anywhere: inside the path or the line number, or at " in "
            joined += (" " if joined.endswith(" in") or (joined and piece.startswith("in ")) else "") + piece
        found = _HEADER.match(joined)
        if found:
            first = header[0][0]
            result[first] = f'  File "{found["file"]}", line {found["line"]}, in {found["function"]}'
            frame_at, header = first, []
    return result
