"""Lightning Fabric's loop (its README's fabric.launch, fabric.setup, fabric.backward) with devices=4 under a
torchrun of 2 processes: explain named Lightning's refusal right, but its fix spoke of Trainer(devices=...) alone
to a script that has no Trainer (found for session 31). The job's console is recorded (fixtures/recorded_runs/;
benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

from pathlib import Path

from explaining import explained
from helpers import torchrun_two_ranks
from recorded import recorded

SCRIPT = """
import torch
import lightning as L

fabric = L.Fabric(accelerator="cpu", devices=4, strategy="ddp")
fabric.launch()
model, optimizer = fabric.setup(torch.nn.Linear(8, 1), torch.optim.SGD(torch.nn.Linear(8, 1).parameters(), lr=0.1))
"""


def run(folder: Path) -> str:
    done = torchrun_two_ranks(folder, SCRIPT)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    return output


RECORDED_RUNS = {"u31_fabric_devices": run}


def test_fabric_given_more_devices_than_torchruns_processes_names_fabrics_devices():
    output = recorded("u31_fabric_devices")
    assert "does not match the world size (2)" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.launch_command", found.summary
    assert "Fabric(...)" in found.fix and "--nproc_per_node" in found.fix and "train.py:6" in found.fix
