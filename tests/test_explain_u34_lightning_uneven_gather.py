"""Lightning's all_gather of tensors of different sizes on 2 gloo ranks started by Lightning's own launcher
(session 34): gloo aborts the rank whose buffer is too small with "Received data size doesn't match expected size"
and no Python traceback, so nothing named the gather; `explain` read it as ranks in different branches and led with
"Decide on one rank and broadcast the decision", and with a Lightning run added "never under `if
self.global_rank == 0:`", while every rank had made the same call. The FutureWarning torch gives at Lightning's
gather names it. Found with a LightningModule's `self.all_gather` in on_train_epoch_end (a BoringModel-like module,
Trainer(devices=2, strategy="ddp")); the run here is Fabric's all_gather, the same function, started faster. Its
console is recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from explaining import explained
from recorded import recorded

SCRIPT = """
import torch, lightning as L

fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
predictions = torch.zeros(3 + fabric.global_rank)  # rank 1 holds one prediction more
gathered = fabric.all_gather(predictions)
print("gathered", tuple(gathered.shape))
"""


def run(folder: Path) -> str:
    (folder / "train.py").write_text(SCRIPT)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "train.py"], env=environ, capture_output=True, text=True, timeout=120, cwd=folder
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    return output


RECORDED_RUNS = {"u34_lightning_uneven_gather": run}


def test_an_uneven_lightning_all_gather_under_its_own_launcher_leads_with_padding_the_tensors():
    output = recorded("u34_lightning_uneven_gather")
    assert "Received data size doesn't match expected size" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.rank_divergence", found.summary
    assert "in Lightning's all_gather: the ranks' tensors differ in shape" in found.summary, found.summary
    assert found.fix.startswith(
        "self.all_gather (Fabric.all_gather) takes a tensor of one shape on every rank"
    )
    assert "never under `if self.global_rank == 0:`" not in found.fix
