"""The release of each package a log prints as installed: what an environment report, a package list or an
installer wrote, never a version someone asks for.

The forms read, as the tools print them:

- issue templates and env reports: transformers' ``- `transformers` version: 4.41.2``, ``- PyTorch version
  (GPU?): 2.1.0+cu121 (True)``, ``- Accelerate version: 0.30.1``, ``- DeepSpeed version: 0.14.0``; accelerate env's
  ``- `Accelerate` version:``; Lightning's bug template ``- PyTorch Lightning Version (e.g., 1.5.0): 2.2.1`` and its
  collect_env_details' ``- lightning: 2.2.1``; torch's collect_env ``PyTorch version: 2.1.0+cu121``, ``CUDA used
  to build PyTorch: 12.1``;
- ds_report's dotted rows: ``torch version .................... 2.1.0+cu121``, ``deepspeed info ...... 0.12.3``,
  ``torch cuda version ............... 12.1``;
- package lists: collect_env's ``[pip3] numpy==1.26.4`` (a row of its own: never inside a command or a message),
  pip list's and conda list's columns (``transformers   4.41.2``, ``[conda] numpy  1.26.4  pypi_0
  pypi``), pip's ``Requirement already satisfied: transformers in ... (4.41.2)``, ``Successfully installed
  transformers-4.41.2`` and its conflict report's ``but you have transformers 4.41.2``; pip show's ``Name: torch``
  and ``Version: 2.1.0``;
- NCCL's own ``NCCL INFO NCCL version 2.18.1+cuda12.1``; a package's ``__version__`` printed with its value.

A requirement (``transformers>=4.30``, ``requires transformers==4.30.0``, ``pip install transformers==4.30``, a
``RUN pip install torch==2.1.0`` line) is not an installed release: those forms are never read. Nor is a bare
``torch==2.1.0`` row: a requirements file printed with ``cat`` and a ``pip freeze`` written to a file look alike,
and both say what was asked, which the log shows installed only through the forms above. A freeze printed in the
terminal is told apart by what surrounds it: its ``pip freeze`` (``pip list --format=freeze``) command line above
it, and only rows a freeze prints between (``x==V``, ``x @ url``, ``-e ...``; a comment, ``-r``, ``# via`` or a
range is a requirements file's, and ends the block). Each package's fact is ``installed_<package>`` (``installed_torch``,
``installed_transformers``, ...), the first printed in the log; ``kinds/__init__.py`` collects them.
"""

from __future__ import annotations

import re

# the package (as the release tables name it) and the names logs print it under; "lightning" and
# "pytorch_lightning" are one project under two names (kinds/api_members.py's release_line)
NAMES: dict[str, tuple[str, ...]] = {
    "torch": ("torch", "pytorch", "PyTorch"),
    "transformers": ("transformers", "Transformers"),
    "accelerate": ("accelerate", "Accelerate"),
    "deepspeed": ("deepspeed", "DeepSpeed"),
    "pytorch_lightning": ("pytorch_lightning", "pytorch-lightning", "PyTorch Lightning", "PyTorch-Lightning"),
    "lightning": ("lightning", "Lightning"),
    "datasets": ("datasets", "Datasets"),
    "peft": ("peft", "PEFT"),
    "trl": ("trl", "TRL"),
    "bitsandbytes": ("bitsandbytes",),
    "flash_attn": ("flash_attn", "flash-attn", "flash_attn_2_cuda"),
    "numpy": ("numpy", "Numpy", "NumPy"),
    "huggingface_hub": ("huggingface_hub", "huggingface-hub", "Huggingface_hub"),
    # NCCL's own INFO lines say "NCCL" on every line: its release is read from its "NCCL version" line (below)
    "nccl": ("nccl", "nvidia-nccl-cu11", "nvidia-nccl-cu12"),
    # the release tables' other packages (kinds/api_history.py PACKAGES), under their import and pip names
    **{
        package: (package, package.replace("_", "-"))
        for package in (
            "diffusers torchvision torchaudio torchtext timm sentence_transformers torchmetrics "
            "pytorch_pretrained_bert segmentation_models_pytorch horovod"
        ).split()
    },
}

# a release as printed: 4.41.2, 2.1.0+cu121, 0.12.3, 2.5.8.post1, 2.4.0a0+git1234, NVIDIA's container builds
# 2.6.0a0+ecf3bae40a.nv25.01 (at least major.minor; a local part after "+" kept whole, a sentence's full stop not)
_VERSION = (
    r"v?(?P<{group}>\d{{1,4}}\.\d{{1,4}}(?:\.\d{{1,4}})?"
    r"(?:[.+-]?(?:a|b|rc|post|dev|cu|cpu|rocm|git)\w*(?:\.\w+)*)?(?:\+\w+(?:\.\w+)*)?)"
)
# the end of a version: not the start of a longer number or a requirement's range
_END = r"(?![\d.]*\d)(?![<>=~])"
# a row pip freeze prints: "name==version", a direct reference "name @ file:///...", an editable "-e git+..."
_FREEZE_ROW = r"[ \t]*(?:-e [^\n]+|[A-Za-z0-9][\w.-]*(?:==[^\s#;,<>]+| @ [^\s#;]+))[ \t]*"


def _spellings(package: str) -> str:
    return "|".join(re.escape(name).replace(r"\ ", " ") for name in NAMES[package])


def _pattern(package: str) -> re.Pattern:
    """Every form ``package``'s release is printed in, as one pattern with one group (``installed_<package>``):
    each form's words before the version are a numbered group, and what must follow the version is asked only of
    the form that matched (``(?(n)...)``), so that one search per line reads them all."""
    names = _spellings(package)
    row = rf"^[ \t]*(?:\[(?:pip3?|conda)\][ \t]+)?(?:{names})"
    before = (
        # 1. an env report's or a template's row: "- `transformers` version: 4.41.2", "- PyTorch version (GPU?):
        # ...", "- PyTorch Lightning Version (e.g., 1.5.0): 2.2.1" (the example skipped), collect_env's "PyTorch
        # version: 2.1.0+cu121", Lightning's "- lightning: 2.2.1"
        rf"^[ \t]*(?:[-*][ \t]*)?`?(?:{names})`?(?:[ \t]+[Vv]ersion)?(?:[ \t]*\([^)\n]{{0,30}}\))?:[ \t]*",
        # 2. ds_report's dotted rows: "torch version ..... 2.1.0", "deepspeed info ..... 0.12.3, unknown, unknown"
        rf"^[ \t]*(?:{names})[ \t]+(?:version|info)[ \t]+\.{{3,}}[ \t]*",
        # 3. collect_env's package rows: "[pip3] numpy==1.26.4", "[conda] torch==2.1.0" (a row of its own); a bare
        # "numpy==1.26.4" is a requirement as often as what pip freeze wrote (a requirements file, a Dockerfile's
        # pin, a freeze written to a file and printed later): what was asked, not what is installed
        rf"^[ \t]*\[(?:pip3?|conda)\][ \t]+(?:{names})==[ \t]*",
        # 4, 5. pip list's and conda list's columns: "transformers   4.41.2", "[conda] numpy  1.26.4  pypi_0  pypi";
        # a row with more columns is aligned (two spaces or a tab before the version), never a sentence ("trl
        # 0.8.6 requires transformers>=4.31.0"), and its columns are conda's build and channel or pip's editable
        # path, never numbers (a table of timings: "transformers   590.1   2.33x")
        rf"{row}[ \t]+",
        rf"{row}(?: {{2,}}|\t)[ \t]*",
        # 6-8. pip's own words for what is installed
        rf"Requirement already satisfied: (?:{names})(?![\w-])[^\n(]{{0,200}}\(",
        rf"Successfully installed (?:\S+ ){{0,200}}(?:{names})-",
        rf"but you have (?:{names}) ",
        # 9. the package's __version__ printed with its value: "torch.__version__: 2.1.0", "torch.__version__ =
        # '2.1.0'", a REPL's answer on the next line (never a comparison: "__version__ >= '2.1'")
        rf"(?<![\w.])(?:{names})\.__version__\)?(?: ?[:=] ?| ?\n(?:>>> )?)['\"]?",
        # 10. pip show's two first rows, "Name: torch" then "Version: 2.1.0" (read where the log is read whole)
        rf"^Name: (?:{names})[ \t]*\r?\nVersion:[ \t]*",
        # 11. a "torch==2.1.0" row of the block a pip freeze (or pip list --format=freeze) command printed in the
        # terminal, under its command line (a prompt before it, a grep after it; never written away with ">"):
        # every row between is one freeze prints ("x==V", "x @ url", "-e ..."), so a comment, an "-r", a "# via"
        # or a range (what a requirements file holds and a freeze never does) ends the block
        rf"(?<![\w-])pip3?(?:\.exe)? (?:freeze|list)\b[^\n>|]*(?:\|[^\n>]*)?\r?\n"
        rf"(?:{_FREEZE_ROW}\r?\n){{0,400}}[ \t]*(?:{names})==[ \t]*",
    )
    after = {
        3: r"[ \t]*$",
        4: r"[ \t]*$",
        5: r"(?:[ \t]+[^\s\d]\S*){1,3}[ \t]*$",
        6: r"\)",
        11: r"[ \t]*\r?$",
    }
    # every form anchored at a line's start (pip's words after whatever precedes them on it): a search fails at
    # once everywhere else, and most lines that name a package are a traceback's frames
    anchored = [form[1:] if form.startswith("^") else rf"[^\n]*?{form}" for form in before]
    return re.compile(
        "^(?:"
        + "|".join(f"({form})" for form in anchored)
        + ")"
        + _VERSION.format(group=f"installed_{package}")
        + _END
        + "".join(f"(?({n}){form})" for n, form in after.items()),
        re.M,
    )


# torch's collect_env and ds_report name CUDA's release in their own words; NCCL prints its own
_OWN_WORDS = {
    "cuda": (
        ("CUDA used to build PyTorch", r"^CUDA used to build PyTorch: ?"),
        ("torch cuda version", r"^[ \t]*torch cuda version[ \t]+\.{3,}[ \t]*"),
    ),
    "nccl": (
        ("NCCL version", r"\bNCCL (?:INFO )?NCCL version "),
        ("nccl version", r"^[ \t]*nccl version[ \t]+\.{3,}[ \t]*"),
    ),
}


def _own_words() -> tuple[tuple[str, re.Pattern], ...]:
    return tuple(
        (literal, re.compile(prefix + _VERSION.format(group=f"installed_{package}") + _END, re.M))
        for package, rows in _OWN_WORDS.items()
        for literal, prefix in rows
    )


# (a literal the line must hold, the pattern) for kinds.CONTEXT_FACTS: each package's pattern under each of its
# names (a line runs few of them: most lines name no package)
_PATTERNS = {package: _pattern(package) for package in NAMES}
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    *((name, _PATTERNS[package]) for package, names in NAMES.items() for name in names),
    *_own_words(),
)


# The words the first line of a package's release holds, one at least (each form of `_pattern` starts at a line's
# start with one of the package's names on that line, or the "pip" of the freeze command above its rows): the
# pattern, anchored at lines' starts, is tried only at those lines (`first_printed`). Searched over a log's whole
# head (a megabyte), the pattern alone costs 0.1 s: Python's ``re`` tries it at every position.
LINE_WORDS: dict[re.Pattern, re.Pattern] = {
    pattern: re.compile(_spellings(package) + "|pip") for package, pattern in _PATTERNS.items()
}


def first_printed(pattern: re.Pattern, text: str) -> re.Match | None:
    """``pattern.search(text)``, the same match, where a line that starts it must hold one of its `LINE_WORDS`
    (a package's release as printed): tried only at the starts of the lines that hold one."""
    words = LINE_WORDS.get(pattern)
    if words is None:
        return pattern.search(text)
    at = 0
    while (word := words.search(text, at)) is not None:
        found = pattern.match(text, text.rfind("\n", 0, word.start()) + 1)
        if found is not None:
            return found
        at = text.find("\n", word.end()) + 1
        if not at:
            return None
    return None


# one project under two names: a log prints either (lightning.pytorch is pytorch_lightning renamed, one release line)
_SAME_PROJECT = {"lightning": "pytorch_lightning", "pytorch_lightning": "lightning"}


def shown(facts: dict, package: str) -> str:
    """The release of ``package`` the log printed as installed (``facts``: the log's context facts), "" where it
    printed none: ``shown({"installed_pytorch_lightning": "2.2.1"}, "lightning")`` is ``"2.2.1"``."""
    return str(
        facts.get(f"installed_{package}")
        or facts.get(f"installed_{_SAME_PROJECT.get(package, package)}")
        or ""
    )


def printed(text: str) -> dict[str, str]:
    """The release of each package ``text`` prints as installed, the first one printed, read as `explain` reads a
    log's head (whole, so that pip show's two rows are one form):
    ``printed("- `transformers` version: 4.41.2\\n[pip3] numpy==1.26.4")`` is
    ``{"transformers": "4.41.2", "numpy": "1.26.4"}``."""
    found: dict[str, str] = {}
    for literal, pattern in CONTEXT:
        if literal in text and (read := pattern.search(text)):
            for key, value in read.groupdict().items():
                if value:
                    found.setdefault(key.removeprefix("installed_"), value)
    return found
