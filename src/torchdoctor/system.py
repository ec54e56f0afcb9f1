"""``sys.*`` checks: the Python, the torch build and the accelerators this process can see."""

from __future__ import annotations

import platform
import sys

from packaging.version import Version

from torchdoctor.findings import Finding

AREA = "sys"
MIN_TORCH = Version("2.1")


def torch_build(version: str, cuda: str | None, hip: str | None) -> str:
    """``"CUDA 12.8"``, ``"ROCm 6.2"`` or ``"CPU"``: what a torch build was compiled for."""
    if hip:
        return f"ROCm {hip}"
    if cuda:
        return f"CUDA {cuda}"
    return "CPU"


def check_python(version_info=sys.version_info, executable: str = sys.executable) -> Finding:
    """Python 3.9 is the oldest that torch 2.x supports; older is a failure."""
    version = ".".join(str(part) for part in version_info[:3])
    details = {
        "version": version,
        "executable": executable,
        "implementation": platform.python_implementation(),
    }
    if tuple(version_info[:2]) < (3, 9):
        return Finding(
            "sys.python",
            "fail",
            f"Python {version} is too old for torch 2.x",
            details,
            "Install Python 3.10 or newer and recreate the virtual environment.",
        )
    return Finding("sys.python", "ok", f"Python {version} ({executable})", details)


def check_torch(version: str | None = None, cuda: str | None = None, hip: str | None = None) -> Finding:
    """The installed torch: its version (2.1 or newer) and what it was built for (CPU, CUDA, ROCm)."""
    if version is None:
        try:
            import torch
        except ImportError as error:
            return Finding(
                "sys.torch",
                "fail",
                f"torch cannot be imported: {error}",
                {},
                "pip install torch  (https://pytorch.org/get-started/locally/ picks the right build)",
            )
        version, cuda, hip = torch.__version__, torch.version.cuda, getattr(torch.version, "hip", None)
    build = torch_build(version, cuda, hip)
    details = {"version": version, "build": build, "cuda": cuda, "hip": hip}
    if Version(Version(version).base_version) < MIN_TORCH:
        return Finding(
            "sys.torch",
            "fail",
            f"torch {version} is older than {MIN_TORCH}, the oldest torchdoctor supports",
            details,
            f"pip install --upgrade 'torch>={MIN_TORCH}'",
        )
    return Finding("sys.torch", "ok", f"torch {version} ({build} build)", details)


def visible_accelerators() -> dict:
    """What this process can see: CUDA/ROCm devices with names and capabilities, MPS, XPU."""
    import torch

    seen: dict = {"cuda": [], "mps": False, "xpu": 0}
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            seen["cuda"].append(
                {
                    "index": index,
                    "name": props.name,
                    "capability": f"{props.major}.{props.minor}",
                    "memory_gib": round(props.total_memory / 2**30, 1),
                }
            )
    mps = getattr(torch.backends, "mps", None)
    seen["mps"] = bool(mps and mps.is_available())
    xpu = getattr(torch, "xpu", None)
    seen["xpu"] = xpu.device_count() if xpu is not None and xpu.is_available() else 0
    return seen


def check_accelerators(seen: dict | None = None, build: str | None = None, environ=None) -> Finding:
    """Which GPUs this process sees; a CUDA/ROCm build that sees none is a warning with the likely cause."""
    import os

    environ = os.environ if environ is None else environ
    if seen is None:
        import torch

        seen = visible_accelerators()
        build = torch_build(torch.__version__, torch.version.cuda, getattr(torch.version, "hip", None))
    gpus = seen.get("cuda", [])
    if gpus:
        names = ", ".join(f"{g['index']}: {g['name']} (sm_{g['capability'].replace('.', '')})" for g in gpus)
        return Finding("sys.accelerators", "ok", f"{len(gpus)} GPU(s) visible — {names}", seen)
    if seen.get("mps"):
        return Finding("sys.accelerators", "ok", "Apple MPS device visible", seen)
    if seen.get("xpu"):
        return Finding("sys.accelerators", "ok", f"{seen['xpu']} Intel XPU device(s) visible", seen)
    if build and build != "CPU":
        hidden = environ.get("CUDA_VISIBLE_DEVICES")
        if hidden is not None and hidden.strip() in ("", "-1"):
            fix = f"CUDA_VISIBLE_DEVICES={hidden!r} hides every GPU: unset it or list the GPUs to use."
        else:
            fix = "Run `nvidia-smi` (or `rocm-smi`): if it fails, the driver is missing or not loaded."
        return Finding(
            "sys.accelerators",
            "warn",
            f"torch is a {build} build but sees no GPU",
            seen | {"build": build},
            fix,
        )
    return Finding(
        "sys.accelerators", "ok", "no GPU visible; CPU build of torch (communication tests use gloo)", seen
    )
