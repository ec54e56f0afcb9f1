"""A DataLoader worker killed with SIGKILL (the kernel's OOM killer, most often): torch's "DataLoader worker (pid
N) is killed by signal: Killed." (torch/csrc/DataLoader.cpp), raised in the main process by its SIGCHLD handler
wherever that process was. Found with pytorch/examples' DDP tutorial (multigpu_torchrun.py, 2 gloo ranks) given
persistent workers, one of which was killed in its second epoch: explain said 'a process was killed (SIGKILL): is
killed by signal: Killed' and pointed at the user's loss.backward(), where the handler happened to raise. Read from
a real process on this torch, and as printed."""

import io

from explaining import explained
from rank_runner import run_script

from torchdoctor.explain.diagnose import explain

# a worker that the kernel would kill for its memory: it kills itself with the same signal
SCRIPT = """\
import os
import signal
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 40:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


if __name__ == "__main__":
    # batches of ints go through the worker's queue, not as tensors whose storage is passed by file descriptor: a
    # worker killed while the main process receives such a tensor is a ConnectionResetError in the reader instead
    loader = DataLoader(Samples(), batch_size=4, num_workers=1, persistent_workers=True, collate_fn=list)
    for epoch in range(2):
        for batch in loader:
            time.sleep(0.05)  # the step: where the main process is when the worker dies
"""


def test_a_dataloader_worker_killed_on_this_torch_names_the_worker_and_not_the_line_as_the_cause():
    done = run_script(["-c", SCRIPT], timeout=120)
    assert done.returncode != 0 and "is killed by signal: Killed" in done.stderr, done.stderr[-2000:]
    found = explain(["-"], stdin=io.BytesIO(done.stderr.encode()))[0]
    assert found.id == "log.worker_killed", (found.summary, done.stderr[-2000:])
    assert "a DataLoader worker process was killed (SIGKILL): DataLoader worker (pid " in found.summary
    assert "persistent_workers=True" in found.fix and "not where the memory went" in found.fix


def test_the_workers_line_as_printed_quotes_its_pid():
    found = explained(
        "RuntimeError: DataLoader worker (pid 22476) is killed by signal: Killed. \n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )
    assert found.id == "log.worker_killed" and "DataLoader worker (pid 22476)" in found.summary
    assert (
        found.details["confidence"] == "likely"
    )  # the OOM killer or a scheduler: SIGKILL does not say which


def test_a_rank_killed_is_not_said_to_be_a_dataloader_worker():
    found = explained(
        "  exitcode  : -9 (pid: 4711)\ntorch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )
    assert found.id == "log.worker_killed", found.summary
    assert "DataLoader worker" not in found.summary and "not where the memory went" not in found.fix
