"""The house rules the code itself must keep: no import cycle between torchdoctor's modules, counting the
imports inside functions (they hide a cycle from Python at import time, not from the reader); a docstring on
every module saying its one job; and the map of the code: the README's Layout section names every module, and
docs/catalog.md, generated, lists every kinds module under its family of failure."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

# found without importing it (and torch with it): the rules read the source only, but for the generated doc
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


def ratio_benchmarks(makefile: str) -> list[str]:
    """The benchmarks `make bench` runs: the Makefile's RATIO_BENCHMARKS list."""
    return makefile.split("RATIO_BENCHMARKS :=", 1)[1].split("\n\n", 1)[0].replace("\\", " ").split()


def test_make_bench_runs_only_benchmarks_that_need_no_argument():
    """`make bench` runs every benchmark it names with no argument: one that needs one (compat.py's --torch)
    would stop it there, as a glob over benchmarks/*.py did."""
    root = PACKAGE.parent.parent
    makefile = (root / "Makefile").read_text()
    assert "RATIO_BENCHMARKS :=" in makefile, (
        "make bench should name its benchmarks: a glob reaches compat.py"
    )
    listed = ratio_benchmarks(makefile)
    assert "check_time" in listed, listed  # the list itself was read
    for name in listed:
        script = root / "benchmarks" / f"{name}.py"
        assert script.is_file(), f"make bench names {script}, which does not exist"
        assert not _required_arguments(script), f"{script.name} needs {_required_arguments(script)}"
    assert _required_arguments(root / "benchmarks" / "compat.py") == ["--torch"]  # the scan finds one


# -- the map: the README's Layout section names every module, docs/catalog.md every kinds module -----------------

ROOT = PACKAGE.parent.parent
KINDS = PACKAGE / "explain" / "kinds"


def layout_section(readme: str) -> str:
    """The README's ``### Layout`` section, up to the next heading."""
    return readme.split("\n### Layout\n", 1)[1].split("\n#", 1)[0]


def layout_entries(layout: str) -> dict[str, str]:
    """The Layout's entries by their first word (``explain/``, ``checks.py``): an entry is a line indented by at
    most two spaces and the more indented lines under it."""
    entries: dict[str, str] = {}
    name = ""
    for line in layout.splitlines():
        if line.strip() and len(line) - len(line.lstrip()) <= 2 and not line.startswith("```"):
            name = line.split()[0]
            entries[name] = ""
        if name:
            entries[name] += line + "\n"
    return entries


def unmapped(modules: list[Path], layout: str) -> list[str]:
    """The modules (paths under src/torchdoctor/, no __init__ or __main__, no kinds module) the Layout does not
    name: a top-level ``x.py`` anywhere in it, a package's module by its name in the package's own entry."""
    entries = layout_entries(layout)
    missing = []
    for module in modules:
        top, *rest = module.parts
        if rest:
            named = re.search(rf"\b{module.stem}\b", entries.get(f"{top}/", ""))
        else:
            named = re.search(rf"\b{re.escape(module.name)}", layout)
        if not named:
            missing.append(module.as_posix())
    return missing


def mapped_modules() -> list[Path]:
    return [
        path.relative_to(PACKAGE)
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.stem not in ("__init__", "__main__") and path.parent != KINDS
    ]


def test_unmapped_names_a_module_the_layout_leaves_out():
    layout = (
        "```\nsrc/torchdoctor/\n  checks.py          finds checks; rank_list.py: ranks\n"
        "  net/               smoke, spawn,\n                     verdicts\n```\n"
    )
    modules = [Path(p) for p in ("checks.py", "rank_list.py", "net/smoke.py", "net/verdicts.py")]
    assert unmapped(modules, layout) == []
    # a new module, a module named only in another package's entry, a top-level name without its .py
    strays = [Path("net/bandwidth.py"), Path("hang/smoke.py"), Path("smoke.py")]
    assert unmapped(modules + strays, layout) == ["net/bandwidth.py", "hang/smoke.py", "smoke.py"]


def test_the_readme_layout_names_every_module():
    """A newcomer finds every module on the map: the README's Layout section names each module outside
    explain/kinds/ (docs/catalog.md maps those) in its package's entry."""
    layout = layout_section((ROOT / "README.md").read_text(encoding="utf-8"))
    modules = mapped_modules()
    assert len(modules) > 100, len(modules)  # the walk found the modules
    missing = unmapped(modules, layout)
    assert not missing, f"name these in the README's Layout section (### Layout): {', '.join(missing)}"


def constant(tree: ast.Module, name: str):
    """The literal value a module assigns to ``name`` at top level, or None."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.literal_eval(node.value)
    return None


def kinds_modules() -> dict[str, ast.Module]:
    return {
        path.stem: ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(KINDS.glob("*.py"))
        if path.stem != "__init__"
    }


def test_every_kinds_module_names_its_family_and_says_its_job_in_one_sentence():
    """FAMILY places a kinds module on the map (one of kinds.FAMILIES); the docstring's first line is the job the
    map shows, one whole sentence."""
    families = constant(ast.parse((KINDS / "__init__.py").read_text(encoding="utf-8")), "FAMILIES")
    assert families and len(families) == len(set(families)), families
    modules = kinds_modules()
    assert len(modules) > 80, len(modules)
    wrong = {name: constant(tree, "FAMILY") for name, tree in modules.items()}
    wrong = {name: family for name, family in wrong.items() if family not in families}
    assert not wrong, f"set FAMILY to one of kinds.FAMILIES {families} in: {wrong}"
    for name, tree in modules.items():
        lines = (ast.get_docstring(tree) or "").splitlines() or [""]
        first = lines[0]
        assert first[:1].isalnum() or first[:1] == "`", f"{name}: the docstring's first line says nothing"
        assert first.endswith(".") and (len(lines) == 1 or not lines[1].strip()), (
            f"{name}: the docstring's first line should be one whole sentence, a blank line after it: {first!r}"
        )


def test_docs_catalog_is_generated_and_maps_every_kinds_module():
    """docs/catalog.md is what `benchmarks/catalog_coverage.py --write-doc` writes today, and its table of the
    kinds modules has a row for each of them."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import catalog_coverage

    written = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    assert written == catalog_coverage.document(), (
        "docs/catalog.md is stale: run python benchmarks/catalog_coverage.py --write-doc"
    )
    table = written.split("## The kinds modules, by family of failure", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in kinds_modules() if f"| `{name}` |" not in table]
    assert not missing, f"kinds modules missing from docs/catalog.md: {missing}"


def test_the_readme_layout_names_every_benchmark():
    """A benchmark is on the map by name in the Layout's benchmarks/ entry, or among the ratio benchmarks
    `make bench` runs (RATIO_BENCHMARKS in the Makefile), which that entry points to."""
    entry = layout_entries(layout_section((ROOT / "README.md").read_text(encoding="utf-8")))["benchmarks/"]
    ratio = ratio_benchmarks((ROOT / "Makefile").read_text())
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    assert len(scripts) > 20, len(scripts)
    missing = [s.name for s in scripts if s.stem not in ratio and not re.search(rf"\b{s.stem}\b", entry)]
    assert not missing, f"name these in the README's Layout, benchmarks/ entry: {missing}"


def support_files(tests: Path) -> list[str]:
    """What tests/ holds besides the test modules, as the Layout names it: each helper module (``helpers.py``),
    each folder of planted faults (``hang_faults/``), and each folder of fixtures/ (``fixtures/logs/``)."""
    names = [
        path.name + ("/" if path.is_dir() else "")
        for path in sorted(tests.iterdir())
        if not path.name.startswith(("test_", "__", "."))
        and path.name not in ("conftest.py", "fixtures")
        and (path.is_dir() or path.suffix == ".py")
    ]
    return names + [
        f"fixtures/{path.name}/" for path in sorted((tests / "fixtures").iterdir()) if path.is_dir()
    ]


def unnamed_support(names: list[str], entry: str) -> list[str]:
    """The names ``entry`` (the Layout's tests/ entry) does not mention: a helper by its file name, a folder by its
    own name and slash (``hang_faults/``), a folder of fixtures/ as ``fixtures/logs/`` or, listed under
    ``fixtures/``, as ``logs/``."""
    missing = []
    for name in names:
        own = re.escape(name.removeprefix("fixtures/"))
        if not re.search(rf"(?<![\w./])(fixtures/)?{own}", entry):
            missing.append(name)
    return missing


def test_unnamed_support_names_a_helper_or_fixtures_folder_the_entry_leaves_out():
    entry = "tests/  helpers.py, rank_runner.py (forked from rank_forkserver.py); hang_faults/; fixtures/ logs/, gpu/\n"
    names = ["helpers.py", "rank_forkserver.py", "hang_faults/", "fixtures/logs/", "fixtures/gpu/"]
    assert unnamed_support(names, entry) == []
    strays = [
        "models.py",
        "net_faults/",
        "fixtures/nccl/",
        "fixtures/runs/",
    ]  # "runs/" is not "planted_runs/"
    entry += "planted_runs/ (jobs)\n"
    assert unnamed_support(names + strays, entry) == strays


def test_the_readme_layout_names_every_test_helper_and_fixtures_folder():
    """A newcomer who opens tests/ finds each helper module and each folder of recordings on the map: the README's
    Layout names it in its tests/ entry (the test modules are named by their pattern, test_<area>*.py)."""
    names = support_files(ROOT / "tests")
    assert "helpers.py" in names and "fixtures/logs/" in names, names  # the walk found them
    entry = layout_entries(layout_section((ROOT / "README.md").read_text(encoding="utf-8")))["tests/"]
    missing = unnamed_support(names, entry)
    assert not missing, f"name these in the README's Layout, tests/ entry: {missing}"


# -- the links: what README.md and docs/*.md point to inside the repository is there -------------------------------

# Pages of dated records: their prose names the files of their day, so only their links are held to today's tree.
HISTORY_PAGES = ("history.md", "explain-measurements.md", "stragglers-measurements.md")

# Paths in the pages' prose that are another project's, each with why: they are not this repository's files.
OTHER_PROJECTS_PATHS = {
    "tests/test_memory_utils.py": "accelerate's own test module, run against torchdoctor (README, accelerate)",
    "tests/test_logging.py": "accelerate's own test module, run against torchdoctor (README, accelerate)",
}


def markdown_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose_lines(text: str) -> list[str]:
    """The page's lines with fenced code blocks blanked (a `# comment` in a shell block is no heading, a
    ``[i](j)`` in Python no link); numbered as the page's lines are."""
    lines, fence = [], ""
    for line in text.splitlines():
        opening = re.match(r"\s*(```+|~~~+)", line)
        if opening and (not fence or opening.group(1).startswith(fence)):
            fence = "" if fence else opening.group(1)
            lines.append("")
        else:
            lines.append("" if fence else line)
    return lines


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: the heading's text in lower case, markup and punctuation
    dropped, spaces to hyphens; a repeated heading gets -1, -2, ...; and any ``<a name|id="...">`` of the page."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose_lines(text):
        heading = re.match(r"#{1,6} +(.*?)[ #]*$", line)
        if heading:
            words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))  # a link keeps its words
            slug = re.sub(r"[^\w\- ]", "", re.sub(r"<[^>]+>", "", words).strip().lower()).replace(" ", "-")
            anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
        anchors.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
    return anchors


def dead_links(page: Path, root: Path) -> list[str]:
    """``page:line: target (why)`` for each link of ``page`` (outside code) to a file under ``root`` that is not
    there, or to a heading its page does not have. Addresses with a scheme (https:, mailto:) are not followed."""
    dead = []
    for number, line in enumerate(prose_lines(page.read_text(encoding="utf-8")), 1):
        for target in re.findall(r"\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)", re.sub(r"`[^`]*`", "", line)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue
            path, _, anchor = target.partition("#")
            goal = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}:{number}: {target}"
            if not goal.exists() or root.resolve() not in (goal, *goal.parents):
                dead.append(f"{where} (no such file)")
            elif (
                anchor
                and goal.suffix == ".md"
                and anchor not in heading_anchors(goal.read_text(encoding="utf-8"))
            ):
                dead.append(f"{where} (no such heading in {goal.name})")
    return dead


def missing_paths(page: Path, root: Path) -> list[str]:
    """``page:line: path`` for each repository path the page's prose quotes as code (`tests/...`,
    `benchmarks/...`, `src/...`, `docs/...`; a glob matches something) that is not in the tree."""
    missing = []
    for number, line in enumerate(prose_lines(page.read_text(encoding="utf-8")), 1):
        for code in re.findall(r"`([^`]+)`", line):
            for path in re.findall(r"(?<![\w/.-])((?:src|tests|benchmarks|docs)/[\w./*-]*[\w*])", code):
                there = any(root.glob(path)) if "*" in path else (root / path).exists()
                if not there and path not in OTHER_PROJECTS_PATHS:
                    missing.append(f"{page.relative_to(root)}:{number}: {path}")
    return missing


def test_dead_links_finds_a_missing_file_a_missing_heading_and_nothing_in_code(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    (tmp_path / "docs" / "b.md").write_text("# Bee: `b` — the page\n\n## Twice\n\n## Twice\n")
    readme = tmp_path / "README.md"
    readme.write_text(
        "## Start here, [with a link](docs/b.md)\n"
        "[b](docs/b.md#bee-b--the-page) [two](docs/b.md#twice-1) [top](#start-here-with-a-link) [w](https://x.org/y)\n"
        "[gone](docs/c.md) [no heading](docs/b.md#twice-2) [here](#nowhere) `[code](e.md)`\n"
        "```bash\n# not a heading\n[x](f.md)\n```\n"
        "[outside](../elsewhere.md) `tests/test_a.py` `tests/test_*.py` `tests/test_b.py`\n"
    )
    assert dead_links(readme, tmp_path) == [
        "README.md:3: docs/c.md (no such file)",
        "README.md:3: docs/b.md#twice-2 (no such heading in b.md)",
        "README.md:3: #nowhere (no such heading in README.md)",
        "README.md:8: ../elsewhere.md (no such file)",
    ]
    assert missing_paths(readme, tmp_path) == ["README.md:8: tests/test_b.py"]
    assert "not-a-heading" not in heading_anchors(readme.read_text())


def test_every_link_of_the_readme_and_docs_leads_to_a_file_and_heading_that_are_there():
    """A newcomer follows the README's and docs/' links: each relative link names a file of the repository and,
    after a #, a heading of that page (pages move to docs/, headings get reworded)."""
    pages = markdown_pages()
    assert len(pages) > 10, pages
    links = sum(len(re.findall(r"\]\([^)\s]+\)", page.read_text(encoding="utf-8"))) for page in pages)
    assert links > 50, links  # the links were read
    dead = [line for page in pages for line in dead_links(page, ROOT)]
    assert not dead, "dead links:\n" + "\n".join(dead)


def test_every_repository_path_the_readme_and_docs_name_is_there():
    """A path quoted as code in the README or a docs/ page (not the pages of dated records) is in the tree:
    modules and tests get renamed, and the prose that names them must follow."""
    pages = [page for page in markdown_pages() if page.name not in HISTORY_PAGES]
    missing = [line for page in pages for line in missing_paths(page, ROOT)]
    assert not missing, "paths that are not in the repository:\n" + "\n".join(missing)
    named = "".join(page.read_text(encoding="utf-8") for page in pages)
    assert all(path in named for path in OTHER_PROJECTS_PATHS), "an exemption no page needs: remove it"


def test_every_recogniser_has_a_kind_of_its_own():
    # kinds.BY_KIND keeps one recogniser a kind: a second with the same kind would silently take over the first's
    # describe for every hit of that kind
    from collections import Counter

    from torchdoctor.explain.kinds import RECOGNISERS

    twice = sorted(kind for kind, count in Counter(r.kind for r in RECOGNISERS).items() if count > 1)
    assert not twice, f"kinds defined by more than one recogniser: {twice}"
