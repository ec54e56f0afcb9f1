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
"""

from __future__ import annotations

import re

FAMILY = "builds and installs"

R = re.compile

TEMPLATES = (
    "third_party:deformable-detr-msda-not-built",
    "third_party:mask2former-compile-msda-op",
)
ANCHORS = (
    "No module named 'MultiScaleDeformableAttention'",
    "No module named MultiScaleDeformableAttention",
    "Please compile MultiScaleDeformableAttention CUDA op",
)
MATCH = R(
    r"No module named '?MultiScaleDeformableAttention\b|Please compile MultiScaleDeformableAttention CUDA op"
)
FACTS = (
    # not its .so named in a loader's error (an undefined symbol is a build for another torch: build.py)
    R(r"(?:No module named '?|Please compile )(?P<msda>MultiScaleDeformableAttention)\b"),
    # Mask2Former's own message, whose next lines name the folder to build in (cd <ops folder>, sh make.sh)
    R(r"(?P<msda_listed>Please compile) MultiScaleDeformableAttention CUDA op"),
)

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
    return bool(facts.get("msda")) and not (ctx_facts or {}).get("saw_build_failure")


def explain(facts: dict, ctx_facts: dict | None = None) -> tuple[str, str] | None:
    """The summary and fix for the deformable attention operators not built, or None when they were not read."""
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
