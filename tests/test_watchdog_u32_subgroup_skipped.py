"""pytorch/examples' minGPT-ddp trainer (distributed/minGPT-ddp/mingpt/trainer.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with a metric synced on a subgroup after each epoch, under
`if self.global_rank != 1:` (rank 1 skips it): rank 0 waits in the subgroup's all_reduce for rank 1, rank 1 waits
in DDP's next forward for rank 0. launch --watchdog said "rank 0 never entered broadcast ..." and blamed rank 0,
the rank held up (gloo's dumps do not say who a subgroup's members are, so rank 1's absence from it was not seen;
found for session 32). The script is the trainer's loop reduced to a Linear on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import launch_two_ranks

pytestmark = pytest.mark.processes

SCRIPT = """
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
pair = dist.new_group([0, 1])
model = DDP(torch.nn.Linear(8, 1))
for epoch in range(3):
    model(torch.rand(4, 8)).sum().backward()
    if dist.get_rank() != 1:
        dist.all_reduce(torch.ones(2), group=pair)
dist.destroy_process_group()
"""


def test_a_rank_waiting_alone_in_a_subgroup_is_not_blamed_and_the_calls_condition_is_named(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    if kept:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert "Culprit: rank(s) 0" not in output, output[-3000:]
    assert "which no other rank entered" in output and "rank 0 is held up, not the cause" in output, output[
        -3000:
    ]
    assert "train.py:11 sits under a condition on the rank, line 10: `if dist.get_rank() != 1:`" in output
