"""mp.spawn handed a lambda: the traceback runs through multiprocessing's pickling of the new process
(reduction.py's dump), yet the finding offered "or torch.save of a model or checkpoint that holds the lambda" beside
it (left by session 30; checked for session 31). Read from a real mp.spawn, its console recorded
(fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from explaining import explained
from recorded import recorded

SCRIPT = """
import os
import torch, torch.distributed as dist, torch.multiprocessing as mp

def run(rank, world_size, transform):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29555"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    dist.all_reduce(transform(torch.ones(2)))

if __name__ == "__main__":
    mp.spawn(run, args=(2, lambda t: t * 2), nprocs=2)
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


RECORDED_RUNS = {"u31_spawn_no_torch_save": run}


def test_a_lambda_handed_to_mp_spawn_is_not_offered_as_torch_saves():
    stderr = recorded("u31_spawn_no_torch_save")
    assert "reduction.py" in stderr, stderr[-3000:]
    found = explained(stderr)
    assert found.id == "log.spawn_pickling", found.summary
    assert "torch.save" not in found.summary, found.summary
    assert not any("checkpoint" in a for a in found.details.get("alternatives", [])), found.details
    assert "If it is not that" not in found.fix and "train.py:" in found.fix
