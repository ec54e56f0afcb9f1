"""GPU architectures: which compute capabilities torch has kernels for, which ones a toolkit's nvcc can
target, and the ``TORCH_CUDA_ARCH_LIST`` to build with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import Version

from torchdoctor.env.toolkits import Runner, Toolkit
from torchdoctor.runner import run_command

# compute capability -> (first CUDA release whose nvcc targets it, last release that still does or None).
# Source: NVIDIA CUDA Toolkit release notes (new architectures; Kepler dropped in 12.0; Maxwell, Pascal
# and Volta dropped in 13.0; sm_101 renamed sm_110 in 13.0), checked against `nvcc --list-gpu-code` of
# CUDA 13.0 (sm_75 … sm_121).
CUDA_FOR_ARCH: dict[str, tuple[str, str | None]] = {
    "3.5": ("5.0", "11.8"),
    "3.7": ("6.5", "11.8"),
    "5.0": ("6.0", "12.9"),
    "5.2": ("6.5", "12.9"),
    "5.3": ("7.0", "12.9"),
    "6.0": ("8.0", "12.9"),
    "6.1": ("8.0", "12.9"),
    "6.2": ("8.0", "12.9"),
    "7.0": ("9.0", "12.9"),
    "7.2": ("10.0", "12.9"),
    "7.5": ("10.0", None),
    "8.0": ("11.0", None),
    "8.6": ("11.1", None),
    "8.7": ("11.4", None),
    "8.8": ("13.0", None),
    "8.9": ("11.8", None),
    "9.0": ("11.8", None),
    "10.0": ("12.8", None),
    "10.1": ("12.8", "12.9"),
    "10.3": ("12.9", None),
    "11.0": ("13.0", None),
    "12.0": ("12.8", None),
    "12.1": ("12.9", None),
}

# TORCH_CUDA_ARCH_LIST accepts these names too (torch.utils.cpp_extension._get_cuda_arch_flags).
NAMED_ARCHES = {
    "Kepler+Tesla": "3.7",
    "Kepler": "3.5+PTX",
    "Maxwell+Tegra": "5.3",
    "Maxwell": "5.0;5.2+PTX",
    "Pascal": "6.0;6.1+PTX",
    "Volta+Tegra": "7.2",
    "Volta": "7.0+PTX",
    "Turing": "7.5+PTX",
    "Ampere+Tegra": "8.7",
    "Ampere": "8.0;8.6+PTX",
    "Ada": "8.9+PTX",
    "Hopper": "9.0+PTX",
    "Blackwell+Tegra": "11.0",
    "Blackwell": "10.0;10.3;12.0;12.1+PTX",
}

_ENTRY = re.compile(r"^(\d+)\.(\d+)[af]?(\+PTX)?$")


def capability_number(capability: str) -> int:
    """``"8.6"`` -> 86, ``"12.0"`` -> 120 (torch's ``10 * major + minor``)."""
    major, minor = capability.split(".")
    return 10 * int(major) + int(minor)


def sm(capability: str) -> str:
    """``"8.6"`` -> ``"sm_86"``."""
    return f"sm_{capability_number(capability)}"


def has_kernel(capability: str, arch_list: Iterable[str]) -> bool:
    """Whether torch's ``get_arch_list()`` runs on a GPU of ``capability``.

    An ``sm_XY`` cubin runs on the same major with an equal or higher minor; ``compute_XY`` PTX is
    JIT-compiled for any GPU at or above XY.

    >>> has_kernel("8.6", ["sm_80", "sm_90"]), has_kernel("12.0", ["sm_80", "sm_90"])
    (True, False)
    """
    device = capability_number(capability)
    for entry in arch_list:
        match = re.match(r"^(sm|compute)_(\d+)[af]?$", entry)
        if not match:
            continue
        code = int(match.group(2))
        if match.group(1) == "sm" and code // 10 == device // 10 and code % 10 <= device % 10:
            return True
        if match.group(1) == "compute" and code <= device:
            return True
    return False


def nvcc_targets(toolkit: Toolkit, run: Runner = run_command) -> list[str] | None:
    """The capabilities ``toolkit``'s nvcc lists with ``--list-gpu-code`` (CUDA 11+), or None."""
    if not toolkit.nvcc:
        return None
    result = run([toolkit.nvcc, "--list-gpu-code"])
    codes = re.findall(r"^sm_(\d+)[af]?$", result.stdout, flags=re.MULTILINE) if result.ok else []
    if not codes:
        return None
    return sorted({f"{int(c) // 10}.{int(c) % 10}" for c in codes}, key=capability_number)


def nvcc_can_target(capability: str, toolkit_version: str, listed: list[str] | None = None) -> bool | None:
    """Whether nvcc of CUDA ``toolkit_version`` compiles for ``capability`` (None: not in the table).

    ``listed`` (what that nvcc's ``--list-gpu-code`` said) wins over the table when given.
    """
    if listed is not None:
        return capability in listed
    if capability not in CUDA_FOR_ARCH:
        return None
    first, last = CUDA_FOR_ARCH[capability]
    version = Version(toolkit_version)
    return version >= Version(first) and (last is None or version <= Version(last))


def recommended_arch_list(capabilities: Iterable[str]) -> str:
    """``TORCH_CUDA_ARCH_LIST`` for these GPUs: ``"8.6"``, or ``"6.1;8.6"`` for mixed GPUs."""
    return ";".join(sorted(set(capabilities), key=capability_number))


def parse_arch_list(value: str, any_case: bool = False) -> list[str]:
    """The entries of a ``TORCH_CUDA_ARCH_LIST`` (``;`` or space separated, names expanded).

    Raises ValueError naming an entry that is neither ``X.Y[+PTX]`` nor a known name. torch reads the names
    as spelled here (``Ampere``); ``any_case`` takes ``ampere`` too (our own ``--arch``, which writes the
    list out for torch). A name that already ends in PTX (``Turing`` is ``7.5+PTX``) takes no ``+PTX``.

    >>> parse_arch_list("Ampere;9.0+PTX")
    ['8.0', '8.6+PTX', '9.0+PTX']
    """
    by_lower = {name.lower(): name for name in NAMED_ARCHES}
    entries = []
    for entry in (e for e in re.split(r"[;\s]+", value.strip()) if e):
        name, plus_ptx = (entry[:-4], True) if entry.lower().endswith("+ptx") else (entry, False)
        known = by_lower.get(name.lower())
        if known is not None and known != name and not any_case:
            raise ValueError(f"TORCH_CUDA_ARCH_LIST entry {entry!r}: torch reads the name only as {known!r}")
        if known is not None:
            expansion = NAMED_ARCHES[known].split(";")
            if plus_ptx and expansion[-1].endswith("+PTX"):
                raise ValueError(
                    f"TORCH_CUDA_ARCH_LIST entry {entry!r}: {known} is already {NAMED_ARCHES[known]} "
                    f"(with PTX); write {known}"
                )
            if plus_ptx:
                expansion[-1] += "+PTX"
            entries += expansion
            continue
        if not _ENTRY.match(entry):
            raise ValueError(
                f"TORCH_CUDA_ARCH_LIST entry {entry!r} is not a compute capability like '8.6' or '9.0+PTX', "
                "nor a name such as Ampere"
            )
        if entry_capability(entry) not in CUDA_FOR_ARCH:
            raise ValueError(
                f"TORCH_CUDA_ARCH_LIST entry {entry!r}: not the compute capability of any NVIDIA GPU "
                f"torchdoctor knows ({', '.join(CUDA_FOR_ARCH)})"
            )
        entries.append(entry)
    return entries


def covers(capability: str, entries: Iterable[str]) -> bool:
    """Whether a build for ``entries`` (parsed ``TORCH_CUDA_ARCH_LIST``) runs on a GPU of ``capability``."""
    codes = []
    for entry in entries:
        major, minor, ptx = _ENTRY.match(entry).groups()
        codes.append(f"sm_{major}{minor}")
        if ptx:
            codes.append(f"compute_{major}{minor}")
    return has_kernel(capability, codes)


def entry_capability(entry: str) -> str:
    """``"8.6+PTX"`` -> ``"8.6"``, ``"9.0a"`` -> ``"9.0"``."""
    major, minor, _ = _ENTRY.match(entry).groups()
    return f"{major}.{minor}"
