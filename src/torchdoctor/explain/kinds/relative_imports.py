"""A script run directly as a file whose own imports are relative, which Python refuses outside a package.

CPython's import system (``Lib/importlib/_bootstrap.py`` ``_sanity_check``, 3.6+) raises "ImportError: attempted
relative import with no known parent package" for ``from .module import x`` in a module that has no parent
package: a file started with ``python path/to/train.py`` runs as ``__main__`` with no ``__package__``, so its
``from .utils import ...`` (or ``from ..other import ...``) cannot be resolved, whatever is on the disk. The same
file started as a module of its package (``python -m package.train`` from the directory above the package)
has one. The message says exactly that (certain); a relative import that climbs above the top-level package
("attempted relative import beyond top-level package") is another mistake and not read here.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks

FAMILY = "launchers and schedulers"

R = re.compile


def _relative_import(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = (
        "a script run directly as a file imports its own package's modules relatively: Python "
        "gives a file started with python <file>.py no parent package, so a relative import cannot be resolved"
        + on_ranks(hits)
    )
    fix = (
        "Start it as a module of its package, from the directory above the package: python -m "
        "<package>.<script> (e.g. python -m src.train instead of python src/train.py; torchrun takes -m too: "
        "torchrun --nproc_per_node=2 -m src.train). Or make the script's imports absolute (from utils import x "
        "instead of from .utils import x) when the script is meant to be run as a file. A repository written "
        "to be used as a sub-package must be imported from a script in its parent directory, not run from "
        "inside it."
    )
    return summary, fix


RELATIVE_IMPORT_IN_SCRIPT = Recogniser(
    kind="relative_import_in_script",
    title="a relative import in a script run directly as a file",
    templates=("system:python-relative-import-no-parent-package",),
    anchors=("attempted relative import with no known parent package",),
    match=R(r"attempted relative import with no known parent package"),
    describe=_relative_import,
)

RECOGNISERS = (RELATIVE_IMPORT_IN_SCRIPT,)
