"""Which copy ``import X`` takes: a file or folder of the user's, a ``PYTHONPATH`` entry or a second install that
comes before the installed package on the import path.

A script run as ``python train.py`` (or by torchrun) imports from its own folder first, then ``PYTHONPATH``, then
the user's ``~/.local`` site, then the environment's site-packages and the standard library. A ``torch.py`` of
the user's, a ``transformers/`` on ``PYTHONPATH`` holding another release, a ``pip install --user`` torch or a
leftover ``torch.pyc`` is then what the run imports: ``module 'torch' has no attribute 'cuda'``, or another
release than ``pip list`` shows.

Only names that the environment also has installed (its site-packages, the standard library) are reported: a
local ``utils.py`` shadows nothing.
"""

from __future__ import annotations

import importlib.machinery
import os
import site
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# How many entries of one folder are read at most: a data folder of a million files is not a module folder.
MAX_ENTRIES = 20_000

_SUFFIXES = tuple(
    sorted(
        importlib.machinery.SOURCE_SUFFIXES
        + importlib.machinery.BYTECODE_SUFFIXES
        + importlib.machinery.EXTENSION_SUFFIXES,
        key=len,
        reverse=True,
    )
)


@dataclass(frozen=True)
class Shadow:
    name: str  # the module name, "torch"
    found: str  # what import takes: "/home/me/run/torch.py"
    entry: str  # the path entry holding it
    where: str  # "this folder", "PYTHONPATH", "the user site (~/.local)", "sys.path"
    installed: str  # the installed copy it hides: ".../site-packages/torch"


def modules_in(folder: str, limit: int = MAX_ENTRIES) -> dict[str, str]:
    """The top-level modules a folder on the import path offers, by name, with the file or package each is:
    ``name.py``, ``name.pyc`` (sourceless), an extension module, or a package folder with ``__init__.py``."""
    found: dict[str, str] = {}
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= limit:
                    break
                name = _module_name(entry)
                if name and name not in found:
                    found[name] = entry.path
    except OSError:
        pass
    return found


def _module_name(entry: os.DirEntry) -> str | None:
    try:
        if entry.is_dir():
            regular = os.path.isfile(os.path.join(entry.path, "__init__.py"))
            return entry.name if regular and entry.name.isidentifier() else None
    except OSError:
        return None
    for suffix in _SUFFIXES:
        if entry.name.endswith(suffix):
            stem = entry.name[: -len(suffix)]
            return stem if stem.isidentifier() else None
    return None


def installed_folders() -> list[str]:
    """The environment's own folders: its site-packages and the standard library's."""
    paths = sysconfig.get_paths()
    folders = [*site.getsitepackages(), paths["stdlib"], paths["platstdlib"]]
    folders.append(os.path.join(paths["platstdlib"], "lib-dynload"))
    return list(dict.fromkeys(os.path.realpath(f) for f in folders))


def import_path(cwd: str, search_path: Sequence[str], environ) -> list[tuple[str, str]]:
    """The path a script run from ``cwd`` imports along, each entry with where it comes from."""
    pythonpath = {os.path.realpath(p) for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    user_site = os.path.realpath(site.getusersitepackages())
    # PYTHONSAFEPATH (Python 3.11+) keeps the script's folder off the path: nothing there is imported.
    labelled = [] if environ.get("PYTHONSAFEPATH") else [(os.path.realpath(cwd), "this folder")]
    for entry in search_path:
        if not entry:
            continue
        real = os.path.realpath(entry)
        if real in pythonpath:
            where = "PYTHONPATH"
        elif real == user_site:
            where = "the user site (pip install --user)"
        else:
            where = "sys.path"
        labelled.append((real, where))
    seen: set[str] = set()
    return [(e, w) for e, w in labelled if not (e in seen or seen.add(e))]


def shadows(
    cwd: str | None = None,
    search_path: Sequence[str] | None = None,
    environ=None,
    installed: Iterable[str] | None = None,
    loaded: Iterable[str] | None = None,
) -> list[Shadow]:
    """Every installed module that an earlier entry of the import path hides, in path order. A standard
    module counts only when it is one of ``loaded`` (the modules this process, with torch imported, holds)."""
    cwd = os.getcwd() if cwd is None else cwd
    search_path = sys.path[1:] if search_path is None else search_path  # sys.path[0]: torchdoctor's own
    environ = os.environ if environ is None else environ
    installed = list(installed_folders() if installed is None else (os.path.realpath(f) for f in installed))
    path = import_path(cwd, search_path, environ)
    loaded = set(sys.modules if loaded is None else loaded)
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths["stdlib"]) + os.sep, os.path.realpath(paths["platstdlib"]) + os.sep}
    found = []
    taken: set[str] = set()
    for index, (entry, where) in enumerate(path):
        if entry in installed:
            continue
        before = {e for e, _ in path[: index + 1]}
        later = [f for f in installed if f not in before]
        for name, location in sorted(modules_in(entry).items()):
            if name in taken or _never_shadowed(name):
                continue
            hidden = next(filter(None, (_find(name, folder) for folder in later)), None)
            if hidden and _standard(hidden, stdlib) and name not in loaded:
                continue  # a standard module nothing imported here (test.py hides `test`, which no run needs)
            if hidden:
                taken.add(name)
                found.append(Shadow(name, location, entry, where, hidden))
    return found


def _find(name: str, folder: str) -> str | None:
    spec = importlib.machinery.PathFinder.find_spec(name, [folder])
    if spec is None or spec.origin is None:  # absent, or only a namespace portion: a regular package wins
        return None
    return os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin


def _standard(location: str, stdlib: set[str]) -> bool:
    """Part of the standard library (under its folder, not in a site-packages below it)."""
    parts = location.split(os.sep)
    return location.startswith(tuple(stdlib)) and not {"site-packages", "dist-packages"} & set(parts)


def _never_shadowed(name: str) -> bool:
    """Built into the interpreter or frozen in it (os, codecs, io, ...): loaded before any path entry is read."""
    return name in sys.builtin_module_names or importlib.machinery.FrozenImporter.find_spec(name) is not None
