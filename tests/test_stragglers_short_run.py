"""A run shorter than one window of steps that destroys its process group at the end: the straggler watch had
not found the job's store yet and, at exit, the group was gone, so `launch --stragglers` said nothing at all. It
now finishes when the default group is destroyed, and says the run was too short to judge (stragglers/watch.py
_finish_before_the_group_goes, stragglers/summary.py). Two gloo ranks under torchdoctor launch."""

from __future__ import annotations

from helpers import launch_two_ranks

SHORT = """
import torch
import torch.distributed as dist
from torch.distributed import destroy_process_group

dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    opt.step()
destroy_process_group()
"""


def test_a_run_shorter_than_a_window_that_destroys_its_group_says_it_was_too_short(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SHORT, "--stragglers")
    assert returncode == 0, output[-3000:]
    assert "torchdoctor: stragglers: 4 steps on 2 ranks: too few to judge" in output, output[-3000:]
    assert "no rank was slower" not in output
