"""pytorch/examples' DDP tutorial for several nodes (distributed/ddp-tutorial-series/multinode.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) on 2 CPU ranks, rank 1's dataset hanging in a read, stopped
with Ctrl-C under torchrun: explain said torchrun was stopped by SIGINT, and not where each rank was, which both
ranks' KeyboardInterrupt tracebacks show: rank 1 in the dataset's read, rank 0 in DDP's backward (found for session
30). Below, the tutorial's loop reduced to its DDP model, DistributedSampler and training step; read from a real
torchrun's process group sent SIGINT as a terminal sends it, its console recorded (fixtures/recorded_runs/;
benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from explaining import explained
from helpers import TORCHRUN, interrupted_once_hanging
from recorded import recorded

SCRIPT = """
import os, time, torch, torch.nn.functional as F
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]
    def __len__(self):
        return len(self.data)
    def __getitem__(self, index):
        if dist.get_rank() == 1 and index > 64:
            open("hanging", "w").close()
            time.sleep(3600)
        return self.data[index]

dist.init_process_group("gloo")
dataset = MyTrainDataset(256)
loader = DataLoader(dataset, batch_size=32, shuffle=False, sampler=DistributedSampler(dataset))
model = DDP(torch.nn.Linear(20, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
for source, targets in loader:
    optimizer.zero_grad()
    loss = F.mse_loss(model(source), targets)
    loss.backward()
    optimizer.step()
"""


def run(folder: Path) -> str:
    (folder / "train.py").write_text(SCRIPT)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    _, output = interrupted_once_hanging(
        [TORCHRUN, "--standalone", "--nproc-per-node", "2", "train.py"], folder, environ
    )
    assert "SIGINT" in output or "got signal: 2" in output, output[-3000:]
    return output


RECORDED_RUNS = {"u30_ctrl_c_places": run}


def test_a_hang_stopped_with_ctrl_c_under_torchrun_names_where_each_rank_was():
    output = recorded("u30_ctrl_c_places")
    assert "SIGINT" in output or "got signal: 2" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.launcher_stopped", found.summary
    # the script's path, the recording machine's temporary folder, left out
    summary = re.sub(r"/\S*/train\.py", "train.py", found.summary)
    assert "rank 1 was at train.py:15 in __getitem__: time.sleep(3600)" in summary, found.summary
    assert "rank 0 was at train.py:26 in <module>: loss.backward()" in summary, found.summary
