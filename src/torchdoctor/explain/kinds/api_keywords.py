"""Which release of a library accepts the keyword argument CPython says a callable did not take.

The messages are CPython's TypeError for a call (Python/ceval.c, Objects/call.c; the catalog's
system:python-unexpected-keyword-argument): ``{}() got an unexpected keyword argument '{}'``. From Python 3.10 the callable
is qualified (``TrainingArguments.__init__()``); before it is bare (``__init__()``), and only the traceback's call
line can say which class it was. The same line is printed for a keyword misspelt in the calling code and for a
class of the user's own that happens to share the library's name; so the table decides what is known: a keyword
that some release of that callable accepts and another does not (`catalog/api_keywords.tsv`, written by
``benchmarks/api_keywords.py --build`` from the released wheels) is the code and the installed release
disagreeing. Any other keyword is left to the generic reading.

    >>> [r.removed for r in rows("TrainingArguments", "evaluation_strategy")]
    ['4.46.3']
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import cache
from pathlib import Path
from typing import NamedTuple

from torchdoctor.explain.first_failure import Raised, installed_package
from torchdoctor.explain.kinds.release_pins import below, came, read_table, spelled, went

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "api_keywords.tsv"
# CPython 3.10+: "TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'";
# before: "__init__() got ...", or a function's bare name ("load() got ...")
KEYWORD = re.compile(
    r"(?<![\w.])(?P<kw_callable>(?:[A-Za-z_]\w{0,100}\.)?[A-Za-z_]\w{0,100})\(\) got "
    r"an unexpected keyword argument '(?P<kw_name>\w{1,100})'"
)
# classes the table has whose name another library's class shares, with other keywords: never certain
NAMESAKES = {
    "FullyShardedDataParallel": "fairscale's FullyShardedDataParallel",
    "DistributedDataParallel": "apex's DistributedDataParallel",
}
# the package a table row belongs to, as `pip install` spells it
PIP_NAME = {"pytorch_lightning": "pytorch-lightning", "sentence_transformers": "sentence-transformers"}


class Keyword(NamedTuple):
    """One keyword some releases of a callable accept and others do not."""

    package: str
    callable: str  # as CPython 3.10+ names it, without .__init__ (TrainingArguments, load, Adam)
    keyword: str
    added: str  # the first release read that accepts it; "" = every release read from the first
    last: str  # the last release that accepts it; "" = still in the newest read
    removed: str  # the first release after ``last`` without it
    replacement: str  # the keyword the package's own deprecation text says to use instead, when it says


@cache
def load() -> dict[str, tuple[list[str], list[Keyword]]]:
    """``{package: (the releases read, its rows)}`` from the committed table."""
    return {
        p: (releases, [Keyword(p, *c) for c in rows_])
        for p, (releases, rows_) in read_table(TABLE, 6).items()
    }


@cache
def _index() -> dict[tuple[str, str], list[Keyword]]:
    found: dict[tuple[str, str], list[Keyword]] = {}
    for _, rows_ in load().values():
        for row in rows_:
            found.setdefault((row.callable, row.keyword), []).append(row)
    return found


@cache
def _callables() -> dict[str, set[str]]:
    """{callable: the packages whose table has it}."""
    found: dict[str, set[str]] = {}
    for package, (_, rows_) in load().items():
        for row in rows_:
            found.setdefault(row.callable, set()).add(package)
    return found


def rows(callable_: str, keyword: str) -> list[Keyword]:
    """The table's rows for ``keyword`` of ``callable_`` (several when two packages share the name)."""
    return _index().get((callable_, keyword), [])


def _same_line(found: list[Keyword]) -> bool:
    # pytorch_lightning and lightning ship one Trainer (lightning.pytorch is pytorch_lightning renamed)
    return {r.package for r in found} <= {"pytorch_lightning", "lightning"}


def named_callable(
    message_callable: str, call_line: str = "", known: Collection[str] | None = None
) -> str | None:
    """The callable a table knows (``known``; this table's by default), from CPython's name for it and the
    traceback's call line.

    ``TrainingArguments.__init__`` names the class; a bare ``__init__`` is known only when the call line calls
    exactly one class the table has (``args = TrainingArguments(output_dir=...)``)."""
    known = _callables() if known is None else known
    name = message_callable.removesuffix(".__init__")
    if name == "__init__":
        called = {c for c in re.findall(r"(?<!\w)([A-Z]\w{0,100})\s*\(", call_line) if c in known}
        return called.pop() if len(called) == 1 else None
    return name if name in known else None


def lookup(message: str, call_line: str = "") -> list[Keyword]:
    """The rows for the keyword CPython's ``message`` says a callable did not take, else []."""
    found = KEYWORD.search(message)
    if found is None:
        return []
    callable_ = named_callable(found["kw_callable"], call_line)
    return rows(callable_, found["kw_name"]) if callable_ else []


def decided(found: list[Keyword]) -> bool:
    """Whether the rows name one package's callable (not two libraries' classes of one name)."""
    return bool(found) and (len({r.package for r in found}) == 1 or _same_line(found))


def diagnosis(raised: Raised) -> tuple[str, str, bool] | None:
    """(summary, fix, certain) for CPython's TypeError ``raised`` on a keyword the table knows, else None.

    Certain when the callable is the package's beyond doubt: one package's, and the call is made inside an
    installed package (a library calling another: the installed pair disagrees) or, with no traceback, named
    by CPython itself. A call from the project's own code is only likely: a class or function of its own with
    the library's name takes other keywords."""
    if raised.type != "TypeError":
        return None
    found = lookup(raised.message, raised.raised_code)
    if not decided(found):
        return None
    summary, fix = explain(found)
    caller = installed_package(raised.raised_in.file) if raised.raised_in else None
    certain = caller is not None or (raised.raised_in is None and ".__init__()" in raised.message)
    namesake = NAMESAKES.get(found[0].callable)
    if namesake:
        certain = False
        summary += f"; or {namesake}, which takes other keywords"
    if caller is not None and caller != found[0].package:
        fix += (
            f"\n{caller} makes the call: its release was written for another {found[0].package}; install the pair "
            f"its requirements name (pip show {caller} {PIP_NAME.get(found[0].package, found[0].package)})."
        )
    if not certain:
        summary += f"; or a {found[0].callable} of the project's own that takes other keywords"
        fix += (
            f"\nIf {found[0].callable} is defined in the project (not imported from {found[0].package}), the "
            "keyword is the project's own: check its signature."
        )
    return summary, fix, certain


def explain(found: list[Keyword]) -> tuple[str, str]:
    """(summary, fix) for a keyword the installed release of the callable's package does not take."""
    row = found[0]
    package, pip_name = row.package, PIP_NAME.get(row.package, row.package)
    releases = load()[package][0]
    what = f"{row.callable}({row.keyword}=...)"
    bound = []
    if row.added:
        bound.append(came(releases, row.added, package))
    if row.removed:
        renamed = f", renamed {row.replacement}" if row.replacement else ""
        bound.append(
            f"{went(releases, row.last, row.removed, package)}{renamed} (the last release with it: {row.last})"
        )
    side = "older or newer" if row.added and row.removed else "older" if row.added else "newer"
    summary = f"{what}: the keyword {' and '.join(bound)}; the installed {package} is {side} than the code"
    steps = []
    if row.removed:
        if row.replacement:
            steps.append(f"Pass {row.replacement}= instead of {row.keyword}= (the same value)")
        pin = "or pin" if row.replacement else "Pin"
        steps.append(
            f"{pin} the release before the removal: pip install '{pip_name}{below(releases, row.last, row.removed)}'"
        )
    if row.added:
        steps.append(
            f"Upgrade to a release that takes it: pip install -U '{pip_name}>={spelled(releases, row.added)}'"
        )
    if len(found) > 1:
        steps.append(
            f"({row.callable} is also {', '.join(sorted({r.package for r in found[1:]}))}'s: same change)"
        )
    fix = (
        "; ".join(steps)
        + f". pip show {pip_name} names the release installed (read from {releases[0]} to {releases[-1]})."
    )
    return summary, fix
