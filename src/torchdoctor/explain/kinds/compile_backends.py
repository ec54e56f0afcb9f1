"""torch.compile's default backend without the Triton it generates GPU kernels with.

TorchInductor, ``torch.compile``'s default backend, writes its GPU kernels in Triton. When ``import triton`` fails
or finds a release too old (``torch/utils/_triton.py``: ``has_triton()``), the scheduler raises
``torch/_inductor/exc.py``'s ``TritonMissing``: "Cannot find a working triton installation. Either the package is
not installed or it is too old. More information on installing Triton can be found at: ..." (torch 2.0-2.4 raised
the same first sentence as a RuntimeError). Compilation is lazy, so it surfaces at the first forward of the
compiled model, often the first training step. Linux wheels of torch depend on the matching ``triton`` (their
metadata pins it for ``platform_system == "Linux"``); the Windows and macOS wheels do not, and there is no official
Triton for Windows. Both of the message's readings (absent, too old) are this kind: certain.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, merged, on_ranks

FAMILY = "builds and installs"

R = re.compile

WINDOWS = R(r"(?P<on_windows>[A-Z]:\\|\bWindows\b|\bwin_amd64\b|\bWinError\b)")


def _triton(hits: list[Hit], ctx: Context) -> tuple[str, str]:
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


TRITON_MISSING = Recogniser(
    kind="triton_missing",
    templates=("third_party:inductor-triton-missing",),
    title="torch.compile without Triton",
    anchors=("Cannot find a working triton installation", "TritonMissing"),
    facts=(WINDOWS,),
    describe=_triton,
)

RECOGNISERS = (TRITON_MISSING,)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = ((":\\", WINDOWS), ("Windows", WINDOWS))
