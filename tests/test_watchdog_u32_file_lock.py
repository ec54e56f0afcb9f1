"""pytorch/examples' minGPT-ddp trainer (distributed/minGPT-ddp/mingpt/trainer.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with its snapshot saved under a file lock that is released
after the epoch's barrier: the rank that takes the lock first waits in the barrier, the other waits for the lock.
The watchdog named the waiting rank's line and "a lock" among five guesses, not the rank that holds it (found for
session 32); it now reads /proc/locks. The script is the trainer's save on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import launch_two_ranks

pytestmark = pytest.mark.processes

SCRIPT = """
import fcntl
import torch, torch.distributed as dist

dist.init_process_group("gloo")
with open("snapshot.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    torch.save({"epoch": 1}, f"snapshot{dist.get_rank()}.pt")
    dist.barrier()
dist.destroy_process_group()
"""


def test_a_rank_waiting_for_a_file_lock_names_the_rank_that_holds_it_across_a_collective(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    if kept:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    said = re.search(
        r"rank (\d) is held up at train.py:7: it waits for a file lock that rank (\d) holds, while rank \2 waits in "
        r"torch.distributed.barrier for it",
        output,
    )
    assert said and said[1] != said[2], output[-3000:]
    assert f"Culprit: rank(s) {said[1]} at train.py:7;" in output, output[-3000:]
