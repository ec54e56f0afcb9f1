"""A rank that left mid-epoch with os._exit(3): the console holds rank 0's "Connection closed by peer" and
torchrun's summary of rank 1's exit, and no cause. explain marked both ✗, the peer first, and sent the user to
rank 1's traceback, which does not exist (found for session 30). torchrun's summary of the rank that failed first
now leads, the other ranks' consequences follow from it, and a status other than 1 says a call chose it. Read from
real processes on this torch."""

from __future__ import annotations

import io

from explaining import explained
from helpers import torchrun_two_ranks

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


def test_a_rank_that_exited_with_3_on_this_torch_leads_with_its_exit_and_the_peer_follows_from_it(tmp_path):
    done = torchrun_two_ranks(tmp_path, SCRIPT)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "exitcode  : 3" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.child_failed" and "rank 1 exited with 3" in found.summary, found.summary
    assert "os._exit(3)" in found.fix
    statuses = {f.id: f.status for f in explain(["-"], stdin=io.BytesIO(output.encode()))}
    assert statuses.get("log.peer_closed", "warn") == "warn", statuses
    assert list(statuses.values()).count("fail") == 1, statuses
