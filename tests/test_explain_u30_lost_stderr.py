"""A rank that raised after its ``sys.stderr`` was closed or set to None: CPython's "Error in sys.excepthook:" /
"Original exception was:" (and "lost sys.stderr" under a closed one) instead of a traceback, the other rank's
"Connection closed by peer" and torchrun's exit -6 of the first. explain led with the peer that closed the
connection and said the cause was not in the log (found for session 30 by closing sys.stderr on one of two gloo
ranks under torchrun, as a script that redirects its output into a file it closes does). Read from real torchrun
consoles, recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs them again), and in the forms CPython
prints without them."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from explaining import explained
from helpers import torchrun_two_ranks
from recorded import recorded

SCRIPT = """
import sys, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(4)
for step in range(3):
    dist.all_reduce(t)
    if dist.get_rank() == 1 and step == 1:
        {lose}
        raise RuntimeError("bad batch on rank 1")
"""


def _lost(lose: str, folder: Path) -> str:
    done = torchrun_two_ranks(folder, SCRIPT.format(lose=lose))
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Error in sys.excepthook:" in output, output[-3000:]
    return output


LOSSES = {"closed": "sys.stderr.close()", "none": "sys.stderr = None"}
RECORDED_RUNS = {f"u30_lost_stderr_{name}": partial(_lost, lose) for name, lose in LOSSES.items()}


@pytest.mark.parametrize("lose", sorted(LOSSES))
def test_a_rank_whose_stderr_was_lost_leads_with_the_lost_traceback_not_the_peer(lose):
    output = recorded(f"u30_lost_stderr_{lose}")
    assert "Error in sys.excepthook:" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.lost_stderr", found.summary
    assert "traceback was never printed" in found.summary and "sys.stderr = sys.__stderr__" in found.fix
    if lose == "closed":
        assert "RuntimeError('bad batch on rank 1')" in found.summary


def test_a_hook_that_failed_while_stderr_worked_is_not_a_lost_stderr():
    text = (
        "Error in sys.excepthook:\n"
        "Traceback (most recent call last):\n"
        '  File "/home/ana/hooks.py", line 3, in hook\n'
        "    log.write(text)\n"
        "AttributeError: 'NoneType' object has no attribute 'write'\n"
        "\n"
        "Original exception was:\n"
        "Traceback (most recent call last):\n"
        '  File "/home/ana/train.py", line 9, in <module>\n'
        "    loss = model(batch)\n"
        "ValueError: bad batch\n"
    )
    assert explained(text).id != "log.lost_stderr"
