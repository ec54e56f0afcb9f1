"""Who am I in this job: rank, world size, local rank and host, read from whichever launcher started us.

torchrun/accelerate/deepspeed set ``RANK``/``WORLD_SIZE``/``LOCAL_RANK``; SLURM ``srun`` sets ``SLURM_PROCID``/
``SLURM_NTASKS``/``SLURM_LOCALID``; Open MPI sets ``OMPI_COMM_WORLD_*``; MPICH/Intel MPI set ``PMI_RANK``/
``PMI_SIZE``/``MPI_LOCALRANKID``. An initialised process group wins over all of them.

`say_if_alone_under_accelerate`: a process the launcher made one rank of several, which accelerate set up as a
job of its own (a GPU launch that found no GPU), says so once.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from torchdoctor import environment

# (launcher, rank, world size, local rank, local world size), first match wins
_LAUNCHER_VARS = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    ("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
    (
        "openmpi",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    ),
    ("mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
)


@dataclass(frozen=True)
class RankInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1
    host: str = ""
    launcher: str = "none"  # torchrun | slurm | openmpi | mpich | process_group | none

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def _int(value: str | None, default: int) -> int:
    try:
        return int(str(value).split("(")[0].split(",")[0]) if value not in (None, "") else default
    except ValueError:
        return default


def from_environment(environ: Mapping[str, str] | None = None) -> RankInfo:
    """The rank set-up a launcher left in ``environ`` (default ``os.environ``); rank 0 of 1 when none did."""
    environ = os.environ if environ is None else environ
    host = environ.get("SLURMD_NODENAME") or socket.gethostname()
    for launcher, rank, world, local, local_world in _LAUNCHER_VARS:
        if rank in environ:
            # a value the launcher could not have meant (RANK=abc) is said, not read as rank 0
            environment.require_valid((rank, world, local, local_world), environ)
            return RankInfo(
                rank=_int(environ.get(rank), 0),
                world_size=_int(environ.get(world), 1),
                local_rank=_int(environ.get(local), 0),
                local_world_size=_int(environ.get(local_world), 1),
                host=host,
                launcher=launcher,
            )
    return RankInfo(host=host)


def current(environ: Mapping[str, str] | None = None) -> RankInfo:
    """This process's rank: from the initialised default process group if there is one, else the launcher's."""
    info = from_environment(environ)
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return RankInfo(
                rank=dist.get_rank(),
                world_size=dist.get_world_size(),
                local_rank=info.local_rank,
                local_world_size=info.local_world_size,
                host=info.host,
                launcher="process_group" if info.launcher == "none" else info.launcher,
            )
    except ImportError:
        pass
    return info


_said_alone: list[bool] = []  # once said, never again in this process


def alone_under_accelerate(environ: Mapping[str, str] | None = None) -> str:
    """What to say when the launcher made this process one rank of several but accelerate's state has set it
    up alone (``num_processes`` 1): what ``accelerate launch --multi_gpu`` gives on a machine without GPUs,
    where accelerate falls back to ``DistributedType.NO`` in each process. "" otherwise (or before accelerate
    has set itself up)."""
    state = sys.modules.get("accelerate.state")
    shared = getattr(getattr(state, "PartialState", None), "_shared_state", None)
    if not isinstance(shared, dict) or shared.get("num_processes") != 1:
        return ""
    info = from_environment(environ)
    if info.world_size < 2:
        return ""
    kind = shared.get("distributed_type")
    kind = getattr(kind, "value", kind)
    return (
        f"torchdoctor: this process is rank {info.rank} of {info.world_size} for its launcher ({info.launcher}), "
        f"but accelerate set it up alone (DistributedType.{kind}, num_processes 1), as it does when a GPU "
        "launch (--multi_gpu, distributed_type: MULTI_GPU) finds no GPU: every process trains alone on all "
        "the data and nothing is synchronised. On CPU: ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu "
        f"--num_processes {info.world_size} train.py (or Accelerator(cpu=True)); else run on the GPUs the "
        "launch expects\n"
    )


def say_if_alone_under_accelerate(stream=None) -> None:
    """Say `alone_under_accelerate` on ``stream`` (default stderr), once per process."""
    if _said_alone:
        return
    text = alone_under_accelerate()
    if text:
        _said_alone.append(True)
        stream = sys.stderr if stream is None else stream
        stream.write(text)
        stream.flush()
