"""launch --debug checks the script's own collectives, not the gradient all-reduce DistributedDataParallel makes
inside backward(): a rank that runs one more step than the others waits there while they wait at their next
checked collective. Debug mode's timeout showed that rank's stack in backward() and said nothing of it, and explain
said only that it "never reached" the collective (left open by session 29: say what debug mode does and does not
check; found for session 30 with a DDP loop of 4 steps on rank 0 and 3 on rank 1). Real processes on this torch."""

from __future__ import annotations

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
rank = dist.get_rank()
model = DDP(torch.nn.Linear(8, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4 if rank == 0 else 3):
    model(torch.randn(4, 8)).sum().backward()
    opt.step()
    opt.zero_grad()
dist.all_reduce(torch.ones(2))
dist.destroy_process_group()
"""


def test_a_ddp_rank_one_step_ahead_under_debug_on_this_torch_is_named_in_backwards_unchecked_all_reduce(
    tmp_path,
):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--debug", env={"TORCHDOCTOR_DEBUG_TIMEOUT": "3"})
    assert returncode != 0 and "Process 0 did not reach collective #1" in output, output[-3000:]
    assert "it is in backward(): a model wrapped in DistributedDataParallel" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.collective_never_reached", found.summary
    assert (
        "rank 0 was in backward(), DDP's gradient all-reduce, which debug mode does not check"
        in found.summary
    )
