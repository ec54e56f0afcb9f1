"""pytorch/examples' FSDP2 example (distributed/FSDP2/example.py and checkpoint.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with its checkpointer.save moved under
`if torch.distributed.get_rank() == 0:`, as users write a save: the save's full_tensor() gathers from every rank,
so rank 1 went on, ended, and rank 0 failed in the gather. launch --watchdog and explain said "the ranks ran
different numbers of iterations" and named the state dict's own loop in checkpoint.py as the culprit (found for
session 30). The script below is the example's sharding and save reduced to two Linear layers on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, torch.distributed as dist
from torch.distributed.fsdp import fully_shard

def full_state_dict(model):
    state = {}
    for name, sharded in model.state_dict().items():
        full = sharded.full_tensor()
        if dist.get_rank() == 0:
            state[name] = full.cpu()
    return state

dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 4))
for layer in model:
    fully_shard(layer)
fully_shard(model)
optim = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(2):
    model(torch.randn(4, 8)).sum().backward()
    optim.step()
    optim.zero_grad()
if dist.get_rank() == 0:
    torch.save(full_state_dict(model), "model.pt")
dist.destroy_process_group()
"""


def test_a_state_dict_gathered_under_rank_0_only_on_this_torch_names_the_condition_not_uneven_iterations(
    tmp_path,
):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "60")
    kept = re.search(r"What each rank left: (\S+)/rank\*", output)
    if kept:  # the folder a failed job's verdict names, kept for the user: not for a test
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "ended while rank 0 still trained" in output, output[-3000:]
    assert "under a condition on the rank at train.py:24 (`if dist.get_rank() == 0:`)" in output, output[
        -3000:
    ]
    assert "different numbers of iterations" not in output and "Culprit: rank(s) 1 at train.py:24." in output
    found = explained(output)
    assert found.id == "log.ranks_ended_early", found.summary
    assert "made a collective under a condition on the rank at train.py:24" in found.summary
    assert "make that call on every rank" in found.fix and "drop_last" not in found.fix


# pytorch/examples' DDP tutorial for several nodes (distributed/ddp-tutorial-series/multinode.py, same commit and
# licence) with a barrier after the snapshot that only rank 0 saves, as users add one "until the file is written"
# (at the end of the training here, so that rank 1 ends):
# under launch --debug, explain led with "rank 1 never reached collective #1" and a generic list of reasons beside
# the launch's verdict that named the condition
BARRIER = """
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Linear(20, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
for epoch in range(2):
    optimizer.zero_grad()
    model(torch.rand(8, 20)).sum().backward()
    optimizer.step()
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "snapshot.pt")
    dist.barrier()
dist.destroy_process_group()
"""


def test_a_barrier_under_rank_0_only_under_debug_on_this_torch_is_read_with_its_condition(tmp_path):
    returncode, output = launch_two_ranks(
        tmp_path, BARRIER, "--debug", env={"TORCHDOCTOR_DEBUG_TIMEOUT": "3"}
    )
    assert returncode != 0 and "did not reach collective" in output, output[-3000:]
    assert "a call made under a condition on the rank at train.py:12" in output, output[-3000:]
    found = explained(output)
    assert found.id in ("log.collective_never_reached", "log.ranks_ended_early"), found.summary
    assert "condition on the rank at train.py:12" in found.summary, found.summary
    assert "make the call on every rank" in found.fix or "make that call on every rank" in found.fix
