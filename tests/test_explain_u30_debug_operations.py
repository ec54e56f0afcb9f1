"""Under launch --debug, a rank that made a broadcast where the other made an all_reduce: debug mode raised its
"Cannot apply desired operation because the processes called different operations at the same point", with each
rank's operation and line, and explain on that console said "torchdoctor knows no fix for this error" (found for
session 30, the planted fault of a different collective on one rank). Real processes on this torch."""

from __future__ import annotations

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(8)
for step in range(3):
    if rank == 1 and step == 2:
        dist.broadcast(t, src=0)
    else:
        dist.all_reduce(t)
dist.destroy_process_group()
"""


def test_ranks_making_different_collectives_under_debug_on_this_torch_are_read_with_each_ranks_call(tmp_path):
    returncode, output = launch_two_ranks(
        tmp_path, SCRIPT, "--debug", env={"TORCHDOCTOR_DEBUG_TIMEOUT": "30"}
    )
    assert returncode != 0 and "called different operations at the same point" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.ranks_different_collectives", found.summary
    assert "collective #3 with different operations" in found.summary
    assert "rank 0: torch.distributed.all_reduce at train.py:10" in found.summary
    assert "rank 1: torch.distributed.broadcast at train.py:8" in found.summary
