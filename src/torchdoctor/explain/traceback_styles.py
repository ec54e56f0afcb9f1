"""Tracebacks printed otherwise than Python prints them, read as Python's own, so that their frames and the
user's line are found as in a plain one. Each is rewritten line for line (the same count, so line numbers still
point into the log): the header ``Traceback (most recent call last):``, each frame
``  File "/path/train.py", line 13, in main`` followed by its code line, every other line blank.

- rich's box (``rich.traceback.install()``: accelerate installs it where rich is, typer's command lines, others):
  a frame is ``│ /path/train.py:13 in main │`` (a long path or name wrapped onto the next lines), then the code
  around the line, the line itself marked ``❱``;
- IPython's and Jupyter's (a notebook's cell, accelerate's ``notebook_launcher``, Kaggle and Colab): a header
  ``ValueError    Traceback (most recent call last)``, frames ``Cell In[27], line 3`` / ``File /path/x.py:160,
  in f(args)`` (IPython 8) or ``<ipython-input-17-…> in <module>`` / ``/path/x.py in f(args)`` (older, the line
  number only on the code line), each line marked ``---->``; Colab's file written as a Markdown link,
  ``[/path/x.py](https://localhost:8080/#) in f(args)``, as a copy of its output keeps it;
- pytest's report of a failed test (_pytest/_code/code.py, ``ReprEntry`` and ``ReprFileLocation``): an entry's place
  ``path.py:564: in __iter__`` above its source line (``--tb=short``, and the middle entries of the default
  ``--tb=auto``), or, in the long style, its source first (the whole function, the line that raised marked ``>``)
  and its place below it: ``path.py:12: `` with nothing after it, and, for the last entry, below the exception's
  ``E   `` lines, ``path.py:223: TypeError`` (`pytest_raised_at`); ``--tb=line`` prints only that place and the
  exception after it, ``path.py:223: TypeError: message`` (pytest 9 below the ``E`` lines and the captured output;
  before it, alone: the reader takes the place off the line as it takes a time, `PYTEST_CRASH`); ``--tb=native`` is
  Python's own traceback.

Below its box, rich prints the exception's line wrapped at the console's width (``COLUMNS=60``: "RuntimeError:
mat1 and mat2 shapes cannot be multiplied" then "(4x16 and 12x8)"): `whole_message` reads it whole again.
"""

from __future__ import annotations

import re

_TOP = re.compile(r"^\s*╭─+ Traceback \(most recent call last\) ─+╮\s*$")
_BOTTOM = re.compile(r"^\s*╰─+╯\s*$")
_INNER = re.compile(r"^\s*│ ?(?P<text>.*?)\s*│\s*$")
_CODE = re.compile(r"^(?:❱\s*|\s+)\d+(?:\s+│|\s*$)")
_MARKED = re.compile(r"^❱\s*\d+\s│?(?P<code>.*)$")
_HEADER = re.compile(r"^(?P<file>\S.{0,500}?):(?P<line>\d+) in (?P<function>\S{1,200})$")


def whole_message(line: str, before: list[str], following: list[str]) -> tuple[str, int]:
    """The exception ``line`` with the lines rich wrapped it onto joined back, and how many of ``following`` they
    were: only below a rich box (the last line of ``before`` that is not blank is its bottom), and only while the
    line above could not take the next line's first word within the box's width (rich wraps at words, so a line
    that could have is the message's last). ``(line, 0)`` otherwise."""
    above = next((text for text in reversed(before) if text.strip()), "")
    if not _BOTTOM.match(above):
        return line, 0
    width = len(above.rstrip())
    joined, last, used = line.rstrip(), line, 0
    for text in following:
        word = text.split(" ", 1)[0]
        if not text.strip() or text[:1].isspace() or len(last.rstrip()) + 1 + len(word) <= width:
            break
        folded = len(last) >= width and not last.endswith(" ")  # a word longer than the width, cut mid-word
        joined += ("" if folded else " ") + text.strip()
        last, used = text, used + 1
    return joined, used


def as_python(lines: list[str]) -> list[str]:
    """``lines`` (the lines above an exception) with a rich box or an IPython traceback in them rewritten as Python
    prints a traceback; ``lines`` itself when there is neither."""
    return _from_pytest(_from_ipython(unboxed(lines)))


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


# IPython's header: the exception's type padded to a column, then "Traceback (most recent call last)"
_IPYTHON_TOP = re.compile(r"^\s*[\w.]{1,200}\s{2,}Traceback \(most recent call last\)\s*$")
_IPYTHON_FRAME = re.compile(
    r"^(?:Cell (?P<cell>In ?\[\d{1,6}\]), line (?P<cell_line>\d+)"
    r"|Input (?P<input>In ?\[\d{1,6}\]), in (?P<input_function>[^(]{1,200})\("
    r"|File (?P<file>\S.{0,500}?):(?P<line>\d+), in (?P<function>[\w.<>]{1,200})\("
    r"|(?P<old_cell><ipython-input-[\w-]{1,100}>) in (?P<old_cell_function>[\w.<>]{1,200})"
    r"|(?P<old_file>(?:/|~|[A-Za-z]:\\)\S.{0,500}?\.py) in (?P<old_function>[\w.<>]{1,200})\()"
)
_IPYTHON_MARKED = re.compile(r"^-+> ?(?P<line>\d+)\s?(?P<code>.*)$")
# Colab prints a frame's file as a link, which a copy as Markdown keeps: "[/usr/local/lib/python3.8/dist-packages/
# pkg/x.py](https://localhost:8080/#) in forward(self, x)", "[<ipython-input-106-cc57dae4e309>](https://...) in
# <module>"; IPython 8's "File [/path/x.py:160](https://...), in f(args)" likewise
_LINKED = re.compile(r"\[(?P<text>[^\]\n]{1,500})\]\(https?://[^)\s]{0,300}\)")


def _frame(line: str) -> re.Match | None:
    """IPython's frame on ``line``, its file written as a Markdown link (Colab's) or plain."""
    return _IPYTHON_FRAME.match(_LINKED.sub(lambda link: link["text"], line) if "](" in line else line)


def _from_ipython(lines: list[str]) -> list[str]:
    """``lines`` with the last IPython traceback in them rewritten as Python's."""
    top = max((at for at, line in enumerate(lines) if _IPYTHON_TOP.match(line)), default=None)
    if top is not None:
        start = top + 1
        result = lines[:top] + ["Traceback (most recent call last):"] + [""] * (len(lines) - start)
    else:  # the header cut off (a paste that starts inside the traceback): from its first frame
        start = next((at for at, line in enumerate(lines) if _frame(line)), None)
        if start is None:
            return lines
        result = lines[:start] + [""] * (len(lines) - start)
    waiting = None  # the frame read last, waiting for its marked code line: (where, file, line, function)
    for at in range(start, len(lines)):
        found = _frame(lines[at])
        if found:
            if found["cell"]:
                waiting = (at, f"Cell {found['cell']}", int(found["cell_line"]), "<module>")
            elif found["input"]:
                waiting = (at, f"Input {found['input']}", None, found["input_function"].strip())
            elif found["file"]:
                waiting = (at, found["file"], int(found["line"]), found["function"])
            elif found["old_cell"]:
                waiting = (at, found["old_cell"], None, found["old_cell_function"])
            else:
                waiting = (at, found["old_file"], None, found["old_function"])
            continue
        marked = _IPYTHON_MARKED.match(lines[at])
        if marked and waiting is not None:
            where, file, line, function = waiting
            number = line if line is not None else int(marked["line"])
            result[where] = f'  File "{file}", line {number}, in {function}'
            if where + 1 < len(result):
                result[where + 1] = "    " + marked["code"].strip()
            waiting = None
    return result


# pytest's place of an entry: "path.py:N: in function" (short), "path.py:N: " (long), "path.py:N: TypeError" (long,
# the last entry: the exception's type)
PYTEST_PLACE = re.compile(
    r"^(?P<file>[^\s:>][^:\n]{0,500}?\.py):(?P<line>\d+):"
    r"(?: (?:in (?P<function>[\w.<>]{1,200})|(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w{0,200})?))?\s*$"
)
# pytest's --tb=line (terminal.py _getcrashline: ReprFileLocation, "<path>:<lineno>: <message>"): the place the
# exception was raised and its line, "path.py:2: KeyError: 'input_ids'"; pytest 9 prints it below the "E" lines and
# the captured output, older releases alone
PYTEST_CRASH = re.compile(
    r"^(?P<file>[^\s:>][^:\n]{0,500}?\.py):(?P<line>\d+): (?=(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w{0,200}):)"
)
_PYTEST_MARKED = re.compile(r"^>\s+(?P<code>\S.*)$")
_PYTEST_SEPARATOR = re.compile(r"^(?:_ )+_?\s*$")
_DEF = re.compile(r"^\s*(?:async\s+)?def (?P<name>\w+)\(")


def _from_pytest(lines: list[str]) -> list[str]:
    """``lines`` with pytest's entries in them rewritten as Python's frames."""
    if not any(".py:" in line for line in lines):
        return lines
    result = list(lines)
    start = 0  # where the entry being read began (its long-style source is above its place)
    for at, line in enumerate(lines):
        if _PYTEST_SEPARATOR.match(line):
            start = at + 1
            continue
        place = PYTEST_PLACE.match(line) if ".py:" in line else None
        if place is None:
            continue
        if place["function"]:  # short: the source line below it
            result[at] = f'  File "{place["file"]}", line {place["line"]}, in {place["function"]}'
            if at + 1 < len(lines) and (marked := _PYTEST_MARKED.match(lines[at + 1])):
                result[at + 1] = "    " + marked["code"]
        else:
            function, code = long_entry(lines[start:at])
            result[at] = f'  File "{place["file"]}", line {place["line"]}, in {function}'
            if code and at + 1 < len(lines) and not PYTEST_PLACE.match(lines[at + 1]):
                result[at + 1] = "    " + code
        start = at + 1
    return result


def long_entry(lines: list[str]) -> tuple[str, str]:
    """(the function, the line marked ``>``) of a long-style pytest entry's source ``lines``; "?" for a function
    whose ``def`` is not shown, "" for no marked line."""
    marked = [found["code"] for line in lines if (found := _PYTEST_MARKED.match(line))]
    defined = [found["name"] for line in lines if (found := _DEF.match(line.lstrip(">")))]
    return (defined[-1] if defined else "?"), (marked[-1].strip() if marked else "")


def pytest_raised_at(before: list[str], following: list[str], type_: str) -> tuple[str, int, str, str] | None:
    """(file, line, function, code) where pytest's last entry says an exception of ``type_`` was raised: its place
    below the exception's line and the ``E`` lines after it, its source among the lines ``before`` it (from the
    last entry's start); None when what follows is not that place."""
    for line in following[:12]:
        if not line.strip() or line.startswith("E "):
            continue
        place = PYTEST_PLACE.match(line)
        if place is None or (place["type"] or "").rsplit(".", 1)[-1] != type_:
            return None
        start = max(
            (
                at + 1
                for at, text in enumerate(before)
                if _PYTEST_SEPARATOR.match(text) or PYTEST_PLACE.match(text)
            ),
            default=0,
        )
        function, code = long_entry(before[start:])
        return place["file"], int(place["line"]), function, code
    return None
