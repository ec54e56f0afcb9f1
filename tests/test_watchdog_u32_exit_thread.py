"""pytorch/examples' minGPT-ddp (distributed/minGPT-ddp/mingpt/main.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with rank 1 starting an upload thread after
destroy_process_group() that is not a daemon and never ends: every script returns, rank 1's process waits for the
thread at exit, and torchrun waits for rank 1 forever. launch --watchdog never fired (a rank whose script returned
was not watched) and the run hung with no word (found for session 32). The script is main.py's end after a
reduced training loop on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

import pytest
from explaining import explained
from helpers import launch_two_ranks

pytestmark = pytest.mark.processes

SCRIPT = """
import os, threading, time
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Linear(8, 1))
for epoch in range(2):
    model(torch.rand(4, 8)).sum().backward()
dist.destroy_process_group()
if os.environ["RANK"] == "1":
    threading.Thread(target=lambda: time.sleep(600), name="uploader").start()
"""


def test_a_process_that_outlives_its_script_is_named_with_the_thread_python_waits_for(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"What the ranks noted as their scripts returned: (\S+)/rank\*\.done", output)
    if kept:  # the folder the report names, kept for the user: not for a test
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert "rank 1's script returned" in output and "its process has not ended" in output, output[-3000:]
    assert "non-daemon thread(s) 'uploader' (train.py:12 in <lambda>)" in output, output[-3000:]
    assert "Culprit: rank(s) 1 at train.py:12." in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.hang_verdict" and "a hang at exit" in found.summary, found.summary
    assert "daemon=True" in found.fix, found.fix
