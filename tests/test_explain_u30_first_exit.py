"""A rank that left mid-epoch with os._exit(3): the console holds rank 0's "Connection closed by peer" and
torchrun's summary of rank 1's exit, and no cause. explain marked both ✗, the peer first, and sent the user to
rank 1's traceback, which does not exist (found for session 30). torchrun's summary of the rank that failed first
now leads, the other ranks' consequences follow from it, and a status other than 1 says a call chose it. Read from
real processes, their console recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs them again)."""

from __future__ import annotations

import io
from pathlib import Path

from explaining import explained
from helpers import torchrun_two_ranks
from recorded import recorded

from torchdoctor.explain.diagnose import explain

SCRIPT = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(4)
for step in range(3):
    dist.all_reduce(t)
    if dist.get_rank() == 1 and step == 1:
        os._exit(3)
"""


def run(folder: Path) -> str:
    done = torchrun_two_ranks(folder, SCRIPT)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    return output


RECORDED_RUNS = {"u30_first_exit": run}


def test_a_rank_that_exited_with_3_leads_with_its_exit_and_the_peer_follows_from_it():
    output = recorded("u30_first_exit")
    assert "exitcode  : 3" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.child_failed" and "rank 1 exited with 3" in found.summary, found.summary
    assert "os._exit(3)" in found.fix
    statuses = {f.id: f.status for f in explain(["-"], stdin=io.BytesIO(output.encode()))}
    assert statuses.get("log.peer_closed", "warn") == "warn", statuses
    assert list(statuses.values()).count("fail") == 1, statuses
