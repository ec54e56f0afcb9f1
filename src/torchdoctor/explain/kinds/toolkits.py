"""Which CUDA toolkit release takes which host compiler and knows which GPU, from NVIDIA's and torch's own files.

`catalog/cuda_toolkits.tsv` (written by ``benchmarks/wheel_tags.py --build``) holds per CUDA minor release the
newest gcc its ``crt/host_config.h`` accepts (the ``#if __GNUC__ > N`` guarding ``#error -- unsupported GNU
version! gcc versions later than N are not supported!``: the catalog's
build_tools:error-unsupported-gnu-version-gcc-versions), the first clang major and ``_MSC_VER`` it refuses, and the
``sm_NN`` architectures its ``ptxas`` names, read from the nvidia-cuda-nvcc wheels on PyPI (CUDA 11.7 on); CUDA
10.2-11.6's gcc bound is torch's own ``CUDA_GCC_VERSIONS`` (torch/utils/cpp_extension.py). An old architecture
stays in ptxas' strings after nvcc stops accepting it, so the table answers only "which release first knows this
GPU", never "which release dropped it" (build_tools.py keeps the drops from the release notes).

    >>> releases_with_gcc_limit("12")
    ['12.4', '12.5']
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from packaging.version import Version

FAMILY = "builds and installs"

TOOLKITS = Path(__file__).resolve().parent.parent / "catalog" / "cuda_toolkits.tsv"
# per torch minor release, the compute capabilities TORCH_CUDA_ARCH_LIST may name (cpp_extension.py's
# supported_arches, behind "Unknown CUDA arch ({}) or GPU not supported": torch:unknown-cuda-arch-or-gpu-not)
TORCH_ARCHS = Path(__file__).resolve().parent.parent / "catalog" / "torch_archs.tsv"

# a gcc's version as builds print it: gcc -v / --version, CMake's compiler identification, torch's own check
GCC_VERSION = re.compile(
    r"(?:gcc version |gcc \([^)\n]{1,60}\) |g\+\+ \([^)\n]{1,60}\) |The (?:CXX|C) compiler identification is GNU |"
    r"version of (?:g\+\+|gcc|c\+\+) \()(?P<user_gcc>\d{1,2})\.\d{1,2}"
)


class Toolkit(NamedTuple):
    """One CUDA minor release: its host-compiler bounds and the GPU architectures its ptxas names."""

    cuda: str
    newest_gcc: str
    clang_refused: str
    msvc_refused: str
    archs: tuple[str, ...]
    source: str


@cache
def load() -> list[Toolkit]:
    """Every CUDA release in the table, oldest first."""
    rows = []
    for line in TOOLKITS.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        cuda, gcc, clang, msvc, archs, source = line.split("\t")
        rows.append(Toolkit(cuda, gcc, clang, msvc, tuple(archs.split()), source))
    return sorted(rows, key=lambda t: Version(t.cuda))


def releases_with_gcc_limit(newest_gcc: str) -> list[str]:
    """The CUDA releases whose host_config.h says "gcc versions later than ``newest_gcc`` are not supported"."""
    return [t.cuda for t in load() if t.newest_gcc == newest_gcc]


def first_taking_gcc(major: int) -> str | None:
    """The first CUDA release that accepts gcc ``major`` (None: none read does)."""
    return next((t.cuda for t in load() if t.newest_gcc.isdigit() and int(t.newest_gcc) >= major), None)


def releases_refusing_clang(first_refused: str) -> list[str]:
    """The CUDA releases whose host_config.h says "clang version must be less than ``first_refused``"."""
    return [t.cuda for t in load() if t.clang_refused == first_refused]


def first_taking_clang(major: int) -> str | None:
    """The first CUDA release that accepts clang ``major`` (None: none read does)."""
    return next((t.cuda for t in load() if t.clang_refused.isdigit() and int(t.clang_refused) > major), None)


def first_knowing(arch: str) -> str | None:
    """The first CUDA release whose ptxas names ``arch`` (compute_90, sm_90a, 9.0), or None. A release older than
    the table's first (``load()[0]`` with archs) is not known: the first is returned for an arch it already has."""
    number = re.sub(r"^(?:sm|compute|lto)_", "", arch).replace(".", "")
    with_archs = [t for t in load() if t.archs]
    return next((t.cuda for t in with_archs if number in t.archs), None)


@cache
def torch_archs() -> list[tuple[str, tuple[str, ...]]]:
    """(torch minor release, the capabilities its extension builder accepts), oldest first."""
    rows = []
    for line in TORCH_ARCHS.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            minor, _, arches = line.split("\t")
            rows.append((minor, tuple(arches.split())))
    return rows


def first_torch_knowing(arch: str) -> str | None:
    """The first torch release whose extension builder accepts ``arch`` (``12.0``, ``9.0a``, ``8.6+PTX``)."""
    wanted = arch.strip().removesuffix("+PTX")
    return next((minor for minor, arches in torch_archs() if wanted in arches), None)


def oldest_with_archs() -> str:
    """The oldest release whose architectures were read (older ones are not in the table)."""
    return next(t.cuda for t in load() if t.archs)


def span(releases: list[str]) -> str:
    """``12.4-12.5`` for consecutive releases, ``12.4`` for one."""
    return releases[0] if len(releases) == 1 else f"{releases[0]}-{releases[-1]}"


def explain_gcc_limit(newest_gcc: str, user_gcc: str = "") -> tuple[str, str] | None:
    """What the table adds to host_config.h's "gcc versions later than N": the CUDA releases with that limit and,
    when the log shows the gcc in use (``user_gcc``, its major: `GCC_VERSION`), the first CUDA that takes it;
    None when the limit is not in the table."""
    releases = releases_with_gcc_limit(newest_gcc)
    if not releases:
        return None
    said = f"the limit of CUDA {span(releases)}"
    if not user_gcc.isdigit() or int(user_gcc) <= int(newest_gcc):
        return said, ""
    user = int(user_gcc)
    taking = first_taking_gcc(user)
    said += f"; the build's gcc is {user}"
    if taking is None:
        return (
            said,
            f"No CUDA release read (to {load()[-1].cuda}) accepts gcc {user}: install gcc {newest_gcc}.",
        )
    return (
        said + f", which CUDA {taking} and later accept",
        f"Either keep this CUDA and build with gcc {newest_gcc}, or use CUDA {taking} or later (with the torch "
        f"built for it) and keep gcc {user}.",
    )
