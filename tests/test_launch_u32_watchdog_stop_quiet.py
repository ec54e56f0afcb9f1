"""pytorch/examples' minGPT-ddp trainer (distributed/minGPT-ddp/mingpt/trainer.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with rank 1 busy-waiting in Python for a file nobody writes
before the epoch's barrier. The watchdog names it; but as it stopped the run, each rank stopped by the SIGINT said
"torchdoctor: rank 1 was interrupted at ..." above the report, in other words than the report (with a DataLoader
worker stuck, the rank's line was its `for` loop, the report's the worker's line; found for session 32). The
script is the trainer's epoch loop reduced to a Linear on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import launch_two_ranks

pytestmark = pytest.mark.processes

SCRIPT = """
import os
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Linear(8, 1))
for epoch in range(3):
    model(torch.rand(4, 8)).sum().backward()
    if epoch == 1 and dist.get_rank() == 1:
        while not os.path.exists("eval_done.flag"):
            pass
    dist.barrier()
"""


def test_the_watchdogs_stop_leaves_the_report_to_say_where_each_rank_was(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    if kept:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert "Culprit: rank(s) 1 at train.py:11; rank(s) 0 wait because of it." in output, output[-3000:]
    assert "was interrupted at" not in output, output[-3000:]
