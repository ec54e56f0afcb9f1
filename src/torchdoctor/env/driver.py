"""The NVIDIA driver (through ``nvidia-smi``) and the minimum each CUDA release needs."""

from __future__ import annotations

from collections.abc import Mapping

from packaging.version import InvalidVersion, Version

from torchdoctor.env.toolkits import Runner
from torchdoctor.runner import run_command

# Oldest Linux driver each CUDA release runs on. From 11.x on, any release of a major runs on the
# major's first minimum (minor version compatibility); before that, each release had its own.
# Source: NVIDIA CUDA Toolkit Release Notes, "CUDA Toolkit and Minimum Required Driver Version" tables.
DRIVER_MINIMUM: dict[str, str] = {
    "10.0": "410.48",
    "10.1": "418.39",
    "10.2": "440.33",
    "11": "450.80.02",
    "12": "525.60.13",
    "13": "580.65.06",
}


# The CUDA versions download.pytorch.org has wheel indexes for (https://pytorch.org/get-started/locally/).
TORCH_WHEEL_CUDA = ("11.8", "12.1", "12.4", "12.6", "12.8", "12.9", "13.0")


def torch_index_url(cuda: str) -> str:
    """``https://download.pytorch.org/whl/cu128`` for ``"12.8"``."""
    return f"https://download.pytorch.org/whl/cu{cuda.replace('.', '')}"


def newest_wheel_for_driver(version: str | None) -> str | None:
    """The newest CUDA a torch wheel is built for that this NVIDIA driver runs (``None``: no driver known)."""
    if not version:
        return None
    usable = [c for c in TORCH_WHEEL_CUDA if not driver_too_old(version, c)]
    return usable[-1] if usable else None


def minimum_driver(cuda: str) -> str | None:
    """The oldest driver that runs CUDA ``cuda`` (``"12.8"`` -> ``"525.60.13"``), None when unknown."""
    major = cuda.split(".")[0]
    return DRIVER_MINIMUM.get(major) or DRIVER_MINIMUM.get(".".join(cuda.split(".")[:2]))


def driver_too_old(driver: str, cuda: str) -> bool:
    """Whether ``driver`` is older than what CUDA ``cuda`` needs (False when either is unknown)."""
    needed = minimum_driver(cuda)
    try:
        return needed is not None and Version(driver) < Version(needed)
    except InvalidVersion:
        return False


def driver_version(run: Runner = run_command, environ: Mapping[str, str] | None = None):
    """``(driver version or None, why not)`` from ``nvidia-smi --query-gpu=driver_version``."""
    result = run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], env=environ)
    if not result.ok:
        if result.error:
            return None, result.error  # "not found: nvidia-smi", "timed out after 10s"
        said = (result.stderr or result.stdout).strip().splitlines()
        return None, f"nvidia-smi failed: {said[-1] if said else f'exit status {result.returncode}'}"
    versions = sorted({line.strip() for line in result.stdout.splitlines() if line.strip()})
    return (versions[0] if versions else None), ("" if versions else "nvidia-smi listed no GPU")


def gpus_from_nvidia_smi(run: Runner = run_command, environ: Mapping[str, str] | None = None):
    """``[(name, "8.6"), …]`` from ``nvidia-smi --query-gpu=name,compute_cap`` (empty when it fails)."""
    result = run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"], env=environ)
    if not result.ok:
        return []
    gpus = []
    for line in result.stdout.splitlines():
        name, _, capability = line.rpartition(",")
        if name.strip() and capability.strip().replace(".", "").isdigit():
            gpus.append((name.strip(), capability.strip()))
    return gpus
