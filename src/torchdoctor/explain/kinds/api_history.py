"""Which release of a library added or removed the name a message says is missing, from the released packages.

The messages are CPython's: ``cannot import name '{}' from '{}' ({})`` (Python/ceval.c import_from), ``module
'{}' has no attribute '{}'`` (Objects/moduleobject.c module_getattro) and ``No module named '{}'``
(Lib/importlib/_bootstrap.py): the catalog's system:cannot-import-name, system:module-has-no-attribute and
system:python-no-module-named, which versions.py's ``dependency_version`` cites; and NumPy 2's own line for a name
it removed (third_party:numpy-2-expired-attribute). CPython prints the same line for a typo, a file of the user's
that shadows the package (the path in parentheses is not the installed package's), a circular import (then
"partially initialized module", never read here) and a name that never existed. So the table decides: a name some release of the package
has and another does not (`catalog/api_history.tsv`, written by ``benchmarks/api_history.py --build`` from the
released wheels) is the code and the installed release disagreeing; any other name is left to the generic reading.

    >>> lookup("numpy", "float_").removed
    '2.0.2'
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from torchdoctor.explain import printed_versions
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.kinds.release_pins import below, came, spelled, went, within

FAMILY = "library releases that disagree with the code"

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "api_history.tsv"
# CPython's three lines with the module and the name; not "partially initialized module" (a circular import)
MISSING = re.compile(
    r"cannot import name '(?P<hist_name>\w{1,100})' from '(?P<hist_module>[\w.]{1,200})'"
    r"(?: \((?P<hist_path>[^)\n]{0,400})\))?|"
    r"(?<!initialized )module '(?P<hist_module2>[\w.]{1,200})' has no attribute '(?P<hist_name2>\w{1,100})'|"
    r"No module named '(?P<hist_submodule>\w{1,100}\.[\w.]{1,200})'|"
    # numpy/__init__.py __getattr__ (2.0+), for a name of numpy/_expired_attrs_2_0.py (third_party.tsv)
    r"`np\.(?P<hist_numpy2>\w{1,100})` was removed in the NumPy 2\.0 release"
)
NUMPY2_ANCHOR = "was removed in the NumPy 2.0 release"
# torch/distributed/__init__.py binds its names only `if is_available()`: one missing there is also a torch built
# without distributed (Windows' and macOS' older wheels, USE_DISTRIBUTED=0), so the table makes it only likely
BUILD_DEPENDENT = frozenset({"torch.distributed"})
DISTRIBUTED_NAME = re.compile(r"(?P<torch_distributed_name>module 'torch\.distributed' has no attribute)")

# modules the wheels of the releases read ship compiled (a .so / .pyd, which benchmarks/api_history.py's reading of
# the .py files does not see) before a later release made them a Python file: the table's "added" for them is the
# first .py, not the module's first release. NumPy built numpy/core/_multiarray_umath as an extension from 1.16 to
# 1.26 and made it a shim over numpy._core in 2.0: missing under 1.x it is a broken NumPy install (its C extension
# failed to import) or an extension compiled against NumPy >= 1.16 run with an older one, not NumPy 2's module
COMPILED_BEFORE = frozenset({("numpy.core._multiarray_umath", "")})

# the packages the table has (a test holds it to the table)
PACKAGES = (
    "numpy|transformers|huggingface_hub|accelerate|peft|datasets|torch|pytorch_lightning|lightning|deepspeed|trl|"
    "diffusers|torchvision|torchaudio|torchtext|timm|bitsandbytes|sentence_transformers|torchmetrics|"
    "pytorch_pretrained_bert|segmentation_models_pytorch|horovod|webdataset"
)
# those versions.py's own list of libraries does not name: their missing names and modules are this kind too (the
# others' lines, torch._C's exclusion with them, are versions.py's)
NOT_IN_LIBRARIES = (
    "numpy|huggingface_hub|torchtext|sentence_transformers|pytorch_pretrained_bert|segmentation_models_pytorch|"
    "horovod|webdataset"
)
IN_TABLE = (
    rf"(?<!initialized )module '(?:{NOT_IN_LIBRARIES})(?:\.[\w.]{{1,150}})?' has no attribute '\w{{1,100}}'|"
    rf"No module named '(?:{NOT_IN_LIBRARIES})\.[\w.]{{1,150}}'|"
    r"`np\.\w{1,100}` was removed in the NumPy 2\.0 release"
)


class Change(NamedTuple):
    """One name (or module, name ``""``) some releases of a package have and others do not."""

    package: str
    module: str
    name: str
    added: str  # the first release read that has it; "" = every release read from the first
    last: str  # the last release that has it; "" = still in the newest read
    removed: str  # the first release after ``last`` without it
    replacement: str  # what the package's own source says to use instead, when it says


@cache
def load() -> dict[str, tuple[list[str], list[Change]]]:
    """``{package: (the releases read, its rows)}`` from the committed table."""
    table: dict[str, tuple[list[str], list[Change]]] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if cells[0] == "#releases":
            table[cells[1]] = (cells[2:], [])
        elif not line.startswith("#") and len(cells) == 6:
            # the package is the module's first name (numpy.lib: numpy)
            table[cells[0].split(".")[0]][1].append(Change(cells[0].split(".")[0], *cells))
    return table


@cache
def unreleased(package: str) -> tuple[str, ...]:
    """The minors in ``package``'s range that were never released (its '#unreleased' line: horovod's 0.17)."""
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if cells[0] == "#unreleased" and cells[1] == package:
            return tuple(cells[2:])
    return ()


@cache
def _index() -> dict[tuple[str, str], Change]:
    return {(c.module, c.name): c for _, rows in load().values() for c in rows}


def lookup(module: str, name: str = "") -> Change | None:
    """The row for ``name`` in ``module`` (``""``: the module itself), else None."""
    return _index().get((module, name))


def some_release_has_module(module: str) -> bool:
    """Whether the table shows ``module`` (or a module below it) in some release read of its package."""
    return any(m == module or m.startswith(f"{module}.") for m, _ in _index())


def missing(facts: dict) -> tuple[str, str, str | None] | None:
    """(module, name, the path CPython printed) of the missing name among ``facts`` (`MISSING`'s groups)."""
    if facts.get("hist_submodule"):
        return facts["hist_submodule"], "", None
    if facts.get("hist_name"):
        return facts["hist_module"], facts["hist_name"], facts.get("hist_path")
    if facts.get("hist_name2"):
        return facts["hist_module2"], facts["hist_name2"], None
    if facts.get("hist_numpy2"):
        return "numpy", facts["hist_numpy2"], None
    return None


def shadowed(package: str, path: str | None) -> bool:
    """Whether the file CPython names is not the installed package's (a local file or folder of that name)."""
    if path is None:
        return False
    installed = re.search(rf"(?:site|dist)-packages[/\\]{re.escape(package)}[/\\]", path)
    return installed is None


def known(facts: dict) -> Change | None:
    """The table's row for the missing name in ``facts`` when the installed package is the one CPython read."""
    found = missing(facts)
    if found is None:
        return None
    module, name, path = found
    row = lookup(module, name)
    if row is None and facts.get("hist_numpy2"):
        # NumPy says itself that 2.0 removed it (a name the 1.x stubs did not list)
        return Change("numpy", "numpy", name, "", "1.26", "2.0", "")
    if row is None or shadowed(row.package, path) or (row.added and (module, name) in COMPILED_BEFORE):
        return None
    return row


# CPython 3.6 and older print the line without the module (Python/ceval.c import_from: "cannot import name %R");
# the traceback's source line, a `from <module> import ...`, names it
BARE = re.compile(r"cannot import name '(?P<bare_name>\w{1,100})'")
BARE_TEMPLATE = "system:cannot-import-name-bare"
_FROM_LINE = re.compile(
    r"\s*from\s+(?P<bare_module>[A-Za-z_][\w.]{0,200})\s+import\s+\(?(?P<bare_names>[\w\s,]{1,400})"
)


def bare_import(raised: Raised, libraries: str) -> tuple[str, str, bool] | None:
    """(summary, fix, certain) for CPython 3.6's ``cannot import name 'X'`` raised on a ``from M import X`` line of
    the traceback, when M is a package of the table or of ``libraries`` (a regex alternation); None otherwise (a
    relative import, the project's own module, or a line that is not the import)."""
    line = _FROM_LINE.match(raised.raised_code or raised.code)
    if raised.type == "ImportError" and line is None and not raised.traceback:
        # quoted in a sentence, no `from` line: the one package of the table or of ``libraries`` the sentence
        # names ("I have installed transformers 2.1.1, however ... cannot import name 'X' when ...") stands for it
        quoted = BARE.match(raised.message.strip()) if " from '" not in raised.message else None
        named = set(re.findall(rf"(?<![\w.-])(torch|{PACKAGES}|{libraries})(?![\w-])", raised.raised_code))
        module = named.pop() if quoted and len(named) == 1 else None
        return _bare(module, quoted["bare_name"], prose=True) if module and quoted else None
    found = BARE.fullmatch(raised.message.strip()) if raised.type == "ImportError" else None
    if found is None or line is None or found["bare_name"] not in re.findall(r"\w+", line["bare_names"]):
        return None
    module, name = line["bare_module"], found["bare_name"]
    if (
        not re.fullmatch(rf"torch|{PACKAGES}|{libraries}", module.split(".")[0])
        and lookup(module, name) is None
    ):
        return None
    return _bare(module, name)


def _bare(module: str, name: str, prose: bool = False) -> tuple[str, str, bool]:
    """(summary, fix, certain) for ``name`` missing from ``module`` of a known package (``prose``: the module is
    only the package a sentence quoting the error names, so never certain)."""
    package = module.split(".")[0]
    row = lookup(module, name)
    if row is not None:
        summary, fix = explain(row)
        return summary, fix, module not in BUILD_DEPENDENT and not prose
    where = f"{module} (the package the sentence quoting the error names)" if prose else module
    summary = (
        f"{where} has no {name} in the installed {package}: the code was written for another release of "
        f"{package} (CPython 3.6 and older print this without the module); or a file of the project named like the "
        "package, or a circular import"
    )
    fix = (
        f"pip show {package} names the release installed; install the one the project's requirements name "
        f"(pip install '{package}==<release>'), or the release that has {module}.{name} "
        f"(pip install -U {package}). Check that the import finds the installed package, not a file or folder of "
        f"the project: python -c 'import {package}; print({package}.__file__)'."
    )
    return summary, fix, False


def decisive(facts: dict) -> bool:
    """Whether the table's row for the missing name in ``facts`` alone says which release: no other reading."""
    row = known(facts)
    return row is not None and row.module not in BUILD_DEPENDENT


def last_with_it(releases: list[str], row: Change) -> str:
    """ " (0.25.2 is the last release with it)" after a pin written as a bound ('<0.26'): the release it installs,
    the last patch of the minor before the removal (the wheels read are each minor's last patch); "" where the pin
    already names it ('==1.6.*', releases between unread)."""
    if not row.removed or not below(releases, row.last, row.removed, unreleased(row.package)).startswith("<"):
        return ""
    return f" ({row.last} is the last release with it)"


def explain(row: Change, releases: list[str] | None = None) -> tuple[str, str]:
    """(summary, fix) for a name the installed release of its package lacks (``releases``: the releases read,
    when another table than this one read them: api_members.tsv's class members)."""
    releases = releases or load()[row.package][0]
    gaps = unreleased(row.package)
    what = f"{row.module}.{row.name}" if row.name else f"the module {row.module}"
    bound = []
    if row.added:
        bound.append(came(releases, row.added, row.package, gaps))
    if row.removed:
        bound.append(
            f"{went(releases, row.last, row.removed, row.package, gaps)} (the last release with it: {row.last})"
        )
    summary = (
        f"{what} {' and '.join(bound)}: the installed {row.package} is "
        + ("older or newer" if row.added and row.removed else "older" if row.added else "newer")
        + " than the code that uses it"
    )
    steps = []
    if row.removed:
        instead = f" use {row.replacement} instead, or" if row.replacement else ""
        steps.append(
            f"In the code (or by upgrading the package that calls it),{instead} pin the last release with "
            f"{what}: pip install '{row.package}{below(releases, row.last, row.removed, gaps)}'{last_with_it(releases, row)}"
        )
    if row.added:
        steps.append(
            f"Upgrade to a release that has {what}: pip install -U '{row.package}>={spelled(releases, row.added)}'"
        )
        if row.package == "torch":
            # torch's wheels for a CUDA come from its own index; a name newer than the last release is in nightlies
            steps[-1] += (
                " with the --index-url of your CUDA (a name newer than the installed index's releases is in the "
                "nightly builds: pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/<cu1xx>)"
            )
    fix = (
        ". ".join(steps)
        + f". pip show {row.package} names the release installed (read from {releases[0]} to {releases[-1]})."
    )
    return summary, fix


def _printed_has_it(row: Change, facts: dict) -> tuple[str, bool | None]:
    """(the release of ``row``'s package the log prints as installed, whether the table says that release has the
    name: from the release that added it, or the first read, to the last with it); ("", None) where the log prints
    no release of it or the row says nothing of releases."""
    shown = printed_versions.shown(facts, row.package)
    if not shown or not (row.added or row.removed):
        return "", None
    releases = load()[row.package][0]
    # "" added: in every release read, from the first (an older release than that is not known to have it)
    return shown, within(releases, shown, row.added or releases[0], row.last if row.removed else "")


def has_it(row: Change, facts: dict) -> str:
    """The release of ``row``'s package the log prints as installed (``facts``: the log's context) when the table
    says that release has the name the run did not find: the log contradicts the reading that the installed release
    is too old or too new. "" where the log prints no release of it, one without the name, or one that does not
    read."""
    shown, has = _printed_has_it(row, facts)
    return shown if has else ""


def lacks_it(row: Change, facts: dict) -> str:
    """The release of ``row``'s package the log prints as installed when the table says it lacks the name (the
    reading confirmed), else ""."""
    shown, has = _printed_has_it(row, facts)
    return shown if has is False else ""


def named_installed(summary: str, package: str, shown: str) -> str:
    """``summary`` with "the installed <package>" naming the release the log prints (the reading confirmed);
    ``summary`` itself where ``shown`` is ""."""
    if not shown:
        return summary
    return summary.replace(f"the installed {package} is", f"the installed {package} {shown} is", 1)


def imported_elsewhere(package: str, shown: str) -> tuple[str, str]:
    """(the other reading, its check) for a name of ``package`` the run did not find although the release the log
    prints installed, ``shown``, has it: the package imported is another installation (another environment or
    Python than the one whose packages were printed), or a file or folder of its name shadows it."""
    index = (
        " with the --index-url of your CUDA"
        if package == "torch"
        else f" '{package.replace('_', '-')}=={shown}'"
    )
    return (
        f"the log shows {package} {shown} installed: the {package} the script imported is likely another one "
        f"(another environment or Python than the one whose {package} was printed, or a file or folder named "
        f"{package} on its path)",
        "Print what the job's own interpreter imports, run the way the job runs:\n"
        f"python -c 'import sys, {package}; print(sys.executable, {package}.__version__, {package}.__file__)'\n"
        f"A {package}.__file__ outside site-packages is a local file or folder named {package} that shadows the "
        f"package: rename it. Another {package} there: install {package} {shown} with that interpreter (python -m "
        f"pip install{index}), or start the job in the environment that has it.",
    )
