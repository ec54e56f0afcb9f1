"""Which release of a library's callable takes the positional arguments CPython says a call got wrong.

The messages are CPython's TypeErrors for a call (Python/ceval.c and Objects/call.c: missing_arguments,
too_many_positional, the "multiple values" check; the catalog's system:python-missing-required-argument,
system:python-multiple-values-for-argument, system:python-takes-positional-arguments):
``{}() missing {} required positional argument{}: {}``, ``{}() got multiple values for argument '{}'`` and
``{}() takes {} positional argument{} but {} {} given``. The script's own mistake prints them most often, so the
table of signatures (`catalog/api_signatures.tsv`, written by ``benchmarks/api_signatures.py --build`` from the
released wheels) speaks only where the releases differ in exactly what the message says: the named parameter
required in some releases and not in others, moved among the positional parameters, or more positional
parameters in other releases than the installed one takes. Otherwise it is silent. Certain only where an installed
package makes the call (two libraries' releases that disagree); from the project's code it is likely, beside its
own mistake. A release the log prints installed (explain/printed_versions.py) that takes the call makes it only
likely (another installation imported); one the refusal matches is named.

    >>> [s.signature for s in spans("StepLR")][-1]
    'optimizer,step_size,gamma=,last_epoch=|'
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from torchdoctor.explain import printed_versions
from torchdoctor.explain.first_failure import Raised, installed_package
from torchdoctor.explain.kinds import api_history
from torchdoctor.explain.kinds.api_keywords import NAMESAKES, PIP_NAME, named_callable, owned
from torchdoctor.explain.kinds.api_members import release_line
from torchdoctor.explain.kinds.release_pins import below, read_namesakes, read_table, spelled, within

FAMILY = "library releases that disagree with the code"

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "api_signatures.tsv"
_CALLABLE = r"(?<![\w.])(?P<sig_callable>(?:[A-Za-z_]\w{0,100}\.)?[A-Za-z_]\w{0,100})\(\) "
REFUSAL = re.compile(
    _CALLABLE + r"(?:missing \d{1,3} required (?P<sig_kind>positional|keyword-only) arguments?: "
    r"(?P<sig_missing>'\w{1,100}'(?:,? (?:and )?'\w{1,100}'){0,20})|"
    r"got multiple values for argument '(?P<sig_twice>\w{1,100})'|"
    r"takes (?:from \d{1,3} to )?(?P<sig_takes>\d{1,3}) positional arguments? but (?P<sig_given>\d{1,3}) "
    r"(?:positional arguments? )?(?:\([^)\n]{0,80}\) )?(?:was|were) given)"
)


class Span(NamedTuple):
    """The releases ``first`` to ``last`` of a package read, whose ``callable`` has one ``signature``."""

    package: str
    callable: str
    first: str
    last: str
    signature: str  # "a,b=,*|c": positional in order ('=': a default; '*': *args), '|', required keyword-only


@cache
def load() -> dict[str, tuple[list[str], list[Span]]]:
    """``{package: (the releases read, its spans)}`` from the committed table."""
    return {
        p: (releases, [Span(p, *c) for c in rows]) for p, (releases, rows) in read_table(TABLE, 4).items()
    }


@cache
def _by_callable() -> dict[str, list[Span]]:
    found: dict[str, list[Span]] = {}
    for _, rows in load().values():
        for span in rows:
            found.setdefault(span.callable, []).append(span)
    return found


@cache
def namesakes() -> dict[str, frozenset[str]]:
    """{callable: the packages read that define one of that name}, for those with rows (the '#namesakes' lines)."""
    return read_namesakes(TABLE)


def spans(callable_: str) -> list[Span]:
    """The table's spans for ``callable_``, oldest first, of every package that has a callable of that name ([]
    when its signature never changed)."""
    return _by_callable().get(callable_, [])


def _parameters(signature: str) -> tuple[list[tuple[str, bool]], bool, list[tuple[str, bool]]]:
    """(positional [(name, required)], takes *args, keyword-only [(name, required)])."""
    positional, keyword_only = signature.split("|")
    named = [p for p in positional.split(",") if p and p != "*"]
    return (
        [(p.rstrip("="), not p.endswith("=")) for p in named],
        "*" in positional.split(","),
        [(p.rstrip("="), not p.endswith("=")) for p in keyword_only.split(",") if p],
    )


def _required(span: Span, name: str, kind: str) -> bool:
    positional, _, keyword_only = _parameters(span.signature)
    return (name, True) in (positional if kind == "positional" else keyword_only)


_KEYWORD_ONLY = 10_000  # a parameter no positional argument reaches


def _position(span: Span, name: str) -> int:
    """The index of ``name`` among the span's positional parameters (`_KEYWORD_ONLY` when none reaches it)."""
    positional = [p for p, _ in _parameters(span.signature)[0]]
    return positional.index(name) if name in positional else _KEYWORD_ONLY


def _most_positional(span: Span, with_self: bool) -> float:
    positional, varargs, _ = _parameters(span.signature)
    return float("inf") if varargs else len(positional) + with_self


def _written(found: list[Span]) -> str:
    """The releases of ``found`` as ranges, spans that follow each other joined ("0.7-0.17, 1.2")."""
    releases = load()[found[0].package][0]
    ranges: list[list[str]] = []
    for span in found:
        if ranges and releases.index(span.first) == releases.index(ranges[-1][1]) + 1:
            ranges[-1][1] = span.last
        else:
            ranges.append([span.first, span.last])
    parts = []
    for first, last in ranges:
        first, last = spelled(releases, first), spelled(releases, last)
        parts.append(first if first == last else f"{first}-{last}")
    return ", ".join(parts)


def reading(facts: dict, callable_: str, found: list[Span]) -> tuple[str, list[Span], list[Span]] | None:
    """(what differs, the spans the installed release can be in, the spans the call fits) for CPython's refusal
    ``facts`` on ``callable_`` (its spans ``found``), where the table shows releases that differ in exactly
    that; else None."""
    if not found:
        return None
    if facts.get("sig_missing"):
        kind = facts["sig_kind"]
        names = re.findall(r"'(\w+)'", facts["sig_missing"])
        installed = [s for s in found if all(_required(s, n, kind) for n in names)]
        fits = [s for s in found if not any(_required(s, n, kind) for n in names)]
        what = f"{' and '.join(repr(n) for n in names)} (required {kind})"
    elif facts.get("sig_twice"):
        name = facts["sig_twice"]
        # the call's positional arguments reach the parameter in the installed release and stop short of it in
        # others: it moved forward (a parameter before it removed), or from keyword-only to positional
        where = {s: _position(s, name) for s in found}
        if len(set(where.values())) < 2 or min(where.values()) == _KEYWORD_ONLY:
            return None
        nearest = min(where.values())
        installed = [s for s in found if where[s] == nearest]
        fits = [s for s in found if where[s] > nearest]
        what = f"where {name!r} stands among the positional parameters"
    else:
        with_self = "." in callable_ or callable_[:1].isupper()
        takes, given = int(facts["sig_takes"]), int(facts["sig_given"])
        installed = [s for s in found if _most_positional(s, with_self) == takes]
        fits = [s for s in found if _most_positional(s, with_self) >= given]
        what = "how many positional arguments it takes" + (" (CPython counts self)" if with_self else "")
    return (what, installed, fits) if installed and fits else None


def diagnosis(raised: Raised, context: dict | None = None) -> tuple[str, str, bool] | None:
    """(summary, fix, certain) for CPython's TypeError ``raised`` on a call whose signature the table shows to
    differ between releases in what the message names, else None. ``context``: the log's facts (the packages it
    names), which tie a name several packages define to one."""
    if raised.type != "TypeError":
        return None
    found = REFUSAL.search(raised.message)
    if found is None:
        return None
    facts = {k: v for k, v in found.groupdict().items() if v}
    callable_ = named_callable(
        facts["sig_callable"], raised.raised_code, _by_callable(), not raised.traceback
    )
    found, others = (
        owned(callable_, spans(callable_), raised, context or {}, namesakes()) if callable_ else ([], "")
    )
    read = reading(facts, callable_, found) if found else None
    if read is None:
        return None
    what, installed, fits = read
    package = installed[0].package
    pip_name = PIP_NAME.get(package, package)
    releases = load()[package][0]
    summary = (
        f"{callable_}() differs between {package} releases in {what}: the call fits {package} {_written(fits)}, "
        f"the refusal matches {_written(installed)}"
    )
    shown = printed_versions.shown(context or {}, package)
    if shown and any(within(releases, shown, s.first, s.last) for s in fits):
        # the release the log prints takes the call: not that release, whatever else it is
        other, check = api_history.imported_elsewhere(package, shown)
        return (
            f"{callable_}() refused a call that {package} {shown} takes ({what}), and {other}; or a mistake in the "
            f"call itself (or a {callable_} of the project's own)",
            check,
            False,
        )
    if shown and any(within(releases, shown, s.first, s.last) for s in installed):
        summary += f"; the log shows {package} {shown} installed, one of those"
    steps = ["Pass the arguments by keyword (name=value), which every release reads by name"]
    older = releases.index(fits[-1].last) < releases.index(installed[0].first)
    newer = releases.index(fits[0].first) > releases.index(installed[-1].last)
    if older:
        steps.append(
            f"or install the release the call was written for: pip install "
            f"'{pip_name}{below(releases, fits[-1].last, installed[0].first)}'"
        )
    elif newer:
        steps.append(f"or upgrade: pip install -U '{pip_name}>={spelled(releases, fits[0].first)}'")
    fix = "; ".join(steps) + f". pip show {pip_name} names the release installed."
    caller = installed_package(raised.raised_in.file) if raised.raised_in else None
    # a package calling its own callable wrongly is not two releases that disagree
    certain = (
        caller is not None and release_line(caller) != release_line(package) and callable_ not in NAMESAKES
    )
    if caller is not None and caller != package:
        fix += (
            f"\n{caller} makes the call: its release was written for another {package}; install the pair its "
            f"requirements name (pip show {caller} {pip_name})."
        )
    if not certain:
        if others and callable_ not in NAMESAKES:
            summary += f"; or the {callable_} of {others}, which takes other arguments"
        article = "an" if callable_[:1] in "AEIOU" else "a"
        summary += f"; or a mistake in the call itself (or {article} {callable_} of the project's own)"
        fix += (
            f"\nIf the call's arguments are simply wrong for {callable_}, its signature in the installed release is "
            "the one to follow."
        )
    return summary, fix, certain
