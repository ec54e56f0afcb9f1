"""A barrier under a condition on the rank in a training callback, under launch --debug: debug mode named both
ranks' calls (rank 0's barrier, rank 1's next all-reduce) but not the condition that sent rank 0 alone to its
barrier (found for session 31 with transformers' Trainer on a tiny config-built GPT-2, a TrainerCallback's
on_step_end calling dist.barrier() under `state.is_world_process_zero`). The loop below is that callback's shape
with plain gloo collectives on 2 ranks."""

from __future__ import annotations

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, torch.distributed as dist

dist.init_process_group("gloo")


class SyncOnSave:
    def on_step_end(self, step):
        if step == 3 and dist.get_rank() == 0:
            dist.barrier()  # wait for the others before writing


callback = SyncOnSave()
for step in range(6):
    dist.all_reduce(torch.ones(2))
    callback.on_step_end(step)
dist.destroy_process_group()
"""


def test_a_callbacks_barrier_under_a_rank_condition_under_debug_on_this_torch_names_the_condition(tmp_path):
    returncode, output = launch_two_ranks(
        tmp_path, SCRIPT, "--debug", env={"TORCHDOCTOR_DEBUG_TIMEOUT": "10"}
    )
    assert returncode != 0 and "different operations" in output, output[-3000:]
    said = "train.py:10 sits under a condition on the rank, line 9: `if step == 3 and dist.get_rank() == 0:`"
    assert said in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.ranks_different_collectives", found.summary
    assert said in found.summary and found.fix.startswith(said + ": take the collective"), found.fix
