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


# the last torch with wheels for CUDA 10.2, which drivers from 440.33 run (its wheels: cu102, cu113, cu116)
_LAST_TORCH_FOR_CUDA_10 = "1.12.1"


def cuda_torch_install(version: str | None, fallback: str = "12.8") -> str:
    """How to install a CUDA torch for an NVIDIA driver ``version``: the command for the newest wheel it runs, or,
    where it is too old for every wheel torch publishes, the driver it needs first (``fallback``: the wheel's CUDA
    where the driver is not known).

    >>> cuda_torch_install("550.54.15")
    'pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu129'
    >>> cuda_torch_install("418.87.01").split(":")[0]
    'The NVIDIA driver 418.87.01 is older than every CUDA torch wheel needs (CUDA 11.8, the oldest, needs 450.80.02)'
    """
    cuda = newest_wheel_for_driver(version)
    if cuda is not None or not version:
        return f"pip install --force-reinstall torch --index-url {torch_index_url(cuda or fallback)}"
    oldest = TORCH_WHEEL_CUDA[0]
    needed = driver.minimum_driver(oldest)
    fix = (
        f"The NVIDIA driver {version} is older than every CUDA torch wheel needs (CUDA {oldest}, the oldest, needs "
        f"{needed}): upgrade the driver to {needed} or newer ({driver.minimum_driver('12')} for CUDA 12 wheels), "
        f"then pip install --force-reinstall torch --index-url {torch_index_url(oldest)}"
    )
    if not driver.driver_too_old(version, "10.2"):
        fix += (
            f"; or keep this driver with an old torch built for CUDA 10.2: pip install torch=={_LAST_TORCH_FOR_CUDA_10} "
            f"--index-url {torch_index_url('10.2')}"
        )
    return fix
