"""Two launchers that each gave a process its rank, and the ranks disagree.

DeepSpeed reads a process's rank from the variables a launcher sets: LOCAL_RANK (torchrun, the deepspeed launcher,
accelerate launch) and Open MPI's OMPI_COMM_WORLD_LOCAL_RANK (mpirun). When both are set and differ it refuses to
guess (``deepspeed/runtime/engine.py`` ``_configure_with_arguments``, every release the catalog reads, 0.6.7 on:
"LOCAL_RANK (2) != OMPI_COMM_WORLD_LOCAL_RANK (0), not sure how to proceed as we're seeing conflicting local rank
info."); its MPICH / Intel MPI launcher helper (``deepspeed/launcher/launcher_helper.py`` ``env_mapping``, 0.14.5
on: "rank number doesn't match!") refuses two MPI rank variables that differ. Each is one launcher started inside
another (mpirun around torchrun or the deepspeed launcher, a job script that runs a per-GPU launcher under an MPI
job), or a rank variable left in the environment by an outer job: the message alone says so, and the fix is to let
one launcher start the processes.

DeepSpeed's MPI discovery (``deepspeed/comm/comm.py`` ``mpi_discovery``: "MPI rank {} does not match torch rank
{}", and the same of the world size) is not read here: ``init_distributed`` calls it only when RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT are not all set, so no torch launcher set them, and the process group it
checks was formed by the script or a framework with ranks of its own (Lightning's DeepSpeed strategy in a process
MPI did not start prints "MPI world size 1 does not match torch world size 2", Lightning-AI/pytorch-lightning#6461):
kinds/launchers.py reads it as a likely ``rank_env_missing``, this kind named second.
"""

from __future__ import annotations

from torchdoctor.explain.quote import quote
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _conflicting(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("local_rank"):
        summary = (
            f"the process was given two local ranks: LOCAL_RANK={facts['local_rank']} (torchrun / the deepspeed "
            f"launcher) and OMPI_COMM_WORLD_LOCAL_RANK={facts['ompi_local_rank']} (mpirun): two launchers started it"
        )
    else:
        summary = (
            f"DeepSpeed's MPI launcher helper found two MPI rank variables that disagree "
            f"({quote(facts.get('helper', 'rank number does not match'))}): one MPI launch inside another"
        )
    fix = (
        "Let one launcher start the processes, one per GPU:\n"
        "mpirun -np <GPUs in all> python train.py --deepspeed ...   # DeepSpeed reads OMPI_COMM_WORLD_* itself\n"
        "or deepspeed --hostfile hostfile train.py ... (add --launcher openmpi to have it call mpirun), or "
        "torchrun on each node, without an mpirun around it. If an MPI job (mpirun, an MPIJob, a scheduler's MPI "
        "launch) must start one launcher per node, start exactly one per node and clear the outer launcher's rank "
        "variables for the processes it spawns (env -u OMPI_COMM_WORLD_LOCAL_RANK -u OMPI_COMM_WORLD_RANK -u "
        "OMPI_COMM_WORLD_SIZE ...); and do not export RANK / LOCAL_RANK in the job script or the container's "
        "environment. A script that initialises torch.distributed itself must take its rank from the same "
        "launcher (or call deepspeed.init_distributed() and let DeepSpeed read it)."
    )
    return summary + on_ranks(hits), fix


CONFLICTING_RANK_ENV = Recogniser(
    kind="conflicting_rank_env",
    title="two launchers gave the process different ranks",
    anchors=(
        "not sure how to proceed as we're seeing conflicting local rank info",
        "rank number doesn't match!",
    ),
    templates=(
        "deepspeed:local-rank-ompi-comm-world-local",  # deepspeed/runtime/engine.py _configure_with_arguments
        "deepspeed:rank-number-doesn-match",  # deepspeed/launcher/launcher_helper.py env_mapping
        "deepspeed:local-rank-number-doesn-match",
    ),
    match=R(r"conflicting local rank info|(?:^|[\s:])(?:local_)?rank number doesn't match!"),
    facts=(
        R(
            r"LOCAL_RANK \((?P<local_rank>[^()\n]{0,20})\) != OMPI_COMM_WORLD_LOCAL_RANK "
            r"\((?P<ompi_local_rank>[^()\n]{0,20})\)"
        ),
        R(r"(?P<helper>(?:local_)?rank number doesn't match!)"),
    ),
    describe=_conflicting,
)

RECOGNISERS = (CONFLICTING_RANK_ENV,)
