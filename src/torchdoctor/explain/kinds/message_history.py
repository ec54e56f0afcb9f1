"""An exception a library raised with a message that only its older releases print, from the released packages.

`catalog/message_history.tsv` (written by ``benchmarks/message_history.py --build`` from each minor release's
wheel: the messages of the package's own exceptions and asserts) keeps the messages some releases print
and the newest release read no longer does, with the first and last release that print one and the first that
does not. An exception raised in that package's own frame (or, with no traceback, quoted whole) whose message is
one of them was raised by a release older than the one that dropped it: the installed release is behind, and
upgrading it is the likely fix. Only likely: a release may drop a message and keep the check under other words
(the generator leaves out a message whose opening a later release still prints, or whose words the next release's
same file mostly keeps, not every rewording), and
the release installed may be a fork. A version of the package stated in the log at or past the release that
dropped the message rules the reading out.

    >>> row = find("accelerate", "Mixed precision is currently not supported for FSDP. Please set `mixed_precision` to `no`.")
    >>> row.last, row.gone
    ('0.10.0', '0.11.0')
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from torchdoctor.explain import printed_versions
from torchdoctor.explain.first_failure import Raised, cut
from torchdoctor.explain.kinds.release_pins import read_table, spelled

FAMILY = "library releases that disagree with the code"

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "message_history.tsv"
_PLACEHOLDER = re.compile(r"\{[^{}\n]{0,60}\}|%[-+ #0-9.]*[sdrifxgec]")
# with no traceback to say which package raised it, only a message this long (its literal text) is read
QUOTED_ALONE = 40


def literal_words(message: str) -> list[str]:
    """The words of a message's literal text, lower-cased, values left out: what says which check it is."""
    return re.findall(r"[a-z][a-z']+", _PLACEHOLDER.sub(" ", message).lower())


class Row(NamedTuple):
    """One message some releases of a package raise and later ones do not."""

    package: str
    first: str  # the first release read that prints it
    last: str  # the last release that prints it
    gone: str  # the first release after ``last`` that does not
    file: str  # the file of ``last`` that raises it
    escaped: str  # the message as the table writes it (\\n between its lines)

    @property
    def message(self) -> str:
        return self.escaped.replace("\\n", "\n").replace("\\\\", "\\")


@cache
def load() -> dict[str, tuple[list[str], list[Row]]]:
    """``{package: (the releases read, its rows)}`` from the committed table."""
    return {p: (releases, [Row(p, *c) for c in rows]) for p, (releases, rows) in read_table(TABLE, 5).items()}


def _pattern(message: str) -> tuple[str, str] | None:
    """(the longest literal piece, the pattern of the message's first line as printed) — values may be anything
    on one line; None when the literal text is too short to say which message it is."""
    line = " ".join(message.splitlines()[0].split()) if message else ""
    pieces = _PLACEHOLDER.split(line)
    if len("".join(pieces).strip()) < 20:
        return None
    return max(pieces, key=len), r"[^\n]{0,300}?".join(re.escape(p) for p in pieces)


@cache
def _compiled(pattern: str) -> re.Pattern:
    """``pattern`` compiled the first time a message holds its literal piece: a package's table has hundreds of
    rows, and compiling them all cost each `explain` a third of a second before any was needed."""
    return re.compile(pattern)


@cache
def _patterns(package: str) -> list[tuple[str, str, Row]]:
    found = []
    for row in load().get(package, ([], []))[1]:
        piece_and_pattern = _pattern(row.message)
        if piece_and_pattern is not None:
            found.append((*piece_and_pattern, row))
    return found


def find(package: str, message: str, alone: bool = False) -> Row | None:
    """The row of ``package`` whose message ``message`` is (``alone``: quoted with no traceback, so only a long
    message counts), else None."""
    text = " ".join(message.split())
    for piece, pattern, row in _patterns(package):
        if piece in text and _compiled(pattern).match(text):
            if alone and len("".join(_PLACEHOLDER.split(row.message.splitlines()[0]))) < QUOTED_ALONE:
                continue
            return row
    return None


def raising_package(raised: Raised) -> str | None:
    """The table's package whose own file raised ``raised`` (an installed copy or a source checkout), else None."""
    if raised.raised_in is None:
        return None
    path = raised.raised_in.file.replace("\\", "/")
    for package in load():
        folder = "lightning/(?:pytorch|fabric)" if package == "lightning" else package
        if re.search(rf"(?:^|/){folder}/", path) and not (
            package == "lightning" and "pytorch_lightning/" in path
        ):
            return package
    return None


def _newer(stated: str | None, release: str) -> bool:
    """Whether the version a log states is ``release`` or later."""
    try:
        return stated is not None and Version(stated) >= Version(release)
    except InvalidVersion:
        return False


def diagnosis(raised: Raised, facts: dict) -> tuple[str, str, str] | None:
    """(package, summary, fix) when ``raised`` carries a message the table says only releases older than the
    newest print, raised in that package's frame (or quoted alone, with no traceback); None otherwise."""
    package = raising_package(raised)
    if package is not None:
        candidates = [(package, find(package, raised.message))]
    elif raised.raised_in is None and not raised.traceback:
        candidates = [(p, find(p, raised.message, alone=True)) for p in load()]
    else:
        return None
    found = next(((p, row) for p, row in candidates if row is not None), None)
    if found is None:
        return None
    package, row = found
    stated = printed_versions.shown(facts, package) or None  # the release the log prints installed
    if _newer(stated, row.gone):
        return None  # the release the log names no longer prints it: not this reading
    releases = load()[package][0]
    gone, first, last = (spelled(releases, v) for v in (row.gone, row.first, row.last))
    installed = f" ({package} {stated} in this log)" if stated else ""
    printed = f"{first} to {last}" if first != last else first
    summary = (
        f"{cut(raised.text(), 140)}: only {package} {printed} raise this message, {gone} and later do not: the "
        f"installed {package}{installed} is likely older than {gone} (or {gone} words the same check otherwise)"
    )
    fix = (
        f"{package} releases from {gone} on no longer print this ({row.file} raised it in {printed}): "
        f"upgrade {package} to {gone} or later:\n"
        f"pip install -U '{package}>={gone}'\n"
        f"pip show {package} names the release installed. If the message names your own argument or data, {gone} "
        f"may keep the same check under other words: read what {row.file} of {gone} does before changing the code; "
        f"or install the {package} release the project pins."
    )
    return package, summary, fix
