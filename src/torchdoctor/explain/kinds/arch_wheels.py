"""The first official PyTorch wheels with kernels for each of the newest GPUs, as data (`no_kernel_image`'s fix).

Read from the architecture lists torch's wheel builds pass (``TORCH_CUDA_ARCH_LIST`` per CUDA version in
pytorch/pytorch's ``.ci/manywheel/build_cuda.sh``, the aarch64 wheels filtered to 8.0 and up) and the release notes:
the cu128 wheels of torch 2.7 first carry Blackwell's sm_100 and sm_120 (x86-64 and aarch64); the cu129 wheels
(2.8) the same list with PTX of 12.0; the cu130 wheels (torch 2.9, CUDA 13, which renamed Jetson Thor's sm_101 to
sm_110) add sm_110, on aarch64 only. A kernel compiled for sm_XY runs on a GPU of the same major version X and a
minor at or above Y (NVIDIA's binary compatibility rule), so B300's sm_103 runs the sm_100 kernels and GB10's sm_121
the sm_120 ones: their first wheels are the cu128 ones.

    >>> first_wheel("110").index, first_wheel("121").runs
    ('cu130', '120')
    >>> [part.sm for part in lacking(("80", "90", "100", "120"))]
    ['110']
"""

from __future__ import annotations

import re
from typing import NamedTuple

FAMILY = "drivers and GPUs"


class Part(NamedTuple):
    """One of the newest GPUs: its compute capability, what it is sold as, the first wheel index and torch release
    whose kernels it runs, and the kernels it runs there."""

    sm: str
    names: str
    index: str
    torch: str
    runs: str


NEWEST: tuple[Part, ...] = (
    Part("100", "B200 / GB200", "cu128", "2.7", "100"),
    Part("103", "B300 / GB300", "cu128", "2.7", "100"),
    Part("110", "Jetson Thor", "cu130", "2.9", "110"),
    Part("120", "GeForce RTX 50 series / RTX PRO Blackwell", "cu128", "2.7", "120"),
    Part("121", "GB10 (DGX Spark)", "cu128", "2.7", "120"),
)

# a build's kernels as torch.cuda.get_arch_list() prints them: ['sm_80', 'sm_90', 'sm_100', 'sm_120']
ARCH_LIST = re.compile(r"\[(?P<arch_list>'sm_\d{2,3}a?'(?:,\s?'(?:sm|compute)_\d{2,3}a?'){0,40})\]")
CONTEXT = (("['sm_", ARCH_LIST),)


def first_wheel(sm: str) -> Part | None:
    """The newest GPU of compute capability ``sm`` ("110"), or None when it is not one of `NEWEST`."""
    return next((part for part in NEWEST if part.sm == sm), None)


def _major_minor(sm: str) -> tuple[int, int]:
    return int(sm[:-1]), int(sm[-1])


def runs_on(sm: str, kernels: tuple[str, ...]) -> bool:
    """Whether a GPU of capability ``sm`` runs one of ``kernels`` (capabilities, "80"): one of its major version
    and a minor at or below its own."""
    major, minor = _major_minor(sm)
    return any(_major_minor(k)[0] == major and _major_minor(k)[1] <= minor for k in kernels)


def kernels_in(arch_list: str) -> tuple[str, ...]:
    """The capabilities a printed arch list has kernels for ("'sm_80', 'sm_90', 'compute_90'" -> ("80", "90"))."""
    return tuple(dict.fromkeys(re.findall(r"sm_(\d{2,3})", arch_list)))


def lacking(kernels: tuple[str, ...]) -> list[Part]:
    """The newest GPUs that run none of ``kernels``."""
    return [part for part in NEWEST if not runs_on(part.sm, kernels)]


def wheel_line(part: Part) -> str:
    """What to install for ``part``, in words and as a pip line."""
    runs = "" if part.runs == part.sm else f" (its sm_{part.runs} kernels run on sm_{part.sm})"
    cuda = f"{part.index[2:-1]}.{part.index[-1]}"  # the wheel index names the CUDA it was built with: cu128
    return (
        f"{part.names} (sm_{part.sm}): PyTorch {part.torch} or newer, built with CUDA {cuda} or newer (the "
        f"{part.index} wheels){runs}: "
        f"pip install torch --index-url https://download.pytorch.org/whl/{part.index}"
    )
