"""Lightning Fabric's image_classifier example (examples/fabric/image_classifier/train_fabric.py) with the
options `fabric run` would give written into Fabric(...) and run under torchrun, each read from a real process:

- without fabric.launch(), Fabric's "To use Fabric with more than one device, you must call `.launch()`" was not
  recognised;
- fabric.save under `if fabric.global_rank == 0:` leaves rank 0 in Fabric's barrier: the line was named, but not
  that fabric.save is made on every rank.

Their consoles are recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs them again).
"""

import io
from pathlib import Path

from explaining import explained
from helpers import torchrun_two_ranks
from rank_runner import run_script
from recorded import recorded

from torchdoctor.explain.diagnose import explain

NOT_LAUNCHED = """
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
model = fabric.setup(torch.nn.Linear(4, 2))
"""

SAVED_ON_RANK_0 = """
import os
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
if fabric.global_rank == 0:
    fabric.save(os.path.join(os.path.dirname(__file__), "ckpt.pt"), {"model": model})
"""


def run_not_launched(folder: Path) -> str:
    done = run_script(["-c", NOT_LAUNCHED], timeout=120)
    assert done.returncode != 0, done.stdout + done.stderr
    return done.stderr  # what the test read: the traceback, without the script's stdout


def run_saved_on_rank_0(folder: Path) -> str:
    done = torchrun_two_ranks(folder, SAVED_ON_RANK_0)
    assert done.returncode != 0, done.stdout + done.stderr
    return done.stdout + done.stderr


RECORDED_RUNS = {
    "u27_fabric_not_launched": run_not_launched,
    "u27_fabric_save_on_rank_0": run_saved_on_rank_0,
}


def test_fabric_set_up_on_two_devices_without_launch_says_to_call_fabric_launch():
    stderr = recorded("u27_fabric_not_launched")
    found = explain(["-"], stdin=io.BytesIO(stderr.encode()))[0]
    assert found.id == "log.launch_command", (found.summary, stderr[-2000:])
    assert "without fabric.launch()" in found.summary, found.summary
    assert "fabric.launch()" in found.fix and "fabric run --accelerator" in found.fix, found.fix


def test_fabric_refusing_a_second_launch_under_its_cli_is_not_a_missing_launch():
    # near miss: the same module's other launch error, raised by a launch() call under `fabric run`
    line = (
        "RuntimeError: This script was launched through the CLI, and processes have already been created. "
        "Calling  `.launch()` again is not allowed.\n"
    )
    assert "without fabric.launch()" not in explained(line).summary


def test_fabric_save_on_rank_0_only_says_fabric_save_is_made_on_every_rank():
    output = recorded("u27_fabric_save_on_rank_0")
    found = explain(["-"], stdin=io.BytesIO(output.encode()))[0]
    assert found.id == "log.peer_closed", (found.summary, output[-2000:])
    assert "fabric.save(" in found.summary, found.summary
    assert "fabric.save(...) and trainer.save_checkpoint(...)" in found.fix, found.fix
