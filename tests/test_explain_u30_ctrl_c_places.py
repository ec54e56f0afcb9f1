"""pytorch/examples' DDP tutorial for several nodes (distributed/ddp-tutorial-series/multinode.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) on 2 CPU ranks, rank 1's dataset hanging in a read, stopped
with Ctrl-C under torchrun: explain said torchrun was stopped by SIGINT, and not where each rank was, which both
ranks' KeyboardInterrupt tracebacks show: rank 1 in the dataset's read, rank 0 in DDP's backward (found for session
30). Below, the tutorial's loop reduced to its DDP model, DistributedSampler and training step; read from a real
torchrun's process group sent SIGINT as a terminal sends it."""

from __future__ import annotations

import os
import sys

from explaining import explained
from helpers import TORCHRUN, interrupted_once_hanging

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


def test_a_hang_stopped_with_ctrl_c_under_torchrun_on_this_torch_names_where_each_rank_was(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    returncode, output = interrupted_once_hanging(
        [TORCHRUN, "--standalone", "--nproc-per-node", "2", "train.py"], tmp_path, environ
    )
    assert "SIGINT" in output or "got signal: 2" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.launcher_stopped", found.summary
    assert "rank 1 was at train.py:15 in __getitem__: time.sleep(3600)" in found.summary.replace(
        str(tmp_path) + "/", ""
    )
    assert "rank 0 was at train.py:26 in <module>: loss.backward()" in found.summary.replace(
        str(tmp_path) + "/", ""
    )
