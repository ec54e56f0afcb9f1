"""A GPU index past the GPUs a Slurm job gave the task: Slurm binds GPUs to each job step and to each task.

Slurm's gres/gpu plugin writes every task's ``CUDA_VISIBLE_DEVICES`` from the GPUs allocated to it
(``src/plugins/gres/common/gres_common.c``, ``common_gres_set_env``: the step's allocation, narrowed to the task's
``usable_gres`` when the step binds GPUs to tasks, as local indexes when cgroups constrain the devices). With
``--gpus-per-task=1``, ``--gpu-bind=single:1`` or ``--ntasks-per-gpu`` each task sees one GPU, and CUDA numbers the
visible GPUs from 0: the task's GPU is ``cuda:0`` whatever its number on the node, so a script that picks
``torch.cuda.set_device(local_rank)`` gets cudaErrorInvalidDevice ("invalid device ordinal", catalog
``cuda_runtime:invalid-device-ordinal``) on every local rank but 0. ``--gpus-per-node`` (or ``--gres=gpu:N``) with
one task per GPU lets every task see the node's GPUs and pick its own by ``SLURM_LOCALID``.

Found for session 31: a Slurm job of eight tasks with ``--gpus-per-task=1`` whose every rank but local rank 0 failed
(ACEsuit/mace#435) was read as more processes than GPUs, with a torchrun command as the fix. cuda.py's
invalid_device_ordinal reads the message; this module says what it means in a Slurm job and what to change there.
"""

from __future__ import annotations

import re

FAMILY = "launchers and schedulers"

TEMPLATES = ("cuda_runtime:invalid-device-ordinal",)

# a Slurm job: its commands and daemons, its variables, the user's own words ("in a slurm environment")
_SLURM = re.compile(r"(?i)(?P<saw_slurm>\b(?:slurm\w{0,20}|srun|sbatch|salloc)\b|\bSLURM_[A-Z_]{2,40})")
# the options that bind GPUs to tasks (sbatch/srun's --gpus-per-task, --gpu-bind, --ntasks-per-gpu; submitit's
# and Lightning's gpus_per_task)
_BINDING = re.compile(
    r"(?P<slurm_gpu_binding>--gpus-per-task(?:[= ]\d{1,3})?|--gpu-bind(?:=[\w:,]{1,40})?|"
    r"--ntasks-per-gpu(?:[= ]\d{1,3})?|\bgpus_per_task\b)"
)

CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    *((literal, _SLURM) for literal in ("slurm", "Slurm", "SLURM", "srun", "sbatch", "salloc")),
    *(
        (literal, _BINDING)
        for literal in ("--gpus-per-task", "--gpu-bind", "--ntasks-per-gpu", "gpus_per_task")
    ),
)


def under_slurm(facts: dict) -> tuple[str, str] | None:
    """(what to add to the summary, the fix) when the log is a Slurm job's (``facts``: the whole log's); else None.

    >>> under_slurm({"saw_slurm": "srun", "slurm_gpu_binding": "--gpus-per-task=1"})[0]
    ' in a Slurm job that binds GPUs to tasks (--gpus-per-task=1)'
    """
    binding = facts.get("slurm_gpu_binding")
    if not binding and "saw_slurm" not in facts:
        return None
    if binding:
        said = f" in a Slurm job that binds GPUs to tasks ({binding})"
        why = f"{binding} gives each srun task only its own GPU"
    else:
        said = " in a Slurm job"
        why = (
            "Slurm gives each srun task only the GPUs bound to it when the job asks for --gpus-per-task (or "
            "--gpu-bind, --ntasks-per-gpu)"
        )
    fix = (
        f"{why}, and CUDA numbers the GPUs a task sees from 0: each task's GPU is cuda:0, so "
        "torch.cuda.set_device(local_rank) fails on every local rank but 0 (check: srun printenv "
        "CUDA_VISIBLE_DEVICES). Either let every task see the node's GPUs and pick its own:\n"
        "#SBATCH --ntasks-per-node=4\n"
        "#SBATCH --gpus-per-node=4\n"
        "srun python train.py  # in the script: torch.cuda.set_device(int(os.environ['SLURM_LOCALID']))\n"
        "or keep one GPU per task and use the one it sees: torch.cuda.set_device(0) (torch.cuda.device_count() is 1 "
        "in each task)."
    )
    return said, fix
