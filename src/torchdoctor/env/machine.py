"""One look at the machine, taken once and handed to every ``env.*`` check: the environment, the filesystem
root, the command runner, what torch was built for, the CUDA toolkits, the one a build would use, the GPUs
and the driver.

Tests take the same look at a fake tree: ``scan(environ={"PATH": str(bin_dir)}, root=tmp_path, facts=...)``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchdoctor.env import arch, driver, toolkits
from torchdoctor.env.toolkits import Runner, Toolkit
from torchdoctor.env.torch_facts import TorchFacts, from_torch
from torchdoctor.runner import run_command


@dataclass(frozen=True, eq=False)
class Machine:
    """What the ``env.*`` checks read, gathered once by `scan`."""

    environ: Mapping[str, str]
    root: Path
    run: Runner
    torch: TorchFacts
    toolkits: tuple[Toolkit, ...]  # every toolkit found, in torch's search order
    build_toolkit: Toolkit | None  # the one torch's cpp_extension would build with
    nvcc_targets: tuple[str, ...] | None  # what the build toolkit's nvcc lists with --list-gpu-code
    gpus: tuple[tuple[str, str], ...]  # (name, "8.6") per GPU
    gpus_seen_by: str  # "torch", or "nvidia-smi" when torch sees none (a CPU torch)
    driver: str | None  # the NVIDIA driver version
    no_driver_because: str  # why `driver` is None ("not found: nvidia-smi", …)


# Where an image keeps its programs when its own PATH is not known here (Debian's and Ubuntu's default PATH,
# and the CUDA images' /usr/local/cuda/bin)
IMAGE_PATH = (
    "/usr/local/cuda/bin",
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
)
# Variables naming places on the file system that the env.* checks read
_PATH_VARIABLES = ("PATH", "LD_LIBRARY_PATH", "CPATH", "LIBRARY_PATH")
_FOLDER_VARIABLES = ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "CC", "CXX", "CUDAHOSTCXX")


def under_root(environ: Mapping[str, str], root: str | Path) -> dict[str, str]:
    """``environ`` with every path in it taken inside ``root`` (``--root DIR`` means the image, all of it):
    ``PATH=/usr/bin`` becomes ``DIR/usr/bin``, with the usual folders of an image added, so that ``nvcc``,
    ``gcc`` and the rest are the image's, never the host's.

    >>> under_root({"PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda-12.1"}, "/img")["CUDA_HOME"]
    '/img/usr/local/cuda-12.1'
    """
    root = Path(root)
    if root.resolve() == Path("/"):
        return dict(environ)

    def inside(path: str) -> str:
        if not os.path.isabs(path) or Path(path).is_relative_to(root):
            return path  # a bare program name (CC=gcc) is looked up on the PATH, which is inside already
        return str(root / path.lstrip("/"))

    moved = dict(environ)
    for name in _PATH_VARIABLES:
        entries = [e for e in environ.get(name, "").split(os.pathsep) if e]
        if name == "PATH":
            entries += [e for e in IMAGE_PATH if e not in entries]
        if entries:
            moved[name] = os.pathsep.join(dict.fromkeys(inside(e) for e in entries))
    for name in _FOLDER_VARIABLES:
        if environ.get(name):
            moved[name] = inside(environ[name])
    return moved


def scan(
    environ: Mapping[str, str] | None = None,
    root: str | Path = "/",
    run: Runner = run_command,
    facts: TorchFacts | None = None,
) -> Machine:
    """Look at the machine once: ``environ`` (default ``os.environ``), toolkits under ``root``, programs run
    through ``run``, and ``facts`` about torch (default: the torch this process imports)."""
    host = dict(os.environ if environ is None else environ)
    # this machine's environment under another root (an image): its paths, and the tools, are the image's
    environ = host if environ is not None else under_root(host, root)
    facts = from_torch() if facts is None else facts
    found = toolkits.find_toolkits(environ, root, run)
    chosen = toolkits.build_toolkit(found, environ)
    listed = arch.nvcc_targets(chosen, run) if chosen else None
    # the GPUs and the driver stay the host's: a container runs on them
    if facts.gpus:
        gpus, seen_by = facts.gpus, "torch"
    else:
        gpus, seen_by = tuple(driver.gpus_from_nvidia_smi(run, host)), "nvidia-smi"
    version, why = driver.driver_version(run, host)
    return Machine(
        environ=environ,
        root=Path(root),
        run=run,
        torch=facts,
        toolkits=tuple(found),
        build_toolkit=chosen,
        nvcc_targets=None if listed is None else tuple(listed),
        gpus=gpus,
        gpus_seen_by=seen_by,
        driver=version,
        no_driver_because=why,
    )
