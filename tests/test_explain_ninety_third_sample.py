"""The ninety-third sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4467-4516)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# a Slurm job of one task per GPU with --gpus-per-task=1: each task sees its GPU as cuda:0 (Slurm's gres/gpu sets
# the task's CUDA_VISIBLE_DEVICES), so set_device(local_rank) fails on every local rank but 0
BOUND = (
    "+ srun --ntasks-per-node=4 --gpus-per-task=1 python train.py --config configs/base.yaml\n"
    "Traceback (most recent call last):\n"
    '  File "/home/user/project/train.py", line 41, in <module>\n'
    "    torch.cuda.set_device(local_rank)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py", line 404, in set_device\n'
    "    torch._C._cuda_setDevice(device)\n"
    "RuntimeError: CUDA error: invalid device ordinal\n"
    "srun: error: gpu017: tasks 1-3: Exited with exit code 1\n"
)


def test_a_device_index_past_the_gpu_slurm_bound_to_the_task_names_the_binding_and_gpus_per_node():
    found = reads(BOUND, "invalid_device_ordinal", "certain")
    assert "Slurm job" in found.summary and "--gpus-per-task=1" in found.summary
    assert "#SBATCH --gpus-per-node=4" in found.fix and "SLURM_LOCALID" in found.fix
    assert "torch.cuda.set_device(0)" in found.fix


# the user's words for the same job, as a prose line quoting the error (ACEsuit/mace#435)
def test_the_same_failure_told_in_a_slurm_environment_is_read_as_slurms_binding():
    found = reads(
        "When trying to train a model in a slurm environment, all subprocesses except for the one with "
        "local_rank==0 fail due to a RuntimeError: CUDA error: invalid device ordinal error.\n",
        "invalid_device_ordinal",
        "likely",
    )
    assert found.summary.endswith("in a Slurm job") and "--gpus-per-node" in found.fix


# no scheduler in the log: more torchrun processes than GPUs, the fix stays torchrun's
def test_an_invalid_device_ordinal_under_torchrun_alone_keeps_the_process_count_fix():
    found = reads(
        BOUND.replace(
            "+ srun --ntasks-per-node=4 --gpus-per-task=1 python train.py",
            "+ torchrun --nproc_per_node=4 train.py",
        ).replace("srun: error: gpu017: tasks 1-3: Exited with exit code 1\n", ""),
        "invalid_device_ordinal",
        "certain",
    )
    assert "Slurm" not in found.summary and "Slurm" not in found.fix
    assert "--nproc_per_node" in found.fix and "--gpus-per-node" not in found.fix
