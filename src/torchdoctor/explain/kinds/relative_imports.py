"""A script run directly as a file whose own imports are relative, which Python refuses outside a package.

CPython's import system (``Lib/importlib/_bootstrap.py`` ``_sanity_check``, 3.6+) raises "ImportError: attempted
relative import with no known parent package" for ``from .module import x`` in a module that has no parent
package: a file started with ``python path/to/train.py`` runs as ``__main__`` with no ``__package__``, so its
``from .utils import ...`` (or ``from ..other import ...``) cannot be resolved, whatever is on the disk. The same
file started as a module of its package (``python -m package.train`` from the directory above the package)
has one. The message says exactly that (certain) when the failing file is the one started; a file other code
imported as a top-level module or executed (the traceback's outer frames in other files) prints it too (likely,
its own fix). A relative import that climbs above the top-level package
("attempted relative import beyond top-level package") is another mistake and not read here.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _relative_import(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    top = next((str(h.facts["raised_below_top"]) for h in hits if h.facts.get("raised_below_top")), None)
    if top is not None:
        return (
            "a relative import in a file that other code imported as a top-level module or executed (the run "
            f"started from {top}): it has no parent package" + on_ranks(hits),
            "The failing file was not started itself: the traceback's outer frames imported or ran it (the script "
            "importing a sibling module by its bare name, a library executing a config file, torch.hub loading a "
            "hubconf), so it has no package and its 'from .x import y' cannot resolve. Make that file's imports "
            "absolute (from x import y, with its folder on sys.path), or import it as part of its package (from "
            "package import module, the package's folder an importable package with __init__.py); for a library's "
            "config loader, use the base-config mechanism it documents instead of a relative import. When the "
            "script itself is meant to be inside the package: python -m <package>.<script>.",
        )
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
    # certain where the file that failed is the one started (the traceback's only file, or no traceback): a file
    # that other code imported as a top-level module or executed (a sibling module of the script, a library's
    # config loader exec-ing a config file, torch.hub's hubconf) prints it too, and running the script with -m
    # does not fix that one
    confirm=lambda hits, ctx: not any("raised_below_top" in h.facts for h in hits),
    describe=_relative_import,
)

RECOGNISERS = (RELATIVE_IMPORT_IN_SCRIPT,)
