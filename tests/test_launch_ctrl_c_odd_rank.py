"""Ctrl-C on a hang where one rank is elsewhere: rank 1 sleeps on a line of its own while ranks 0 and 2 wait in a
barrier (a rank-1-only stall, as a slow read or a save on one rank makes it). The launch said where each rank was
and named nobody; now, where every rank's place is known, all but one were blocked in the same collective and one
was not in it, the launch and explain name that rank as the likely one the others waited for. Two ranks elsewhere
name nobody (hang/odd_rank.py)."""

from __future__ import annotations

import pytest
from explaining import explained
from helpers import launch_interrupted_once_hanging

pytestmark = pytest.mark.processes

ODD = """
import time
import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 1:
    open("hanging", "w").close()
    time.sleep(600)
dist.barrier()
"""

TWO_ELSEWHERE = """
import time
import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() > 0:
    open("hanging", "w").close()
    time.sleep(600)
dist.barrier()
"""


def test_ctrl_c_names_the_rank_outside_the_collective_the_others_wait_in(tmp_path):
    returncode, output = launch_interrupted_once_hanging(tmp_path, ODD, 3)
    assert returncode == 130, output[-3000:]
    said = "ranks 0, 2 were waiting in barrier and rank 1 was not in it (train.py:8 in <module>: time.sleep(600))"
    assert f"torchdoctor: {said}: if the run had stopped moving, rank 1 is likely" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.launch_interrupted" and said in found.summary, found.summary
    assert "what rank 1 was doing at that line instead of joining the barrier" in found.fix


def test_two_ranks_elsewhere_name_nobody(tmp_path):
    returncode, output = launch_interrupted_once_hanging(tmp_path, TWO_ELSEWHERE, 3)
    assert returncode == 130 and "torchdoctor: rank 1 was interrupted at" in output, output[-3000:]
    assert "likely the one they waited for" not in output
    found = explained(output)
    assert found.id == "log.launch_interrupted" and "likely the one" not in found.summary, found.summary
