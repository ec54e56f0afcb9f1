"""A rank a fatal signal ends (gloo aborts the rank whose collective receives more data than it expected:
SIGABRT, no Python error) is placed where the signal found it, not where the watchdog last saw it move: rank 0's
extra all_reduce, under `if rank == 0`, was told as "last seen at" the loop's next line (its last sample, taken
in the sleep after the previous step) and the culprit's line was that one. Each watchdog worker now has
``faulthandler`` write its stacks on a fatal signal (``rank<N>.fatal``: hang/worker.py, hang/failure.py). Two
gloo ranks under launch --watchdog.
Since session 43 a rank that died inside that call is told with the fix, as one gloo aborted in its last noted
call was (make the call on every rank, keep only the write or the print under the condition), and ``verdict.json``
has the condition (its ``condition`` was empty for every failed job)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from helpers import launch_two_ranks

SCRIPT = """
import time, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(30):
    opt.zero_grad(); model(torch.randn(4, 8)).sum().backward(); opt.step()
    if rank == 0 and step == 10:
        dist.all_reduce(torch.tensor(1.0))  # a metric averaged on rank 0 only
    time.sleep(0.05)
dist.destroy_process_group()
"""


def test_a_rank_gloo_aborted_is_placed_at_the_call_it_died_in_with_its_condition(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "10")
    kept = re.search(r"What each rank left: (\S+)/rank\*", output)
    said = json.loads((Path(kept[1]) / "verdict.json").read_text()) if kept else {}
    if kept:  # the folder the failed job's report names, kept for the user: not for a test
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0, output[-3000:]
    assert (
        "rank 0 died without a Python error (killed by signal 6, SIGABRT) at train.py:10 in <module>"
        in output
    ), output[-3000:]
    assert "Culprit: rank(s) 0 at train.py:10." in output, output[-3000:]
    assert "a condition on the rank, line 9: `if rank == 0 and step == 10:`" in output, output[-3000:]
    assert "make the call on every rank and keep only the write or the print under the condition" in output
    assert said.get("condition") == "line 9: `if rank == 0 and step == 10:`", said
