"""Which release of a library has the member CPython says an object or a class lacks, from the released packages.

The messages are CPython's AttributeError for an attribute read: ``'{}' object has no attribute '{}'``
(Objects/object.c PyObject_GenericGetAttr; torch's nn.Module.__getattr__ prints the same words) and ``type
object '{}' has no attribute '{}'`` (Objects/typeobject.c type_getattro): the catalog's
system:object-has-no-attribute and system:type-object-has-no-attribute. They name the class, never its package,
and are printed for any typo of the script's own, so the table decides what is known: a member that some release
of one package's class has and another does not (`catalog/api_members.tsv`, written by
``benchmarks/api_members.py --build`` from the released wheels) is the code and the installed release
disagreeing. A member every release has (the table has no row: the script's own mistake), a class several
packages define that the log does not tie to one, or one the table does not know, is left to the other readings.
The release the log prints installed (explain/printed_versions.py) decides beside the table: one without the member
is named and makes the reading certain; one with it makes it only likely (another installation imported, or an
object of another class).

    >>> [(r.added, r.removed) for r in rows("accelerate", "Accelerator", "gather_for_metrics")]
    [('0.12.0', '')]
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from typing import NamedTuple

from torchdoctor.explain import printed_versions
from torchdoctor.explain.first_failure import Raised, installed_package
from torchdoctor.explain.kinds import api_history
from torchdoctor.explain.kinds.release_pins import came, read_table, within

FAMILY = "library releases that disagree with the code"

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "api_members.tsv"


# a row is api_history's Change of a class: ``module`` the class, ``name`` the member, no replacement
Member = api_history.Change


class Table(NamedTuple):
    """The committed table: ``{package: (releases read, rows)}``, ``{class: the packages defining it}`` for the
    classes with rows that several packages define, and ``{(package, class): (first, last, bases)}`` for a class
    whose rows its bases' rows give (`member_row`)."""

    packages: dict[str, tuple[list[str], list[Member]]]
    namesakes: dict[str, frozenset[str]]
    inherits: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]]


@cache
def load() -> Table:
    """The committed table."""
    packages = {
        p: (releases, [Member(*cells, "") for cells in rows_])
        for p, (releases, rows_) in read_table(TABLE, 6).items()
    }
    namesakes, inherits = {}, {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if cells[0] == "#namesakes":
            namesakes[cells[1]] = frozenset(cells[2:])
        elif cells[0] == "#inherits":
            inherits[(cells[1], cells[2])] = (cells[3], cells[4], tuple(cells[5:]))
    return Table(packages, namesakes, inherits)


def index(table: Table) -> dict[tuple[str, str, str], Member]:
    """{(package, class, member): its own row} of ``table``."""
    return {(r.package, r.module, r.name): r for _, rows_ in table.packages.values() for r in rows_}


@cache
def _index() -> dict[tuple[str, str, str], Member]:
    return index(load())


def member_row(table: Table, own: dict, package: str, cls: str, member: str, depth: int = 0) -> Member | None:
    """The row of ``member`` of ``package``'s ``cls``: its own, or the nearest base's as the class's releases
    (its '#inherits' line: the first and last release read with it) see it; None when it has none."""
    row = own.get((package, cls, member))
    if row is not None or (package, cls) not in table.inherits or depth > 10:
        return row
    first, last, bases = table.inherits[(package, cls)]
    releases = table.packages[package][0]
    for base in bases:
        found = member_row(table, own, package, base, member, depth + 1)
        if found is not None:
            return _seen_from(found, cls, first, last, releases)
    return None


def _seen_from(row: Member, cls: str, first: str, last: str, releases: list[str]) -> Member | None:
    """A base's row as a class that exists from ``first`` to ``last`` sees it (a change outside: no row)."""
    at = releases.index
    added = row.added if row.added and at(row.added) > at(first) else ""
    removed = row.removed if row.removed and at(row.last) < at(last) else ""
    if not added and not removed:
        return None
    return Member(row.package, cls, row.name, added, row.last if removed else "", removed, "")


def rows(package: str, cls: str, member: str) -> list[Member]:
    """The table's row for ``member`` of ``package``'s ``cls`` ([] or one)."""
    found = member_row(load(), _index(), package, cls, member)
    return [found] if found else []


# CPython's two lines (an object's attribute, a class's): the class as type(obj).__name__ prints it
MISSING = re.compile(
    r"(?:(?<![\w.])'(?P<mem_class>[A-Za-z_]\w{0,100})' object|type object '(?P<mem_type>[A-Za-z_]\w{0,100})') "
    r"has no attribute '(?P<mem_name>\w{1,100})'(?:\. Did you mean: '(?P<mem_suggested>\w{1,100})'\?)?"
)
# how close another member's name must be to the one read to be its new (or old) name (difflib's ratio):
# evaluation_strategy and eval_strategy are 0.81
RENAMED_NEAR = 0.75
# one project under two names (lightning.pytorch is pytorch_lightning renamed): one class, one release line
_SAME_LINE = {"lightning": "pytorch_lightning"}
_OTHER_NAMES = {"torch": "PyTorch"}


def _names(package: str) -> str:
    return "|".join([package.replace("_", "[-_]"), *_OTHER_NAMES.get(package, "").split()])


def _mentioned(package: str) -> re.Pattern:
    # the package named anywhere: its frames' paths, an import, a pip line (not "transformers_utils")
    return re.compile(rf"(?<![\w-])(?P<mentions_{package}>{_names(package)})(?![\w-])")


CONTEXT: tuple[tuple[str, re.Pattern], ...] = tuple(
    (literal, read(package))
    for package in api_history.PACKAGES.split("|")
    for literal in sorted({package, package.replace("_", "-"), *_OTHER_NAMES.get(package, "").split()})
    for read in (_mentioned,)
)


def release_line(package: str) -> str:
    """The package a release line is named by (lightning.pytorch is pytorch_lightning renamed: one class)."""
    return _SAME_LINE.get(package, package)


def packages_with(cls: str, member: str) -> list[Member]:
    """The rows for ``member`` of a class named ``cls``, one per package that has one."""
    return [row for package in load().packages for row in rows(package, cls, member)]


def owner(cls: str, found: list[Member], raised: Raised, facts: dict) -> Member | None:
    """The row of the package the object is from, where the log ties the class to one package: the traceback's
    frames are in it, or the log names it (a frame's path, an import, its version); where several packages
    define ``cls`` (``#namesakes``), the one the frames are in, else the only one the log names. None when the
    log does not tell (a class name alone, a common word such as Trainer, never decides)."""
    defining = set(load().namesakes.get(cls, ())) | {r.package for r in found}
    line = tied(defining, raised, facts)
    return next((r for r in found if release_line(r.package) == line), None) if line else None


def tied(defining: set[str], raised: Raised, facts: dict) -> str | None:
    """The one of the packages ``defining`` a name (as one release line: lightning is pytorch_lightning) the log
    ties it to: the one the traceback's frames are in, else the only one the log names (a frame's path, an
    import, its version); None when it does not tell."""
    lines = {release_line(p) for p in defining}
    frames = {release_line(p) for p in raised.packages}
    if raised.raised_in is not None and (package := installed_package(raised.raised_in.file)):
        frames.add(release_line(package))
    named = {
        release_line(p)
        for p in api_history.PACKAGES.split("|")
        if facts.get(f"mentions_{p}") or facts.get(f"installed_{p}")
    }
    chosen = lines & frames or lines & named
    return chosen.pop() if len(chosen) == 1 else None


def other_name(row: Member, suggested: str | None) -> Member | None:
    """The row of the member of the same class that another release has in place of ``row``'s: CPython's
    suggestion (3.10+), else the nearest name of the class's members that came as this one went (or went as it
    came); None when the table shows no such pair (a member dropped without a successor)."""
    if not row.removed and not row.added:
        return None
    _, rows_ = load().packages[row.package]
    pairs = {
        r.name: r
        for r in rows_
        if r.module == row.module and r.name != row.name and (r.added if row.removed else r.removed)
    }
    if suggested:
        return pairs.get(suggested)
    near = get_close_matches(row.name, list(pairs), n=1, cutoff=RENAMED_NEAR)
    return pairs[near[0]] if near else None


def _only_package(cls: str, found: list[Member], suggested: str | None) -> Member | None:
    """The row of the one release line defining ``cls`` (no namesake in another package) whose class has the
    member under another name in another release: a log that names no package still names that class."""
    defining = set(load().namesakes.get(cls, ())) | {r.package for r in found}
    if len({release_line(p) for p in defining}) != 1 or len(found) != 1:
        return None
    return found[0] if other_name(found[0], suggested) else None


def _renamed(row: Member, other: Member, releases: list[str]) -> tuple[str, str]:
    """(summary, fix) for ``row``'s member, which ``other`` names in the releases that lack it."""
    cls = row.module
    if row.removed:
        summary, fix = api_history.explain(row._replace(replacement=f".{other.name}"), releases)
        since = came(releases, other.added, row.package)
        return (
            f"{summary}; it is {cls}.{other.name} in the newer releases ({since})",
            fix,
        )
    summary, fix = api_history.explain(row, releases)
    return (
        f"{summary}; the older releases have it as {cls}.{other.name}",
        f"{fix} Or, for the installed release, read .{other.name} instead of .{row.name}.",
    )


def has_member(row: Member, installed: str) -> bool | None:
    """Whether the release ``installed`` has the member (None when the version does not read)."""
    return within(load().packages[row.package][0], installed, row.added, row.last if row.removed else "")


def diagnosis(raised: Raised, facts: dict) -> tuple[str, str, bool] | None:
    """(summary, fix, certain) for CPython's AttributeError ``raised`` on a member the table shows some releases
    of one package's class to have and others not; None otherwise (the script's own mistake, a class several
    packages define that the log does not tie to one, a class the table does not know). Where the log prints an
    installed release that has the member, only likely: another installation imported, or another class.
    ``facts``: the log's context (the installed releases it prints, explain/printed_versions.py)."""
    if raised.type != "AttributeError":
        return None
    found = MISSING.search(raised.message)
    if found is None:
        return None
    cls, member, suggested = (
        found["mem_class"] or found["mem_type"],
        found["mem_name"],
        found["mem_suggested"],
    )
    candidates = packages_with(cls, member)
    row = owner(cls, candidates, raised, facts) or _only_package(cls, candidates, suggested)
    if row is None:
        return None
    releases = load().packages[row.package][0]
    other = other_name(row, suggested)
    summary, fix = _renamed(row, other, releases) if other else api_history.explain(row, releases)
    installed = printed_versions.shown(facts, row.package)
    has = has_member(row, installed) if installed else None
    if has:
        # the release the log prints has it: not that release, whatever else it is
        other, check = api_history.imported_elsewhere(row.package, installed)
        return (
            f"the run did not find {cls}.{member}, which {row.package} {installed} has, and {other}; or an object "
            f"of another class (the project's own {cls}) than the code expects",
            check,
            False,
        )
    if has is False:
        return api_history.named_installed(summary, row.package, installed), fix, True
    summary += f"; or an object of another class (the project's own {cls}) than the code expects"
    return summary, fix, False
