"""A research repository's CUDA operators, compiled in its own folder, that were never built.

Deformable DETR (fundamentalvision/Deformable-DETR) ships its multi-scale deformable attention as a C++/CUDA
extension in ``models/ops``: ``models/ops/setup.py`` builds it as the top-level module
``MultiScaleDeformableAttention`` (``sh make.sh`` runs ``python setup.py build install``), and
``models/ops/functions/ms_deform_attn_func.py`` imports it. The repositories built on it copy that folder (Meta-DETR,
DINO, CVA-Net; Mask2Former, MaskDINO and OneFormer under ``modeling/pixel_decoder/ops``): a run in an environment
where it was not built stops on CPython's "No module named 'MultiScaleDeformableAttention'", and Mask2Former's copy
(``mask2former/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py``) raises its own ModuleNotFoundError
instead, "Please compile MultiScaleDeformableAttention CUDA op with the following commands:" followed by the ``cd``
into its ops folder and ``sh make.sh``. Nothing but that build provides the module, so a missing one is the
operators not compiled in the environment that runs (``extension_import``, certain); launchers.py reads any other
missing module as a package not installed. A log that also holds a build that failed (``sh make.sh`` stopping on
nvcc's or the compiler's error, "Error building extension") was one that tried: the build's own error is the
cause and leads (kinds/build.py's compiler readings), and the missing module is only likely what it left.

Two more such extensions, each built by hand in the repository's own folder (``IN_REPO``):

- VITS's monotonic alignment search (jaywalnut310/vits ``monotonic_align/``: ``setup.py`` cythonizes ``core.pyx``
  and ``__init__.py`` runs ``from .monotonic_align.core import maximum_path_c``, so ``cd monotonic_align; mkdir
  monotonic_align; python setup.py build_ext --inplace`` must have put ``core*.so`` in the inner folder), copied by
  the TTS repositories built on it (glow-tts imports ``.core``; piper's ``build_monotonic_align.sh`` cythonizes it
  and moves ``core*.so`` into ``piper_train/vits/monotonic_align/monotonic_align``). "No module named
  '...monotonic_align.monotonic_align'" or "'...monotonic_align.core'" is that build missing, or its output left
  in build/ (certain: nothing else provides those names); a bare "No module named 'monotonic_align'" is a folder
  not on the path or a package not installed, and stays launchers.py's.
- LightZero's AlphaZero MCTS (opendilab/LightZero ``lzero/mcts/ctree/ctree_alphazero``): a pybind11 module
  ``mcts_alphazero`` that CMake builds into the folder's ``build/`` (``make.sh``: mkdir build, cd build, cmake ..,
  make), which the policy puts on ``sys.path`` before ``import mcts_alphazero``; ``pip install -e .`` builds
  MuZero's Cython trees, not this one. Other repositories name their own Python file mcts_alphazero.py too, so the
  name alone is only likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "third_party:deformable-detr-msda-not-built",
    "third_party:mask2former-compile-msda-op",
    "third_party:vits-monotonic-align-not-built",
    "third_party:lightzero-mcts-alphazero-not-built",
)
ANCHORS = (
    "No module named 'MultiScaleDeformableAttention'",
    "No module named MultiScaleDeformableAttention",
    "Please compile MultiScaleDeformableAttention CUDA op",
    "monotonic_align.monotonic_align",
    "monotonic_align.core",
    "No module named 'mcts_alphazero'",
)
# the in-repository extensions' module names, as CPython's ModuleNotFoundError quotes them (see IN_REPO): a
# dotted prefix is the package the repository put its copy under (piper: larynx_train.vits. / piper_train.vits.)
IN_REPO_NAME = (
    r"(?:[A-Za-z_][\w.]{0,120}\.)?monotonic_align\.(?:monotonic_align|core)(?:\.core)?|mcts_alphazero"
)
MATCH = R(
    r"No module named '?MultiScaleDeformableAttention\b|Please compile MultiScaleDeformableAttention CUDA op|"
    rf"No module named '(?:{IN_REPO_NAME})'"
)
FACTS = (
    # not its .so named in a loader's error (an undefined symbol is a build for another torch: build.py)
    R(r"(?:No module named '?|Please compile )(?P<msda>MultiScaleDeformableAttention)\b"),
    # Mask2Former's own message, whose next lines name the folder to build in (cd <ops folder>, sh make.sh)
    R(r"(?P<msda_listed>Please compile) MultiScaleDeformableAttention CUDA op"),
    R(rf"No module named '(?P<in_repo>{IN_REPO_NAME})'"),
)

# the repository's extension a module name is, how sure the name alone is, what it is and how it is built
IN_REPO: dict[str, tuple[bool, str, str]] = {
    "monotonic_align": (
        True,
        "the monotonic alignment search of VITS (and of the TTS repositories that copy it: glow-tts, Matcha-TTS, "
        "piper, so-vits-svc, ...) is a Cython extension the repository builds in its own monotonic_align folder, "
        "and it was not built there (or its output stayed in build/)",
        "Build it with the Python the training runs with (Cython and numpy installed): cd <the repository's "
        "monotonic_align folder> && mkdir -p monotonic_align && python setup.py build_ext --inplace, so that "
        "core*.so (core*.pyd on Windows) lands in monotonic_align/monotonic_align/ (copy it there from build/lib* "
        "if it stayed in build/). piper: run build_monotonic_align.sh in src/python; Matcha-TTS: pip install -e . "
        "builds it. Rebuild it in every new environment or Python version.",
    ),
    "mcts_alphazero": (
        False,
        "LightZero's AlphaZero MCTS in C++ (ctree_alphazero) is a pybind11 module that has to be compiled by hand, "
        "and it was not built (pip install -e . builds MuZero's trees, not this one)",
        "Build it with CMake: cd lzero/mcts/ctree/ctree_alphazero && mkdir -p build && cd build && cmake .. && make "
        "(its make.sh does this; drop the arm64 flag off a Mac), so that mcts_alphazero*.so is in build/, the "
        "folder the AlphaZero policy adds to sys.path; or set mcts_ctree=False in the config to use the Python "
        "tree. If mcts_alphazero is a file of your own repository instead, run from the folder that has it.",
    ),
}


def _in_repo(facts: dict) -> str | None:
    """The IN_REPO key of the module read, None when none was."""
    module = facts.get("in_repo") or ""
    return "monotonic_align" if "monotonic_align" in module else ("mcts_alphazero" if module else None)


# a build in the same log that stopped on an error: setuptools' "error: command '.../nvcc' failed with exit code 1"
# (status in older releases), nvcc's "N errors detected in the compilation of", torch's cpp_extension
CONTEXT = tuple(
    (
        literal,
        R(
            r"(?P<saw_build_failure>error: command '[^'\n]{1,300}' failed with exit (?:code|status) [1-9]\d*|"
            r"\d+ errors? detected in the compilation of|Error building extension)"
        ),
    )
    for literal in ("failed with exit", "detected in the compilation of", "Error building extension")
)


def decided(facts: dict, ctx_facts: dict | None = None) -> bool:
    """Whether the operators' own module name was read (nothing else provides it), in a log where no build of
    them failed first (that build's error is the cause)."""
    if (ctx_facts or {}).get("saw_build_failure"):
        return False
    key = _in_repo(facts)
    return bool(facts.get("msda")) or (key is not None and IN_REPO[key][0])


def explain(facts: dict, ctx_facts: dict | None = None) -> tuple[str, str] | None:
    """The summary and fix for the deformable attention operators (or another IN_REPO extension) not built, or
    None when none was read."""
    key = _in_repo(facts)
    if key is not None and not facts.get("msda"):
        _, summary, fix = IN_REPO[key]
        if (ctx_facts or {}).get("saw_build_failure"):
            summary += "; a build in this log failed: its first error is why it is missing, fix it before building again"
        return f"{facts['in_repo']} cannot be imported: {summary}", fix
    if not facts.get("msda"):
        return None
    where = (
        "<the ops folder the message names, e.g. mask2former/modeling/pixel_decoder/ops>"
        if facts.get("msda_listed")
        else "models/ops"
    )
    failed = (
        "; a build in this log failed: its first error is why they are missing, fix it before building again"
        if (ctx_facts or {}).get("saw_build_failure")
        else ""
    )
    return (
        "the MultiScaleDeformableAttention CUDA operators were not compiled in this environment: the repository "
        "builds them from its own ops folder, and the module is nothing but that build" + failed,
        f"Build them with the Python and torch the training runs with (a GPU and nvcc of torch's CUDA version "
        f"needed): cd {where} && sh make.sh (python setup.py build install; or pip install . there), then "
        "python test.py in that folder checks them. The folder is models/ops in Deformable DETR and the "
        "repositories that copy it, <project>/modeling/pixel_decoder/ops in Mask2Former's; rebuild it after "
        "changing torch or CUDA, and in every new environment or container.",
    )
