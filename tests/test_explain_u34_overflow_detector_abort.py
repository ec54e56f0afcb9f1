"""The overflow detector stopping a DDP run on one rank, read back by `explain` (session 34): transformers'
Trainer with debug="underflow_overflow" on a tiny config-built BERT whose rank 1 embeddings went inf at its third
step (2 gloo ranks under torchrun) led with "rank 1 failed first: ValueError: DebugUnderflowOverflow: inf/nan
detected ... torchdoctor knows no fix for this error", the NaN verdict second; with torchdoctor's own detector the
NaN verdict led but asked the user to run the detector that had just named the module. The runs here are the same
faults on a plain DDP model: transformers' detector with a module that overflows on rank 1, torchdoctor's with an
inf in rank 1's batch. Their consoles are recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs them again)."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest
import torch
import torch.nn as nn
from explaining import explained
from helpers import TORCHRUN, VENV_TORCHRUN, torchrun_two_ranks
from recorded import recorded

from torchdoctor import DebugUnderflowOverflow
from torchdoctor.numerics.detector import InfNanDetected

LOOP = """
import torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from {package} import DebugUnderflowOverflow

dist.init_process_group("gloo")
rank = dist.get_rank()


class Blowup(nn.Module):
    def forward(self, x):
        return x * 1e39 if rank == 1 and self.training and torch.is_grad_enabled() and step == 2 else x


model = nn.Sequential(nn.Linear(8, 16), {middle}, nn.Linear(16, 1))
detector = DebugUnderflowOverflow(model)
ddp = DDP(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
for step in range(4):
    batch = torch.randn(4, 8)
    if {bad_batch} and rank == 1 and step == 2:
        batch[0, 0] = float("inf")  # one bad sample in rank 1's third batch
    loss = ddp(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
dist.destroy_process_group()
"""


def plain_torchrun(folder: Path, script: str) -> subprocess.CompletedProcess:
    """``script`` run on 2 ranks by torchrun as a user types it, without ``--tee``: the detector's frames, which
    it prints to stdout, come without a ``[rankN]:`` prefix, only the traceback on stderr has one."""
    path = folder / "train.py"
    path.write_text(script)
    command = [TORCHRUN, "--standalone", "--nproc_per_node", "2", str(path)]
    if VENV_TORCHRUN is not None:
        from rank_runner import run_script

        return run_script(command, timeout=120, env={"OMP_NUM_THREADS": "1"})
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )


def run_transformers_detector(folder: Path) -> str:
    done = plain_torchrun(
        folder, LOOP.format(package="transformers.debug_utils", middle="Blowup()", bad_batch=False)
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    return output


def run_torchdoctors_detector(folder: Path) -> str:
    done = torchrun_two_ranks(folder, LOOP.format(package="torchdoctor", middle="nn.ReLU()", bad_batch=True))
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    return output


RECORDED_RUNS = {
    "u34_transformers_detector_abort": run_transformers_detector,
    "u34_torchdoctor_detector_abort": run_torchdoctors_detector,
}


def test_transformers_detector_stopping_rank_1_leads_with_the_overflow_on_rank_1_not_an_unknown_error():
    output = recorded("u34_transformers_detector_abort")
    assert "DebugUnderflowOverflow: inf/nan detected" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.nan_overflow", found.summary
    assert "on rank 1;" in found.summary and "the overflow detector" in found.summary, found.summary
    assert found.fix.startswith(
        "The detector stopped at the module of the last frame it printed above the error: the first module"
    ), found.fix


def test_torchdoctors_detector_stopping_on_an_inf_in_the_batch_names_its_module_and_the_batch():
    output = recorded("u34_torchdoctor_detector_abort")
    assert "First inf/nan in forward of 0 (Linear)" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.nan_overflow", found.summary
    assert "on rank 1;" in found.summary and "in the forward of 0 (Linear)" in found.summary, found.summary
    assert found.fix.startswith(
        "The detector stopped at 0 (Linear), named in its error, and its input[0] already held inf/nan"
    ), found.fix
    assert "Check the batch on that rank" in found.fix


def test_the_recorded_error_of_torchdoctors_detector_is_the_one_it_raises_now():
    """The recording above holds torchdoctor's own detector's words: they must be the ones it raises today (the
    same model and batches in this process), or the test above reads an error no run prints any more."""
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    detector = DebugUnderflowOverflow(model, file=io.StringIO())
    with pytest.raises(InfNanDetected) as caught:
        for step in range(3):
            batch = torch.randn(4, 8)
            if step == 2:
                batch[0, 0] = float("inf")
            model(batch).pow(2).mean().backward()
    detector.remove()
    # the message's lines (the error, then its advice) each carry the rank's prefix in the console
    lines = f"{type(caught.value).__name__}: {caught.value}".splitlines()
    assert len(lines) == 3 and lines[1].startswith("0 was handed inf/nan: input[0] (float32)"), lines
    console = recorded("u34_torchdoctor_detector_abort")
    assert f".{lines[0]}\n" in console and all(f"[rank1]: {line}\n" in console for line in lines[1:]), lines
