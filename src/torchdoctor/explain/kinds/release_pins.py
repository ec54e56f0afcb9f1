"""How a fix writes a release read from a package's wheels, and which releases follow each other.

How a release read from a package's wheels is written in a fix: the minor release (``4.46``) for a package
read one wheel per minor release, the full version (``1.0.9``) where several patches of one minor were read
(timm's 1.0 line); and whether two releases read follow each other with none unread between them, so that
"came in 1.8" is said only where 1.7 was read too (else "after 1.6, by 1.8"); and the rows of the tables the
generators write from the wheels (api_keywords.tsv, api_signatures.tsv), package by package.

    >>> spelled(["1.6.5", "1.8.6"], "1.8.6"), follows(["1.6.5", "1.8.6"], "1.6.5", "1.8.6")
    ('1.8', False)
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from packaging.version import InvalidVersion, Version

FAMILY = "library releases that disagree with the code"


def minor(version: str) -> str:
    """The minor release a patch belongs to, the way pins are written (4.46.3 -> 4.46)."""
    return ".".join(version.split(".")[:2])


def spelled(releases: list[str], version: str) -> str:
    """``version`` as a pin names it: its minor, or itself where another release read shares that minor."""
    shared = sum(1 for r in releases if minor(r) == minor(version)) > 1
    return version if shared else minor(version)


def follows(releases: list[str], earlier: str, later: str, unreleased: Collection[str] = ()) -> bool:
    """Whether ``later`` is the release right after ``earlier`` with none unread between (1.6 -> 1.7, 1.9 -> 2.0;
    horovod 0.16 -> 0.18 with its never released 0.17 in ``unreleased``); never for patches (a patch read may have
    skipped others). True without ``earlier`` (the first release read)."""
    if not earlier:
        return True
    first, second = spelled(releases, earlier), spelled(releases, later)
    if first != minor(earlier) or second != minor(later):
        return False
    (major, number), (major2, number2) = (tuple(int(p) for p in v.split(".")) for v in (first, second))
    following = number + 1
    while f"{major}.{following}" in unreleased:
        following += 1
    return (major2, number2) in ((major, following), (major + 1, 0))


def _when(
    releases: list[str], earlier: str, later: str, package: str, unreleased: Collection[str] = ()
) -> str:
    """ "in trl 0.13", or "after 1.6, by pytorch_lightning 1.8" where a release between was not read."""
    when = (
        "in" if follows(releases, earlier, later, unreleased) else f"after {spelled(releases, earlier)}, by"
    )
    return f"{when} {package} {spelled(releases, later)}"


def came(releases: list[str], added: str, package: str, unreleased: Collection[str] = ()) -> str:
    """When a thing the releases read first have at ``added`` came: "came in accelerate 0.20" (``unreleased``:
    the minors of the package never released, which leave no gap)."""
    before = releases[releases.index(added) - 1] if added in releases[1:] else ""
    return f"came {_when(releases, before, added, package, unreleased)}"


def went(releases: list[str], last: str, removed: str, package: str, unreleased: Collection[str] = ()) -> str:
    """When a thing the releases read last have at ``last`` went: "was removed in trl 0.13"."""
    return f"was removed {_when(releases, last, removed, package, unreleased)}"


def below(releases: list[str], last: str, removed: str, unreleased: Collection[str] = ()) -> str:
    """The pin that keeps a release with a thing ``removed`` after ``last``: '<2.0', or '==1.6.*' where releases
    between were not read."""
    if follows(releases, last, removed, unreleased):
        return f"<{spelled(releases, removed)}"
    kept = spelled(releases, last)
    return f"=={kept}.*" if kept == minor(last) else f"=={kept}"


def within(releases: list[str], installed: str, first: str, last: str) -> bool | None:
    """Whether the release ``installed`` lies between ``first`` and ``last`` of ``releases`` read ('' = no bound
    on that side; a release read by its minor (4.46) stands for every patch of it, timm's 1.0 patches for
    themselves); None when the version does not read."""
    try:
        at = Version(installed)
    except InvalidVersion:
        return None

    def compared(release: str) -> int:
        mine, theirs = at.base_version, release
        if spelled(releases, release) == minor(release):
            mine, theirs = minor(mine), minor(release)
        return (Version(mine) > Version(theirs)) - (Version(mine) < Version(theirs))

    return (not first or compared(first) >= 0) and (not last or compared(last) <= 0)


def read_table(path: Path, width: int) -> dict[str, tuple[list[str], list[list[str]]]]:
    """``{package: (its releases read, its rows' cells)}`` of a generated table: a '#releases' line opens each
    package, its rows (``width`` tab-separated cells) follow, other '#' lines are comments."""
    table: dict[str, tuple[list[str], list[list[str]]]] = {}
    package = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if cells[0] == "#releases":
            package = cells[1]
            table[package] = (cells[2:], [])
        elif not line.startswith("#") and len(cells) == width:
            table[package][1].append(cells)
    return table


def read_namesakes(path: Path) -> dict[str, frozenset[str]]:
    """``{callable: the packages that define one of that name}`` from a generated table's '#namesakes' lines."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#namesakes\t"):
            _, name, *packages = line.split("\t")
            found[name] = frozenset(packages)
    return found
