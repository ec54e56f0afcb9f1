"""pytorch/examples' minGPT-ddp (distributed/minGPT-ddp/mingpt/char_dataset.py and trainer.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause): its CharDataset read by a DataLoader with workers under
DDP, with rank 1's worker stuck in __getitem__ (a read of remote storage that never returns). ``launch --watchdog``
named the worker's line; ``explain`` on the folder it kept named rank 1's ``for`` loop instead, "in select", since
the worker's dump, appended to rank 1's stack file, was merged into the rank's own (found for session 32). The
script below is the dataset and the trainer's loop reduced to an embedding on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers import launch_two_ranks

from torchdoctor.hang.folder import folder_finding

pytestmark = pytest.mark.processes

SCRIPT = """
import os, time
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

class CharDataset(Dataset):
    def __init__(self, data, block_size):
        self.stoi = {ch: i for i, ch in enumerate(sorted(set(data)))}
        self.block_size, self.data = block_size, data

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        if os.environ["RANK"] == "1":
            open("hanging", "w").close()
            time.sleep(600)
        dix = [self.stoi[s] for s in self.data[idx:idx + self.block_size + 1]]
        return torch.tensor(dix[:-1]), torch.tensor(dix[1:])

dist.init_process_group("gloo")
dataset = CharDataset("first citizen: before we proceed any further, hear me speak. " * 4, 8)
model = DDP(torch.nn.Embedding(len(dataset.stoi), 4))
loader = DataLoader(dataset, batch_size=4, num_workers=1, sampler=DistributedSampler(dataset))
for source, targets in loader:
    model(source).sum().backward()
dist.destroy_process_group()
"""


def test_explain_on_the_kept_folder_names_the_dataloader_workers_line_as_the_watchdog_did(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    assert returncode != 0 and kept, output[-3000:]
    try:
        assert "Culprit: rank(s) 1 at train.py:19;" in output, output[-3000:]
        found = folder_finding(Path(kept[1]))
    finally:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert found.details["culprits"] == [1], found.summary
    assert found.details["where"]["line"] == 19, found.summary
    worker = f"waits for its DataLoader worker, which is in __getitem__ ({tmp_path / 'train.py'}:19)"
    assert worker in found.summary, found.summary
    assert "waiting for its DataLoader worker, which is in" in found.fix, found.fix
