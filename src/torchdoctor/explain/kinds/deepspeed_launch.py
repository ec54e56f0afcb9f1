"""A DeepSpeed script started without a launcher, failing where DeepSpeed looks for MPI to learn its ranks.

``deepspeed.init_distributed`` (``deepspeed/comm/comm.py``, called by ``deepspeed.initialize``) needs RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT and LOCAL_RANK. When a launcher set none of them (``python train.py``, or
``accelerate launch`` without ``--use_deepspeed``, whose simple launcher sets no DeepSpeed environment) it prints
"Not using the DeepSpeed or dist launchers, attempting to detect MPI environment..." and ``mpi_discovery`` begins
with ``from mpi4py import MPI``: on a machine without mpi4py the run ends with "ModuleNotFoundError: No module named
'mpi4py'" (axolotl-ai-cloud/axolotl#1211: "deepspeed will try it when the environment variables like RANK,
LOCAL_RANK, WORLD_SIZE are not configured"; deepspeedai/DeepSpeed#8444: "the first thing anyone hits trying
DeepSpeed on a single GPU without deepspeed/torchrun"). The line alone is a healthy MPI launch's too: the kind
counts only where the log shows mpi4py missing (``MPI4PY``, a fact of the whole log), and stays likely beside
launchers.py's ``broken_install`` (installing mpi4py is the fix for a job meant to run under mpirun).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the whole log's evidence that DeepSpeed's MPI discovery could not import mpi4py (kinds.CONTEXT_FACTS)
MPI4PY = ("mpi4py", R(r"(?P<mpi4py_missing>No module named '?mpi4py'?)"))


def _no_launcher(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the DeepSpeed script was started without a launcher (no RANK / WORLD_SIZE / MASTER_ADDR in its "
        "environment), so DeepSpeed tried to learn its ranks from MPI, and mpi4py is not installed"
        + on_ranks(hits),
        "Start it through a launcher that sets the ranks: deepspeed train.py ... (deepspeed --num_gpus 1 for one "
        "GPU), torchrun --nproc_per_node N train.py ..., or accelerate launch --use_deepspeed ... (without "
        "--use_deepspeed accelerate's simple launcher sets no DeepSpeed environment). For one process without a "
        "launcher, set RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 before it starts. "
        "Only a job run under mpirun needs mpi4py (pip install mpi4py).",
    )


NO_LAUNCHER = Recogniser(
    kind="deepspeed_no_launcher",
    title="a DeepSpeed script started without a launcher",
    anchors=("Not using the DeepSpeed or dist launchers",),
    templates=("deepspeed:not-using-the-deepspeed-or-dist",),
    requires=("mpi4py_missing",),
    also=(
        Alternative(
            "broken_install",
            "a job run under mpirun (or srun --mpi) whose environment lacks mpi4py",
            "When the job is meant to take its ranks from MPI, install mpi4py where it runs (pip install mpi4py, "
            "built against the cluster's MPI).",
        ),
    ),
    describe=_no_launcher,
)

RECOGNISERS = (NO_LAUNCHER,)
