"""A catalog message a library's own history says was its bug, and the release whose fix it is.

`catalog/fixed_bugs.tsv` (written by ``benchmarks/fixed_bugs.py --build`` from the libraries' git history) keeps
the catalog templates (or the errors as quoted) that a commit saying it fixes something quotes, with the first
release tag holding the fix; and, for torch and transformers (too large to read that way), the errors their
release notes and issue threads say a release fixed (no commit: ``benchmarks/fixed_bugs_read.tsv``). An exception carrying one of those messages, raised in that package's own frame (or
quoted with no traceback), in a log printing no release of the package at or past the fix, was likely that bug:
named as the lead only where the package's users cannot cause the message (an assertion, a TypeError,
AttributeError, NameError or UnboundLocalError of its own frame), else as the reading after what the message says.
Never certain: a commit may quote a message it met on the way to another fix.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from torchdoctor.explain import catalog, printed_versions
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.traceback_frames import asking_package

FAMILY = "library releases that disagree with the code"

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "fixed_bugs.tsv"
_PLACEHOLDER = re.compile(r"\{[^{}\n]{0,60}\}|%[-+ #0-9.]*[sdrifxgec]")
# the shortest literal piece of a template that says which message a commit quotes
PIECE = 24


def template_piece(template: str) -> str | None:
    """The longest literal piece of a template's first line (values aside), None when shorter than ``PIECE``
    or fewer than four words (a name like ``_zero3_consolidated_16bit_state_dict`` is not a message)."""
    line = " ".join(template.splitlines()[0].split()) if template.strip() else ""
    piece = max((p.strip(" '\"`:.,;()[]") for p in _PLACEHOLDER.split(line)), key=len)
    if len(piece) < PIECE or len(re.findall(r"[A-Za-z]{2,}", piece)) < 4 or piece.count(" ") < 3:
        return None
    return piece


class Row(NamedTuple):
    """One catalog message a commit fixed."""

    template: str  # the catalog template's id
    package: str
    fixed: str  # the first release tag containing the fix
    since: str  # the first release tag containing the line that prints it ('' unknown)
    commit: str
    pr: str  # repository#number (or the repository alone)
    subject: str  # the commit's subject, or what was wrong in our words (a row read by hand)
    source: str = ""  # where it was read: the repository's git history, or the release notes and threads


@cache
def load() -> list[Row]:
    """The committed table's rows."""
    rows = []
    for line in TABLE.read_text(encoding="utf-8").splitlines() if TABLE.exists() else []:
        cells = line.split("\t")
        if not line.startswith("#") and len(Row._fields) - 1 <= len(cells) <= len(Row._fields):
            rows.append(Row(*cells))
    return rows


# the exception types a package's own frame raises only through its own code's mistake: its users cannot cause them
OWN_MISTAKES = frozenset({"AssertionError", "TypeError", "AttributeError", "NameError", "UnboundLocalError"})
# where each package's own files are, in a frame's path
FOLDERS = {"lightning": r"(?:lightning|pytorch_lightning|lightning_fabric)"}


def _quoted(row: Row) -> tuple[str, str] | None:
    """(type, message) of a row that quotes the error as a commit printed it; None for a catalog template's."""
    kind, sep, message = row.template.partition(": ")
    return (kind, message) if sep and re.fullmatch(r"[A-Z]\w*(?:Error|Exception)", kind) else None


def _plain(text: str) -> str:
    """One line, one kind of quote: a commit and a log quote the same names with ' or ` or "."""
    return " ".join(re.sub(r"[`\"]", "'", text).split())


@cache
def _pattern(row: Row) -> re.Pattern | None:
    """The pattern of the message a row names, its values free (a template's) or as quoted (a commit's)."""
    quoted = _quoted(row)
    if quoted is not None:
        return re.compile(re.escape(_plain(quoted[1])))
    template = catalog.template(row.template)
    if template is None or template_piece(template.text) is None:
        return None
    pieces = _PLACEHOLDER.split(_plain(template.text.splitlines()[0]))
    return re.compile(r"[^\n]{0,300}?".join(re.escape(p) for p in pieces))


def raised_by(raised: Raised, package: str) -> bool:
    """Whether ``raised``'s innermost frame is in ``package``'s own files (an install or a checkout)."""
    if raised.raised_in is None:
        return False
    folder = FOLDERS.get(package, re.escape(package))
    return re.search(rf"(?:^|/){folder}/", raised.raised_in.file.replace("\\", "/")) is not None


def _asked_by(raised: Raised, package: str) -> bool:
    """Whether the package's own code is what asked (traceback_frames.asking_package): not an attribute hook
    raising for the script's lookup (DeepSpeedEngine.__getattr__), nor a hook of the package that torch ran for
    the script's own call."""
    if raised.type == "AssertionError":
        return True  # an invariant of the package's own code, whoever called it
    asked = asking_package(raised.frames)
    return bool(asked) and re.fullmatch(FOLDERS.get(package, re.escape(package)), asked) is not None


def find(raised: Raised) -> Row | None:
    """The row whose message ``raised`` carries, printed by that package's own code (its frame raised it, or no
    traceback says otherwise), the newest fix first; None otherwise."""
    text = _plain(raised.message)
    for row in sorted(load(), key=lambda r: Version(r.fixed), reverse=True):
        quoted = _quoted(row)
        pattern = _pattern(row)
        if pattern is None or (quoted is not None and quoted[0] != raised.type):
            continue
        if raised.raised_in is not None and not raised_by(raised, row.package):
            continue
        if pattern.search(text):
            return row
    return None


def _older(stated: str, fixed: str) -> bool:
    try:
        return Version(stated) < Version(fixed)
    except InvalidVersion:
        return False


def reading(raised: Raised, facts: dict) -> tuple[Row, bool, str] | None:
    """(the row, whether it leads, the release the log prints or '') when ``raised`` is a message the package's
    history says a later release fixed and the log prints no release of that package at or past the fix; it
    leads only where the package's users cannot cause the message (an assertion, or a TypeError,
    AttributeError, NameError or UnboundLocalError its own code raised, not an attribute hook for its caller's
    lookup). None otherwise."""
    row = find(raised)
    if row is None:
        return None
    stated = printed_versions.shown(facts, row.package)
    if stated and not _older(stated, row.fixed):
        return None  # the log's release has the fix: not this reading
    leads = raised.type in OWN_MISTAKES and raised_by(raised, row.package) and _asked_by(raised, row.package)
    return row, leads, stated


def words(row: Row, stated: str) -> tuple[str, str]:
    """(the reading's sentence, its fix) for ``row``; ``stated``: the release the log prints, or ''."""
    installed = (
        f"{row.package} {stated} in this log" if stated else f"no {row.package} release printed in this log"
    )
    since = f", printed since {row.since}" if row.since else ""
    if row.commit:
        sentence = (
            f"the {row.package} repository's own history calls this a bug, fixed in {row.package} {row.fixed} "
            f"({row.pr}, commit {row.commit}{since}; {installed})"
        )
    else:  # read from the package's release notes and threads
        sentence = (
            f"{row.package}'s own release notes and threads call this a bug, fixed in {row.package} {row.fixed} "
            f"({row.pr}{since}; {installed})"
        )
    fix = (
        f"{row.package} {row.fixed} fixed what raises this ({row.pr}: {row.subject}):\n"
        f"pip install -U '{row.package}>={row.fixed}'\n"
        f"pip show {row.package} names the release installed."
    )
    return sentence, fix
