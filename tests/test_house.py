"""The house rules the code itself must keep: no import cycle between torchdoctor's modules, counting the
imports inside functions (they hide a cycle from Python at import time, not from the reader); a docstring on
every module saying its one job."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

# found without importing it (and torch with it): this test reads the source only
PACKAGE = Path(importlib.util.find_spec("torchdoctor").submodule_search_locations[0])


def module_name(path: Path) -> str:
    parts = ["torchdoctor", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Inside ``if TYPE_CHECKING:``: never run, so no cycle."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(name: str, source: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    """The torchdoctor modules that module ``name`` (its ``source``) imports, at module level or inside a
    function."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or _type_checking_only(node, parents):
            continue  # only imports matter: walking every node's parents took 48 s of CPU on a loaded machine
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # ``from pkg import sub`` imports the module pkg.sub; ``from mod import name`` imports mod
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {
        name: imports_of(name, path.read_text(), path.name == "__init__.py", modules)
        for name, path in modules.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_imports_inside_functions_and_relative_ones():
    modules = {"torchdoctor.a": Path("a.py"), "torchdoctor.pkg": Path("pkg/__init__.py")}
    modules["torchdoctor.pkg.b"] = Path("pkg/b.py")
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from torchdoctor import a\n"
        "def f():\n    from . import b\n    import torchdoctor.a\n"
    )
    assert imports_of("torchdoctor.pkg", source, True, modules) == {"torchdoctor.pkg.b", "torchdoctor.a"}
    assert imports_of("torchdoctor.pkg.b", "from .. import a\nfrom . import c\n", False, modules) == {
        "torchdoctor.a",
        "torchdoctor.pkg",
    }


def test_find_cycle_names_the_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_between_torchdoctor_modules():
    graph = import_graph()
    assert len(graph) > 50  # every module was found
    assert "torchdoctor.hang.source" in graph["torchdoctor.hang.places"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# Packages whose docstring belongs to another area's work in progress; each entry names why it is here.
NO_DOCSTRING_YET: dict[str, str] = {}


def test_every_module_says_its_one_job_in_a_docstring():
    """A newcomer reads a module's first line to know what it is for: every module, packages included, has one."""
    missing = [
        name
        for name, path in all_modules().items()
        if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) and name not in NO_DOCSTRING_YET
    ]
    assert not missing, f"modules without a docstring saying their one job: {', '.join(missing)}"
    written = [
        name for name in NO_DOCSTRING_YET if ast.get_docstring(ast.parse(all_modules()[name].read_text()))
    ]
    assert not written, f"{', '.join(written)} has its docstring now: take it out of NO_DOCSTRING_YET"


def _required_arguments(script: Path) -> list[str]:
    """The arguments a benchmark's argparse parser cannot run without: ``required=True``, or a positional one
    with no ``nargs`` that allows none."""
    needed = []
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if not (
            isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument" and node.args
        ):
            continue
        name = ast.literal_eval(node.args[0])
        keywords = {k.arg: k.value for k in node.keywords}
        nargs = ast.literal_eval(keywords["nargs"]) if "nargs" in keywords else None
        required = "required" in keywords and ast.literal_eval(keywords["required"])
        if required or (not name.startswith("-") and nargs not in ("?", "*")):
            needed.append(name)
    return needed


def test_make_bench_runs_only_benchmarks_that_need_no_argument():
    """`make bench` runs every benchmark it names with no argument: one that needs one (compat.py's --torch)
    would stop it there, as a glob over benchmarks/*.py did."""
    root = PACKAGE.parent.parent
    makefile = (root / "Makefile").read_text()
    assert "RATIO_BENCHMARKS :=" in makefile, (
        "make bench should name its benchmarks: a glob reaches compat.py"
    )
    listed = makefile.split("RATIO_BENCHMARKS :=", 1)[1].split("\n\n", 1)[0].replace("\\", " ").split()
    assert "check_time" in listed, listed  # the list itself was read
    for name in listed:
        script = root / "benchmarks" / f"{name}.py"
        assert script.is_file(), f"make bench names {script}, which does not exist"
        assert not _required_arguments(script), f"{script.name} needs {_required_arguments(script)}"
    assert _required_arguments(root / "benchmarks" / "compat.py") == ["--torch"]  # the scan finds one
