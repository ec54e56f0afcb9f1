"""Which CUDA a torch wheel is built for: the CUDA releases torch publishes wheels for, the index each is
installed from, and the newest that a toolkit or an NVIDIA driver goes with."""

from __future__ import annotations

from packaging.version import Version

from torchdoctor.env import driver

# The CUDA versions download.pytorch.org has wheel indexes for (https://pytorch.org/get-started/locally/).
TORCH_WHEEL_CUDA = ("11.8", "12.1", "12.4", "12.6", "12.8", "12.9", "13.0")


def torch_index_url(cuda: str) -> str:
    """``https://download.pytorch.org/whl/cu128`` for ``"12.8"``."""
    return f"https://download.pytorch.org/whl/cu{cuda.replace('.', '')}"


def torch_wheel_for_toolkit(toolkit_version: str) -> str | None:
    """The newest torch wheel CUDA with the toolkit's major and a minor no newer than the toolkit's."""
    same_major = [
        c
        for c in TORCH_WHEEL_CUDA
        if c.split(".")[0] == toolkit_version.split(".")[0] and Version(c) <= Version(toolkit_version)
    ]
    return same_major[-1] if same_major else None


def newest_wheel_for_driver(version: str | None) -> str | None:
    """The newest CUDA a torch wheel is built for that this NVIDIA driver runs (``None``: no driver known)."""
    if not version:
        return None
    usable = [c for c in TORCH_WHEEL_CUDA if not driver.driver_too_old(version, c)]
    return usable[-1] if usable else None
