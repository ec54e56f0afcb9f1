"""A hang stopped with Ctrl-C under `torchdoctor launch` where every rank is blocked in torch's C++ code: rank 1 waits
on a store key rank 0 never sets (a "checkpoint saved" handshake, as pytorch/examples' minGPT-ddp trainer saves on
one rank), rank 0 waits in DDP's gradient all-reduce. Neither raises KeyboardInterrupt (Python's handler runs only
when the C++ call returns, and the launch ends the processes first), so the launch said only "torchdoctor:
interrupted", and explain on that console knew nothing (found for session 32). Now the launch says where each
blocked rank was, from the stack faulthandler wrote on SIGINT, and explain reads those lines."""

from __future__ import annotations

import pytest
from explaining import explained
from helpers import launch_interrupted_once_hanging

pytestmark = pytest.mark.processes

SCRIPT = """
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Linear(8, 1))
store = dist.distributed_c10d._get_default_store()
for epoch in range(3):
    model(torch.rand(4, 8)).sum().backward()
    if epoch == 1 and dist.get_rank() == 1:
        open("hanging", "w").close()
        store.wait(["checkpoint_saved"])
"""


def test_ctrl_c_on_ranks_blocked_in_cpp_says_where_each_was_and_explain_reads_it(tmp_path):
    returncode, output = launch_interrupted_once_hanging(tmp_path, SCRIPT)
    assert returncode == 130 and "torchdoctor: interrupted" in output, output[-3000:]
    assert (
        'torchdoctor: rank 1 was interrupted at train.py:12 in <module>: store.wait(["checkpoint_saved"])'
        in output
    )
    assert "torchdoctor: rank 0 was interrupted at train.py:9 in <module>: model(" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.launch_interrupted", found.summary
    assert "rank 0 was at train.py:9" in found.summary and "rank 1 was at train.py:12" in found.summary
