"""NCCL unable to load the CUDA driver's library (libcuda.so) or the entry points it needs from it.

NCCL 2.14-2.20 opened libcuda.so itself (``src/misc/cudawrap.cc``: NCCL_CUDA_PATH, then the loader's path) and looked
up cuInit, cuDriverGetVersion and cuGetProcAddress; from 2.14 on it asks the driver for each entry point it uses and
stops with "CUDA some PFN functions not found in the library" when one is missing. A process that sees no driver
library at all (a container started without the NVIDIA runtime, NCCL_CUDA_PATH pointing elsewhere) and a driver
older than the CUDA release NCCL was built for print the same lines: each stays likely, its fix naming both.
"""

from __future__ import annotations

import dataclasses
import re

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "drivers and GPUs"

_DRIVER = (
    "NCCL needs the NVIDIA driver's libcuda.so, new enough for the CUDA release it was built for. Check what the "
    "process sees: nvidia-smi (the driver and the newest CUDA it supports) against python -c 'import torch; "
    "print(torch.version.cuda)'. In a container, start it with the NVIDIA runtime (docker run --gpus all, the "
    "nvidia-container-toolkit; Kubernetes: the NVIDIA device plugin) so the host's libcuda.so is mounted; unset "
    "NCCL_CUDA_PATH if it points at another folder, and remove a CUDA toolkit's stubs/ or compat/ folder from "
    "LD_LIBRARY_PATH. With an older driver, upgrade it or install the torch wheel built for the CUDA the driver "
    "supports (pip install torch --index-url https://download.pytorch.org/whl/cu118)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("CUDA some PFN functions not found in the library", _DRIVER),
    ("Failed to find CUDA library", _DRIVER),
    ("Failed to load CUDA missing symbol", _DRIVER),
    ("cuDriverGetVersion failed with", _DRIVER),
)

NCCL_CUDA_DRIVER = refusal_recogniser(
    kind="nccl_cuda_driver",
    title="NCCL cannot load the CUDA driver library or its entry points",
    refusals=REFUSALS,
    templates=(
        "nccl:cuda-some-pfn-functions-not-found",  # src/misc/cudawrap.cc
        "nccl:failed-to-find-cuda-library-nccl",
        "nccl:failed-to-find-cuda-library-nccl-2",
        "nccl:failed-to-find-cuda-library-in",
        "nccl:failed-to-load-cuda-missing-symbol",
        "nccl:failed-to-load-cuda-missing-symbol-2",
        "nccl:failed-to-load-cuda-missing-symbol-3",
        "nccl:cudrivergetversion-failed-with",
    ),
    # no driver library in reach and a driver too old print the same lines
    several=tuple(text for text, _ in REFUSALS),
)

# the WARN's own words from the failed call on (not the "file.cc:line NCCL WARN" before them); the failure torch
# reports for it ("unhandled system error", its "Last error:" quoting the same line) is this one's consequence
NCCL_CUDA_DRIVER = dataclasses.replace(
    NCCL_CUDA_DRIVER,
    facts=(re.compile(r"(?P<refusal>(?:" + "|".join(re.escape(t) for t, _ in REFUSALS) + r")[^\n]{0,260})"),),
    absorbs=("nccl_system_error", "nccl_error"),
    reject=None,  # a C library's WARN, never a traceback's quoted source line: "gdr_map(handle ..." starts one
)

RECOGNISERS = (NCCL_CUDA_DRIVER,)
