"""Lightning's save called on rank 0 only (session 34: `trainer.save_checkpoint(...)` under `if
trainer.is_global_zero:` after fit, 2 gloo ranks under `torchdoctor launch --watchdog`): rank 0 waited in the
save's barrier while rank 1 ended, and `explain` read it right but led the fix with FSDP's full-state-dict recipes
(full_tensor(), FullStateDictConfig) for a DDP run. The run here is Fabric's save, the same barrier, started
faster."""

from __future__ import annotations

import re
import shutil

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, lightning as L

fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 1))
if fabric.is_global_zero:
    fabric.save("checkpoint.ckpt", {"model": model})  # save from rank 0 only
print("done", fabric.global_rank)
"""


def test_fabric_save_on_rank_zero_only_under_watchdog_leads_with_calling_lightnings_save_on_every_rank(
    tmp_path,
):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "3")
    kept = re.search(r"(?:Full stacks|What each rank left): (\S+)/rank\*", output)
    if kept:  # the folder the report names, kept for the user: not for a test
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0, output[-3000:]
    found = explained(output)
    assert found.id == "log.ranks_ended_early", found.summary
    assert "under a condition on the rank at train.py:7" in found.summary, found.summary
    assert found.fix.startswith(
        "fabric.save(...) and trainer.save_checkpoint(...) are called on every rank"
    ), found.fix
    assert "FSDP" not in found.fix.split("Otherwise:")[0]
