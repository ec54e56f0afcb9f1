"""A DDP loop whose rank 1 skips one batch's backward with `continue` after a NaN loss, as accelerate's
examples/by_feature/gradient_accumulation.py (huggingface/accelerate 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83,
Apache-2.0) did on a tiny config-built BERT when such a check was planted in its loop (session 31): under
launch --watchdog rank 0 waited in backward's all-reduce and rank 1 in DDP's buffer broadcast before the next
forward, and the report said only that the odd side could not be told. The loop here is the same fault in a
plain DDP model with a buffer (a BatchNorm), 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
model = DDP(nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Linear(16, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    if rank == 1 and step == 2:
        loss = loss * float("nan")
    if torch.isnan(loss):
        continue  # skip a bad batch
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
dist.destroy_process_group()
"""


def test_a_ddp_rank_skipping_a_nan_losss_backward_under_watchdog_on_this_torch_says_backward_passes_differ(
    tmp_path,
):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "3")
    kept = re.search(r"Full stacks: (\S+)/rank\*", output)
    if kept:  # the folder the hang's report names, kept for the user: not for a test
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "torchdoctor: hang: no progress" in output, output[-3000:]
    assert (
        "Under DDP rank 0 waits in backward's gradient all-reduce while rank 1 waits in DDP's collectives before "
        "the next forward: the ranks ran different numbers of backward passes" in output
    ), output[-3000:]
    assert "cannot be told" not in output
    found = explained(output)
    assert found.id == "log.hang_verdict", found.summary
    assert "the ranks ran different numbers of backward passes" in found.summary, found.summary
    assert found.fix.startswith(
        "Under DDP every rank must run backward after every forward"
    ) and "`continue`" in (found.fix)
