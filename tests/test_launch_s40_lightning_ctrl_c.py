"""Where a rank was at Ctrl-C under Lightning: its training step, not its DataLoader workers' wait or its shutdown.

Lightning catches KeyboardInterrupt itself ("Detected KeyboardInterrupt, attempting graceful shutdown ...") and
leaves by sys.exit(1), so under `torchdoctor launch` a rank never says where it was: the launcher reads the stacks
faulthandler wrote to its note at SIGINT (launch/stopped_places.py). The rank's forked DataLoader workers inherit
that handler and that note and write their stacks there too, torch's worker loop under the rank's `trainer.fit`;
when theirs came last the launch said "rank 0 was interrupted at train.py:27 in <module>: trainer.fit(...)
(blocked in notify, ...)" (session 39 saw "(blocked in wait, ...)"), not the training step."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rank_runner import ctrl_c_as_at_a_terminal

from torchdoctor.launch.stopped_places import note_where_stopped, places_of_the_others

RECORDED = Path(__file__).parent / "fixtures" / "stopped_places" / "lightning_workers"

SCRIPT = """
import sys
import time

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from torchdoctor.launch.stopped_places import note_where_stopped

note_where_stopped(sys.argv[1], "0")


class Slow(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        if batch_idx == 3:
            open("hanging", "w").close()
            time.sleep(600)  # the step that hangs
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
trainer = L.Trainer(max_epochs=1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(Slow(), DataLoader(data, batch_size=8, num_workers=2))
"""


def test_a_recorded_note_with_a_dataloader_workers_stack_after_the_ranks_names_the_training_step():
    (place,) = places_of_the_others(RECORDED)
    assert place.startswith(
        "torchdoctor: rank 0 was interrupted at /tmp/small4/pl/train_pl.py:17 in training_step"
    )
    assert "blocked in" not in place and "<module>" not in place, place


def test_a_live_lightning_step_stopped_with_its_workers_is_named_not_the_workers_wait(tmp_path):
    # the rank first, then its workers while Lightning's shutdown has not yet stopped them: their stacks come last
    (tmp_path / "train.py").write_text(SCRIPT)
    notes = tmp_path / "notes"
    notes.mkdir()
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1"}
    # Ctrl-C as at a terminal: a suite run from a background job hands its children SIGINT ignored
    run = subprocess.Popen(
        [sys.executable, "train.py", str(notes)], cwd=tmp_path, env=environ, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=ctrl_c_as_at_a_terminal,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "hanging").exists():
            assert run.poll() is None and time.monotonic() < deadline, run.stderr.read().decode()
            time.sleep(0.2)
        workers = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True).stdout.split()
        run.send_signal(signal.SIGINT)
        time.sleep(0.05)
        for pid in workers:
            try:
                os.kill(int(pid), signal.SIGINT)
            except ProcessLookupError:  # gone already: its stack is not in the note
                pass
        run.wait(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert run.returncode == 1  # Lightning's own sys.exit(1) after its graceful shutdown
    (place,) = places_of_the_others(notes)
    assert place.startswith(f"torchdoctor: rank 0 was interrupted at {tmp_path / 'train.py'}:")
    assert "in training_step: time.sleep(600)" in place, place


def test_note_where_stopped_without_a_folder_writes_nothing(tmp_path):
    note_where_stopped(None, "0")
    assert places_of_the_others(tmp_path) == []
