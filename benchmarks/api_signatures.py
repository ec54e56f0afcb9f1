"""Which release of a library's callable takes which positional parameters, read from the released packages.

`--build` reads the wheels api_keywords.py reads (its `CALLABLES` and `RELEASES`, the same cached downloads) and
writes src/torchdoctor/explain/catalog/api_signatures.tsv: for each callable whose signature differs between the
releases read, one row per span of releases that share a signature, written ``model,args=,*|callbacks``: the
positional parameters in order (``=``: it has a default), ``*`` where it takes ``*args``, then after ``|`` its
keyword-only parameters without a default (CPython's refusals name no other). ``self`` is left out (CPython counts it in "takes N positional arguments":
kinds/api_signatures.py adds it back). Read statically with `ast`, never imported: a class's signature is its
``__init__``'s, or its base's found by name in the files read; a ``@dataclass`` is left out (its generated
``__init__`` follows its bases' field order and is called with keywords); a class defined twice differently in
the files read (torch.cuda.amp's and torch.amp's GradScaler) has no signature there.

    python benchmarks/api_signatures.py --build     # read the cached wheels and write the table
    python benchmarks/api_signatures.py             # the callables per package in the committed table
"""

from __future__ import annotations

import ast
import sys

from api_history import download, version_of
from api_keywords import CALLABLES, RELEASES, Release, _dataclass, build_table, wants_build

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


def _init(release: Release, name: str, depth: int = 0) -> ast.arguments | None:
    nodes = release.classes.get(name, [])
    if len(nodes) != 1 or depth > 6 or _dataclass(nodes[0]):
        return None
    node = nodes[0]
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is not None:
        return init.args
    bases = [ast.unparse(b).split(".")[-1] for b in node.bases]
    return _init(release, bases[0], depth + 1) if len(bases) == 1 else None


def signatures(release: Release, files: tuple[str, ...], name: str) -> dict[str, str]:
    """{callable as CPython names it: its signature spelled} for ``name`` in ``files`` ("*": every class)."""
    if "." in name:  # Class.method
        cls, method = name.split(".")
        nodes = release.classes.get(cls, [])
        found = [s for s in (nodes[0].body if len(nodes) == 1 else []) if isinstance(s, ast.FunctionDef)]
        found = [s for s in found if s.name == method]
        return {name: spelled(found[0].args)} if found else {}
    if name == "*":
        names = {n for f in files if f in release.text for n in release._classes_in(f)}
    else:
        function = next((release.functions[(f, name)] for f in files if (f, name) in release.functions), None)
        if function is not None:
            return {name: spelled(function.args)}
        names = {name}
    got = {n: _init(release, n) for n in names if not n.startswith("_")}
    return {n: spelled(arguments) for n, arguments in got.items() if arguments is not None}


def rows_for(package: str) -> tuple[list[str], list[tuple]]:
    """(the releases read, the rows: callable, first release of the span, last release of it, signature)."""
    releases: list[tuple[str, dict[str, str]]] = []
    for minor in RELEASES[package]:
        wheel = download(package, minor)
        if wheel is None:
            continue
        release = Release(wheel, package)
        found: dict[str, str] = {}
        for files, names in CALLABLES[package]:
            for name in names:
                found.update(signatures(release, files, name))
        releases.append((version_of(wheel), found))
        print(f"  {package} {releases[-1][0]}: {len(found)} callables", file=sys.stderr)
    rows = []
    for callable_ in sorted({c for _, found in releases for c in found}):
        having = [(v, found[callable_]) for v, found in releases if callable_ in found]
        if len({s for _, s in having}) < 2:
            continue  # one signature in every release that has it: nothing a release can be named for
        spans: list[list[str]] = []
        for version, signature in having:
            if spans and spans[-1][3] == signature:
                spans[-1][2] = version
            else:
                spans.append([callable_, version, version, signature])
        rows += [tuple(span) for span in spans]
    return [v for v, _ in releases], rows


HEADER = [
    "# The positional parameters each release of a library's callable takes, where they differ between the",
    "# releases read: written from the released wheels by benchmarks/api_signatures.py --build (ast; never",
    "# imported). A '#releases' line lists a package's releases read; a row: callable (as CPython 3.10+ names",
    "# it, without .__init__), the first and the last release read of a span that shares one signature, the",
    "# signature: positional parameters in order ('=': with a default; '*': *args), '|', the keyword-only ones",
    "# without a default.",
]


def main(argv: list[str] | None = None) -> int:
    if wants_build(argv, __doc__ or ""):
        build_table(TABLE, HEADER, rows_for)
        load.cache_clear()
    for package, (versions, spans) in load().items():
        print(
            f"{package:22} {versions[0]}..{versions[-1]} ({len(versions)} releases): "
            f"{len({s.callable for s in spans})} callables whose signature changed, {len(spans)} spans"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
