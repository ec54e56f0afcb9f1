"""torch.compile's default backend without the Triton it generates GPU kernels with.

TorchInductor, ``torch.compile``'s default backend, writes its GPU kernels in Triton. When ``import triton`` fails
or finds a release too old (``torch/utils/_triton.py``: ``has_triton()``), the scheduler raises
``torch/_inductor/exc.py``'s ``TritonMissing``: "Cannot find a working triton installation. Either the package is
not installed or it is too old. More information on installing Triton can be found at: ..." (torch 2.0-2.4 raised
the same first sentence as a RuntimeError). Compilation is lazy, so it surfaces at the first forward of the
compiled model, often the first training step. Linux wheels of torch depend on the matching ``triton`` (their
metadata pins it for ``platform_system == "Linux"``); the Windows and macOS wheels do not, and there is no official
Triton for Windows. Both of the message's readings (absent, too old) are this kind: certain. On a GPU below compute
capability 7.0 ``has_triton()`` is False too, and the scheduler says so instead: "Found <GPU> which is too old to be
supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability
>= 7.0" (``GPUTooOldForTriton`` from torch 2.6); the fix there is not to compile, or to compile without Triton.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

WINDOWS = R(r"(?P<on_windows>[A-Z]:\\|\bWindows\b|\bwin_amd64\b|\bWinError\b)")


def _triton(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if "triton_gpu" in merged(hits):
        return _triton_gpu(hits, ctx)
    windows = "on_windows" in merged(hits) or "on_windows" in ctx.facts
    summary = (
        "torch.compile's default backend (TorchInductor) needs Triton, and no working Triton is installed"
        + (" (there is no official Triton for Windows)" if windows else "")
    )
    fix = (
        "On Windows (and macOS) torch's wheels bring no Triton: don't compile there (drop torch.compile, or the "
        "script's compile option: --compile/torch_compile false), compile with a backend that needs no Triton "
        "(torch.compile(model, backend='aot_eager')), or install a community Windows build (pip install "
        "triton-windows, the release matching your torch). On Linux install the triton your torch pins (pip "
        "install -U torch brings it; pip show torch lists the version), or reinstall torch from the official "
        "index so an old triton is replaced. Check with python -c 'import triton; print(triton.__version__)'."
    )
    return summary + on_ranks(hits), fix


# torch/_inductor/scheduler.py (GPUTooOldForTriton from torch 2.6): has_triton() is False on a GPU below compute
# capability 7.0, which Triton does not generate code for; the same branch as TritonMissing, and certain
TRITON_TOO_OLD = R(
    r"Found (?P<triton_gpu>[^\n]{1,80}?) which is too old to be supported by the triton GPU compiler"
    r"(?:[^\n]{0,200}?your device is of CUDA capability (?P<triton_cc>\d{1,2}\.\d{1,2}))?"
)


def _triton_gpu(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    gpu, cc = facts.get("triton_gpu", "this GPU"), facts.get("triton_cc")
    capability = f" (compute capability {cc})" if cc else ""
    summary = (
        f"torch.compile's default backend (TorchInductor) generates Triton kernels, and Triton does not support "
        f"{gpu}{capability}: it needs compute capability 7.0 (Volta) or newer"
    )
    fix = (
        "Run without torch.compile on this GPU (drop torch.compile, or the script's compile option: --compile "
        "False, compile=False in nanoGPT's config, torch_compile false in the Trainer), or compile with a "
        "backend that generates no Triton code (torch.compile(model, backend='aot_eager')). A GPU of compute "
        "capability 7.0 or newer (V100, T4, RTX 20xx and later) runs it."
    )
    return summary + on_ranks(hits), fix


TRITON_MISSING = Recogniser(
    kind="triton_missing",
    templates=("third_party:inductor-triton-missing", "third_party:inductor-gpu-too-old-for-triton"),
    title="torch.compile without Triton",
    anchors=(
        "Cannot find a working triton installation",
        "TritonMissing",
        "which is too old to be supported by the triton GPU compiler",
    ),
    facts=(WINDOWS, TRITON_TOO_OLD),
    describe=_triton,
)

RECOGNISERS = (TRITON_MISSING,)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = ((":\\", WINDOWS), ("Windows", WINDOWS))
