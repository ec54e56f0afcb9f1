"""mp.spawn handed a lambda: the fix named torchrun, ddp instead of ddp_spawn and making the object picklable, but
not the usual way out for a model or a dataset, saving it and handing the processes a path (left open by
session 29; checked for session 30). Read from a real mp.spawn on this torch."""

from __future__ import annotations

import os
import subprocess
import sys

from explaining import explained

SCRIPT = """
import torch, torch.multiprocessing as mp

def train(rank, world, transform):
    transform(torch.ones(2))

if __name__ == "__main__":
    mp.spawn(train, args=(2, lambda x: x * 2), nprocs=2)
"""


def test_a_lambda_handed_to_mp_spawn_on_this_torch_offers_saving_and_passing_a_path(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120, env=environ, cwd=tmp_path
    )
    assert done.returncode != 0 and "Can't pickle" in done.stderr, done.stderr[-3000:]
    found = explained(done.stderr)
    assert found.id == "log.spawn_pickling", found.summary
    assert "torch.save(model.state_dict(), path)" in found.fix and "torchrun" in found.fix
