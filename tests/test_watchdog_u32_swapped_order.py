"""pytorch/examples' minGPT-ddp trainer (distributed/minGPT-ddp/mingpt/trainer.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with two metrics synced after each epoch, in one order on
rank 0 and the other on the rest: gloo pairs rank 0's first all_reduce with rank 1's first, of another size, and
the job hangs. The watchdog said "collective #N has different sizes" and blamed rank 0 for the branch it took,
where both branches make the same calls (found for session 32). The script is the epoch's end on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import launch_two_ranks

pytestmark = pytest.mark.processes

SCRIPT = """
import torch, torch.distributed as dist

dist.init_process_group("gloo")
for epoch in range(2):
    loss_sum, tokens = torch.ones(1), torch.ones(3)
    if dist.get_rank() == 0:
        dist.all_reduce(loss_sum)
        dist.all_reduce(tokens)
    else:
        dist.all_reduce(tokens)
        dist.all_reduce(loss_sum)
dist.destroy_process_group()
"""


def test_the_same_collectives_in_another_order_are_said_so_and_no_branch_is_blamed(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    if kept:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert (
        "the ranks make the same collectives in another order: rank 0 made all_reduce #1 [1] Float" in output
    )
    assert "rank 1 made all_reduce #1 [3] Float (train.py:11 in <module>) first" in output, output[-3000:]
    assert "branches of a condition on the rank, line 7: `if dist.get_rank() == 0:`" in output, output[-3000:]
    assert "Culprit: rank(s) 0" not in output, output[-3000:]
