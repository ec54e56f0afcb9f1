"""What the environment lacks that the code assumes: a library, a torch new enough, a package an index has, a Python.

- transformers' backend checks (``src/transformers/utils/import_utils.py``): ``requires_backends`` raises
  ImportError with the BACKENDS_MAPPING message of each missing backend, ``{0} requires the {library} library but
  it was not found in your environment.`` (SENTENCEPIECE_IMPORT_ERROR "the SentencePiece library",
  PROTOBUF_IMPORT_ERROR "the protobuf library", TOKENIZERS_IMPORT_ERROR "the 🤗 Tokenizers library", and so on for
  timm, scipy, peft, bitsandbytes, ...; diffusers copies them). The class named first needs that package and it is
  not installed: certain. PyTorch's own line is left to the next check, which says why.
- ``is_torch_available`` in the same file: ``Disabling PyTorch because PyTorch >= {min} is required but found
  {version}`` (recent releases; the minimum raised with them: 2.1, 2.4, 2.5), after which transformers runs as if torch
  were absent. The line names both versions: certain.
- pip's resolver (``pip/_internal/resolution/resolvelib/factory.py``): ``Could not find a version that satisfies
  the requirement {} (from versions: none)`` for a package other than torch's (those are build.py's
  no_matching_wheel, with the table of their wheels): no release of that name at all for pip, a name the index
  does not have (a typo, a package installed from git or another index, one the project does not need) or an index
  pip could not reach, so only likely.
- CPython (``Objects/abstract.c``, ``PyObject_GetItem``): ``'type' object is not subscriptable`` when a class
  without ``__class_getitem__`` is subscripted; the builtins (list, dict, tuple, set, type) have one from Python
  3.9 (PEP 585), so annotations such as ``list[int]`` fail on 3.8 and older. Another class subscripted prints the
  same words, so only likely.

The pieces are read by the recognisers that own the kinds: launchers.py's broken_install, versions.py's
dependency_version and build.py's no_matching_wheel.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Facts, Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the library words transformers' messages use, where pip's name differs from them lowered
PIP_NAME = {"sklearn": "scikit-learn"}

# -- transformers' backend check: read by launchers.py's broken_install (a package missing from the environment)
BACKEND_TEMPLATES = (
    "transformers:requires-backend-library-not-found",
    "transformers:requires-sentencepiece-not-found",
)
BACKEND_ANCHOR = "library but it was not found in your environment"
BACKEND = R(
    r"(?P<backend_user>[\w.]{1,80}) requires the (?P<backend>(?!PyTorch\b)(?:🤗 )?[\w.\-]{1,40}) library"
    r"(?: and \w{1,20})? but it was not found in your environment"
)


def explain_backend(facts: Facts) -> tuple[str, str]:
    """A transformers (or diffusers) class whose optional library is not installed."""
    library = facts.get("backend", "a library")
    user = facts.get("backend_user", "a transformers class")
    word = library.replace("🤗", "").strip().lower()
    package = PIP_NAME.get(word, word)
    return (
        f"{user} needs the {library} library, which is not installed in the environment the run uses (transformers "
        "checks its optional packages when the class is used)",
        f"Install it in that environment: pip install {package} (add it to the project's requirements), then "
        "start the Python again (in a notebook, restart the runtime) so transformers sees it. Under a launcher or "
        "on a cluster, install it where the job's Python is (python -m pip install ... with that Python).",
    )


# -- transformers' torch minimum and CPython's builtin generics: read by versions.py's dependency_version
TORCH_TOO_OLD_TEMPLATE = "transformers:disabling-pytorch-because-pytorch-required"
TORCH_TOO_OLD_ANCHOR = "Disabling PyTorch because PyTorch >="
TORCH_TOO_OLD = R(
    r"Disabling PyTorch because PyTorch >= ?(?P<transformers_torch_min>\d[\w.]{0,10}) is required"
    r"(?: but found (?P<transformers_torch_found>\d[\w.+]{0,30}))?"
)


def explain_torch_too_old(facts: Facts) -> tuple[str, str]:
    """The installed transformers turned its PyTorch support off: the torch is older than its minimum."""
    needed = facts.get("transformers_torch_min", "<the minimum>")
    found = facts.get("transformers_torch_found", "older")
    return (
        f"the installed transformers needs PyTorch {needed} or newer and the environment has {found}, so "
        "transformers turned its PyTorch support off (its models then refuse: requires the PyTorch library)",
        f"Make the two agree: upgrade torch to {needed} or newer (pip install 'torch>={needed}' with the "
        "--index-url of your CUDA, or a newer container image), or keep this torch and install a transformers "
        f"release that supports torch {found} (the one the project pins; pip install 'transformers<X' for the "
        "release before the minimum was raised). pip show torch transformers names both.",
    )


BUILTIN_GENERIC_TEMPLATE = "system:type-object-not-subscriptable"
BUILTIN_GENERIC_ANCHOR = "'type' object is not subscriptable"
BUILTIN_GENERIC = R(r"(?P<builtin_generic>'type' object is not subscriptable)")
OLD_PYTHON = R(r"/python(?P<old_python>3\.[5-8])/")


def explain_builtin_generic(facts: Facts) -> tuple[str, str]:
    """A builtin class subscripted (list[int]) on a Python before 3.9."""
    python = facts.get("old_python")
    return (
        "a class was subscripted in an annotation or an alias (list[int], dict[str, ...], tuple[...]), which the "
        "builtins allow only from Python 3.9: the code was written for a newer Python than the one running it"
        + (f" (Python {python})" if python else ""),
        "Run it with Python 3.9 or newer (a new environment: conda create -n <name> python=3.9 or newer, then install "
        "the requirements again), or, to keep this Python, write the annotations with typing's names (from "
        "typing import List, Dict, Tuple; List[int]) or add 'from __future__ import annotations' at the top of "
        "the module. If the class subscripted is your own, it needs a __class_getitem__ (or typing.Generic).",
    )


# -- pip's "(from versions: none)" for a package other than torch's: read by build.py's no_matching_wheel
_TORCH_PACKAGES = (
    r"(?:torch|torchvision|torchaudio|torchtext|torchdata|pytorch-triton|triton|xformers)(?![\w.\-])"
)
NO_RELEASE_ANCHOR = "(from versions: none)"
NO_RELEASE = R(
    rf"Could not find a version that satisfies the requirement (?!{_TORCH_PACKAGES})"
    r"(?P<absent>[A-Za-z][\w.\-]{0,60})[^\n(]{0,60}\(from versions: none\)"
)


def explain_no_release(facts: Facts) -> tuple[str, str]:
    """pip found no release of a (non-torch) package at all: a name the index lacks, or no index reached."""
    package = facts.get("absent", "the package")
    return (
        f"pip found no release of {package} at all (from versions: none): the index it uses does not have that "
        "name, or pip could not reach the index",
        f"Check the name: pip index versions {package} (or its page on pypi.org). A package the code does not "
        "really need (a stray line in requirements.txt or the environment file): remove it from there. A "
        "package published elsewhere: install it from there first (pip install git+https://..., or "
        "--extra-index-url for its index), then the rest. A typo: correct it. If every package fails the same "
        "way, pip cannot reach PyPI: set the proxy (HTTPS_PROXY) or the mirror (pip config set global.index-url).",
    )
