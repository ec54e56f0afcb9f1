"""Which release of a library's callable takes which positional parameters, read from the released packages.

`--build` reads the wheels api_keywords.py reads (every package of its `READ`, the same cached downloads; every
public class, method and function, as api_callables.py reads them) and writes
src/torchdoctor/explain/catalog/api_signatures.tsv: for each callable whose signature differs between the
releases read, one row per span of releases that share a signature, written ``model,args=,*|callbacks``: the
positional parameters in order (``=``: it has a default), ``*`` where it takes ``*args``, then after ``|`` its
keyword-only parameters without a default (CPython's refusals name no other). ``self`` is left out (CPython
counts it in "takes N positional arguments": kinds/api_signatures.py adds it back). Read statically with `ast`,
never imported: a class's signature is its ``__init__``'s, or its first base's within the package that defines
one; a ``@dataclass`` is left out (its generated ``__init__`` follows its bases' field order and is called with
keywords), and so is a class whose base from another package would give it (unread); a name defined twice with
other signatures in a release (torch.cuda.amp's and torch.amp's GradScaler) has no signature there, unless
api_keywords.py's `CALLABLES` pins it to one file. A '#namesakes' line names a callable with rows that several
packages read define: the log must say which one it is.

    python benchmarks/api_signatures.py --build     # read the cached wheels and write the table
    python benchmarks/api_signatures.py             # the callables per package in the committed table
"""

from __future__ import annotations

import ast
import sys

import api_callables
from api_history import download, version_of
from api_keywords import PINNED, READ, build, wants_build

from torchdoctor.explain.kinds.api_signatures import TABLE, load


def spelled(arguments: ast.arguments) -> str:
    """``model,args=,*|callbacks`` for a function's ``arguments`` (``self``/``cls`` left out)."""
    positional = arguments.posonlyargs + arguments.args
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    parts = [
        a.arg + ("=" if d is not None else "")
        for a, d in zip(positional, defaults, strict=True)
        if a.arg not in ("self", "cls")
    ]
    if arguments.vararg is not None:
        parts.append("*")
    # only the keyword-only parameters a call must pass: CPython's refusals never name the others
    required = [a.arg for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is None]
    return ",".join(parts) + "|" + ",".join(required)


def rows_for(package: str) -> tuple[list[str], list[tuple], set[str]]:
    """(the releases read, the rows: callable, first release of the span, last release of it, signature; every
    public name read in some release)."""
    releases: list[tuple[str, dict[str, str | None]]] = []
    for minor in READ[package]:
        wheel = download(package, minor)
        if wheel is None:
            continue
        callables = api_callables.read(wheel, package, lambda function: spelled(function.args))
        releases.append((version_of(wheel), callables.every(PINNED.get(package, {}))))
        print(f"  {package} {releases[-1][0]}: {len(releases[-1][1])} callables", file=sys.stderr)
    rows = []
    for callable_ in sorted({c for _, found in releases for c, s in found.items() if s is not None}):
        # only the releases where the callable is decided (a dataclass, or a name defined twice otherwise, is not)
        having = [(v, found[callable_]) for v, found in releases if found.get(callable_) is not None]
        if len({s for _, s in having}) < 2:
            continue  # one signature in every release that has it: nothing a release can be named for
        spans: list[list[str]] = []
        for version, signature in having:
            if spans and spans[-1][3] == signature:
                spans[-1][2] = version
            else:
                spans.append([callable_, version, version, signature])
        rows += [tuple(span) for span in spans]
    return [v for v, _ in releases], rows, {c for _, found in releases for c in found}


HEADER = [
    "# The positional parameters each release of a library's callable takes, where they differ between the",
    "# releases read: written from the released wheels by benchmarks/api_signatures.py --build (ast; never",
    "# imported). A '#releases' line lists a package's releases read; a row: callable (as CPython 3.10+ names",
    "# it, without .__init__), the first and the last release read of a span that shares one signature, the",
    "# signature: positional parameters in order ('=': with a default; '*': *args), '|', the keyword-only ones",
    "# without a default. Every public class (its __init__: own, or its first base's within the package; a",
    "# dataclass is left out), method (Class.method) and function of the modules api_members.py reads; a",
    "# '#namesakes' line names a callable with rows that several packages read define.",
]


def main(argv: list[str] | None = None) -> int:
    if wants_build(argv, __doc__ or ""):
        build(TABLE, HEADER, rows_for)
        load.cache_clear()
    for package, (versions, spans) in load().items():
        print(
            f"{package:22} {versions[0]}..{versions[-1]} ({len(versions)} releases): "
            f"{len({s.callable for s in spans})} callables whose signature changed, {len(spans)} spans"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
