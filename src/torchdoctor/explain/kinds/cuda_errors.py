"""The class of a CUDA runtime error, wherever it is reported.

The CUDA runtime's error strings (``cudaGetErrorString``, catalog ``cuda_runtime.tsv``) reach a log in several
wrappers: torch's ``CUDA error: <string>`` (c10/cuda/CUDAException.h, C10_CUDA_CHECK), NCCL's ``NCCL WARN Cuda
failure '<string>'`` (its CUDACHECK macro), an extension's own ``CUDA error: <string> at file:line``. The
wrapper does not matter; the string's class does:

- a kernel that faulted — ``an illegal memory access was encountered``, ``unspecified launch failure``,
  ``misaligned address``, ``an illegal instruction was encountered``, ``hardware stack error``: reported
  asynchronously, at whatever call came next, so the line that reports it is usually not the one at fault. A
  kernel reads or writes memory it must not: most often a bug of the library whose kernel ran (torch, NCCL,
  flash-attn or another extension) in the release installed, or an index that only a device-side assert would
  name, or a GPU that is failing (Xid errors in ``dmesg``); never certain;
- ``initialization error``: CUDA could not start in this process — most often CUDA was initialised in a
  parent that then forked (DataLoader workers, multiprocessing's fork), or a driver in a bad state.

torch before ATen (``aten/src/THC``, releases up to 1.x) wrapped the same strings as ``cuda runtime error (N) :
<string> at <file>:<line>`` (THCGeneral.cpp ``__THCudaCheck``). An ``invalid argument`` from THC's own files
(the device set-up of THCGeneral.cpp and its kin: arguments torch computed itself, not the script's) is the
torch build or release on this machine, never certain from the line.

The other strings have kinds of their own (``out of memory``: cuda_oom, ``device-side assert triggered``:
device_assert, ``invalid device ordinal``, ``no kernel image``, ``peer access``, ``insufficient driver``).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Pattern

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

KERNEL_FAULTS = (
    "an illegal memory access was encountered",
    "unspecified launch failure",
    "misaligned address",
    "an illegal instruction was encountered",
    "hardware stack error",
)
KERNEL_FAULT_TEMPLATES = (
    "cuda_runtime:illegal-address",
    "cuda_runtime:launch-failure",
    "cuda_runtime:misaligned-address",
    "cuda_runtime:illegal-instruction",
    "cuda_runtime:hardware-stack-error",
)
# the string as torch, NCCL or an extension reports it (not a sentence that quotes it); NCCL 2.19+'s CUCHECK
# (cudawrap.h) puts the driver's error number before it: "Cuda failure 700 'an illegal memory access ...'"
KERNEL_FAULT = R(
    r"(?:CUDA error|Cuda failure(?: \d{1,4})?|cudaError\w*|CUDA_ERROR_\w+)[:\s'\"(]{1,4}"
    r"(?P<kernel_fault>" + "|".join(re.escape(f) for f in KERNEL_FAULTS) + ")"
)
# NCCL's WARN line: the kernel ran inside NCCL (its file names where it was reported)
IN_NCCL = R(r"(?P<fault_in_nccl>NCCL WARN Cuda failure)")

# NCCL's CUDACHECK "Cuda failure '%s'" and, 2.19+, CUCHECK "Cuda failure %d '%s'" (the number before it)
INITIALIZATION = (
    "CUDA error: initialization error",
    "Cuda failure 'initialization error'",
    " 'initialization error'",
)
INITIALIZATION_TEMPLATE = "cuda_runtime:initialization-error"


def kernel_fault(fault: str, in_nccl: bool) -> tuple[str, str]:
    """(summary, fix) for a kernel that faulted (``fault`` is the CUDA runtime's string)."""
    where = "a kernel NCCL launched" if in_nccl else "a CUDA kernel"
    summary = f"{where} faulted ({fault}): most often a bug of the library whose kernel ran, in the release installed"
    fix = (
        "CUDA reports a kernel's fault at the next call that checks for errors, so the line that reported it "
        "is usually not the one at fault. Find the kernel: rerun with CUDA_LAUNCH_BLOCKING=1 (every launch "
        "checked where it happens; add TORCH_USE_CUDA_DSA=1 for torch's device-side asserts), and look at "
        "the traceback it then gives. A kernel of torch, NCCL or an extension (flash-attn, apex, xformers, "
        "DeepSpeed's ops) that faults on valid input is a bug of that release: search its issues for the "
        "message and upgrade it (pip install -U <package>; for NCCL, the torch release that ships a newer one). "
        "If it happens at random places or on one GPU only, the GPU may be failing: `dmesg | grep -i xid` and "
        "`nvidia-smi -q -d ECC`."
    )
    return summary, fix


# THC's __THCudaCheck (aten/src/THC/THCGeneral.cpp, torch <= 1.x): "cuda runtime error (%d) : %s" and TH's
# " at <file>:<line>"; cudaErrorInvalidValue (11 before CUDA 10.1's renumbering, 1 after) raised in THC's own code
THC_INVALID_ARGUMENT = R(
    r"cuda runtime error \((?P<thc_code>\d{1,3})\) : invalid argument at \S{0,300}?/THC/(?P<thc_file>THC\w{0,40}\.(?:cpp|cu)):"
    r"(?P<thc_line>\d{1,6})"
)
THC_INVALID_ARGUMENT_TEMPLATE = "torch_native:thc-cuda-runtime-invalid-argument"


def thc_invalid_argument(file: str, line: str) -> tuple[str, str]:
    """(summary, fix) for THC's own CUDA call refusing its argument (``file``:``line`` of aten/src/THC)."""
    summary = (
        f"a CUDA runtime call in torch's own THC code ({file}:{line}) refused its argument (invalid argument): "
        "the torch release or build installed does not fit this GPU and driver"
    )
    fix = (
        "The arguments of that call are torch's, not your script's: install another torch, the build for this "
        "GPU's generation and your driver's CUDA (a newer release, or the one the project pins). Compare "
        "python -c 'import torch; print(torch.__version__, torch.version.cuda)' with nvidia-smi's driver and GPU."
    )
    return summary, fix
