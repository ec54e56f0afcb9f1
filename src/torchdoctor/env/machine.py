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


def scan(
    environ: Mapping[str, str] | None = None,
    root: str | Path = "/",
    run: Runner = run_command,
    facts: TorchFacts | None = None,
) -> Machine:
    """Look at the machine once: ``environ`` (default ``os.environ``), toolkits under ``root``, programs run
    through ``run``, and ``facts`` about torch (default: the torch this process imports)."""
    environ = dict(os.environ if environ is None else environ)
    facts = from_torch() if facts is None else facts
    found = toolkits.find_toolkits(environ, root, run)
    chosen = toolkits.build_toolkit(found, environ)
    listed = arch.nvcc_targets(chosen, run) if chosen else None
    if facts.gpus:
        gpus, seen_by = facts.gpus, "torch"
    else:
        gpus, seen_by = tuple(driver.gpus_from_nvidia_smi(run, environ)), "nvidia-smi"
    version, why = driver.driver_version(run, environ)
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
