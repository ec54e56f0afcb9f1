"""mp.spawn handed a lambda: the fix named torchrun, ddp instead of ddp_spawn and making the object picklable, but
not the usual way out for a model or a dataset, saving it and handing the processes a path (left open by
session 29; checked for session 30). Read from a real mp.spawn, its console recorded (fixtures/recorded_runs/;
benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from explaining import explained
from recorded import recorded

SCRIPT = """
import torch, torch.multiprocessing as mp

def train(rank, world, transform):
    transform(torch.ones(2))

if __name__ == "__main__":
    mp.spawn(train, args=(2, lambda x: x * 2), nprocs=2)
"""


def run(folder: Path) -> str:
    path = folder / "train.py"
    path.write_text(SCRIPT)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120, env=environ, cwd=folder
    )
    assert done.returncode != 0, done.stderr[-3000:]
    return done.stderr  # what the test read: the traceback, without the script's stdout


RECORDED_RUNS = {"u30_spawn_path": run}


def test_a_lambda_handed_to_mp_spawn_offers_saving_and_passing_a_path():
    stderr = recorded("u30_spawn_path")
    assert "Can't pickle" in stderr, stderr[-3000:]
    found = explained(stderr)
    assert found.id == "log.spawn_pickling", found.summary
    assert "torch.save(model.state_dict(), path)" in found.fix and "torchrun" in found.fix
