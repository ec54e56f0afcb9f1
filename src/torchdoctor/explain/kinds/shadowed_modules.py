"""A file or folder of the user's that Python imports instead of the installed module of its name.

``./torch.py``, ``./random.py``, a ``transformers/`` folder on PYTHONPATH: the name the code wants is then missing
from it.

What CPython prints for it (Python/ceval.c import_from, Objects/moduleobject.c module_getattro):

- ``cannot import name 'Random' from 'random' (/home/me/run/random.py)``: the file it read is named, and a file
  named as the module outside site-packages/dist-packages and the standard library's folder is the local copy;
- ``module 'random' has no attribute 'randint' (consider renaming '/home/me/run/random.py' since it has the same
  name as the standard library module ...)`` and ``... (consider renaming '...' if it has the same name as a
  third-party module you intended to import)``: Python 3.13's own hint, which names the file;
- ``partially initialized module 'torch' has no attribute 'nn' (most likely due to a circular import)`` raised in a
  file named as that module outside site-packages (``torch.py`` running ``import torch`` imports itself);
- ``module 'torch' has no attribute 'cuda'``, a name every torch release has: an empty ``torch.py`` or ``torch/``
  of the user's (no path is printed), or an install whose files are gone.

Only likely: an editable install (``pip install -e``) of a checkout is a real install outside site-packages, and
a package imported from its own source tree prints the same. Read before versions.py's ``dependency_version``,
which it absorbs ("the installed release is older") where it stands.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "builds and installs"

# where an installed package or the standard library lives: site-packages, dist-packages, lib/python3.X, Lib\
_INSTALLED = r"(?:site-packages|dist-packages|[/\\]lib(?:64)?[/\\]python\d[\d.]*[/\\]|[/\\]Lib[/\\])"
# torch's names since its first releases: a torch without them is not an older torch
TORCH_ALWAYS = (
    "nn",
    "cuda",
    "optim",
    "utils",
    "autograd",
    "Tensor",
    "FloatTensor",
    "LongTensor",
    "zeros",
    "ones",
    "randn",
    "cat",
    "save",
    "load",
    "from_numpy",
    "manual_seed",
    "backends",
    "multiprocessing",
)

MATCH = Pattern(
    # the file CPython read, named as the module, outside an install
    rf"cannot import name '(?P<shadow_name>\w{{1,100}})' from '(?P<shadow_module>\w{{1,100}})' "
    rf"\((?P<shadow_path>(?![^)]{{0,400}}{_INSTALLED})[^)]{{0,400}}[/\\](?P=shadow_module)(?:[/\\]__init__)?\.pyc?)\)|"
    # Python 3.13's hint names the file
    r"module '(?P<hint_module>[\w.]{1,200})' has no attribute '(?P<hint_name>\w{1,100})' \(consider renaming "
    r"'(?P<hint_path>[^']{1,400})' (?P<hint_stdlib>since it has the same name as the standard library)?|"
    # a module imported while it was still running: a file named as it importing itself
    r"partially initialized module '(?P<circular_module>\w{1,100})' has no attribute '(?P<circular_name>\w{1,100})'|"
    # a torch without a name every release has
    rf"module 'torch' has no attribute '(?P<torch_always>{'|'.join(TORCH_ALWAYS)})'"
)


def _named_as(file: str, module: str) -> bool:
    """Whether ``file`` is the module ``module`` itself (``.../torch.py``, ``.../torch/__init__.py``) and not in
    an install (site-packages, dist-packages, the standard library's folder)."""
    if re.search(_INSTALLED, file):
        return False
    parts = re.split(r"[/\\]", file)
    stem = parts[-1].split(".")[0]
    return stem == module or (stem == "__init__" and len(parts) > 1 and parts[-2] == module)


def _holds(facts: dict) -> bool:
    """A circular import counts only when the file that raised is the module's own name outside an install."""
    if "circular_module" not in facts:
        return True
    return _named_as(str(facts.get("raised_in_file", "")), str(facts["circular_module"]))


def _describe(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    module = str(
        facts.get("shadow_module")
        or facts.get("hint_module")
        or facts.get("circular_module")
        or ("torch" if "torch_always" in facts else "")
    )
    name = str(
        facts.get("shadow_name")
        or facts.get("hint_name")
        or facts.get("circular_name")
        or facts.get("torch_always")
    )
    circular = facts.get("raised_in_file") if "circular_module" in facts else ""
    path = str(facts.get("shadow_path") or facts.get("hint_path") or circular or "")
    top = module.split(".")[0]
    where = f" ({path})" if path else ""
    summary = (
        f"{module} has no {name}: the {module} imported is likely a local file or folder of that name{where}, not "
        f"the installed package" + on_ranks(hits)
    )
    if path:
        fix = (
            f"Python imported {path} as {module}, because the script's folder (and PYTHONPATH) come before "
            f"site-packages on the import path. Rename or move it (and delete a __pycache__ beside it), then run "
            "again."
        )
    else:
        fix = (
            f"A {top}.py or a {top}/ folder beside the script (or on PYTHONPATH) is imported instead of the "
            f"installed {top}. Find it: python -c 'import {top}; print({top}.__file__)' run where the job runs; "
            "rename or move it (and delete a __pycache__ beside it)."
        )
    return summary, fix + " `torchdoctor check` lists such files (sys.shadowed_modules)."


MODULE_SHADOWED = Recogniser(
    kind="module_shadowed",
    title="a local file or folder shadowing an installed module",
    anchors=(
        "cannot import name '",
        "(consider renaming ",
        "partially initialized module '",
        "module 'torch' has no attribute '",
    ),
    templates=(
        "system:module-attribute-consider-renaming-stdlib",
        "system:module-attribute-consider-renaming",
    ),
    match=MATCH,
    facts=(MATCH,),
    # an editable install of a checkout, or a package run from its own source tree, prints the same
    confirm=lambda hits, ctx: False,
    holds=_holds,
    absorbs=("dependency_version",),
    also=(
        Alternative(
            "broken_install",
            "an install of torch whose files are gone (an interrupted pip left its folder)",
            "python -c 'import torch; print(torch.__file__)' names the copy imported: a torch folder in "
            "site-packages without its files is reinstalled with pip install --force-reinstall torch.",
            when=("torch_always",),
        ),
        Alternative(
            "dependency_version",
            "an editable install (pip install -e) of a checkout at another release",
            "pip show -f <package> says where it is installed from: a checkout is brought to the release the code "
            "needs (git checkout <tag>), or the package installed from PyPI (pip install <package>).",
            when=("shadow_path",),
        ),
    ),
    describe=_describe,
)

RECOGNISERS = (MODULE_SHADOWED,)
