"""pytorch/examples' DDP tutorial for one machine (distributed/ddp-tutorial-series/multigpu.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) sets MASTER_PORT to 12355 itself in ddp_setup before
init_process_group under mp.spawn; started while another job holds that port, explain said to pick another with
torchrun --master_port or MASTER_PORT=..., which the script overwrites (found for session 30). Below, its ddp_setup
on 2 CPU ranks, the port (the tutorial's own, 12355) held while it starts; read from a real mp.spawn, its
console recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from explaining import explained
from recorded import recorded

SCRIPT = """
import os, torch.multiprocessing as mp
from torch.distributed import init_process_group, destroy_process_group

def ddp_setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "{port}"
    init_process_group(backend="gloo", rank=rank, world_size=world_size)

def main(rank, world_size):
    ddp_setup(rank, world_size)
    destroy_process_group()

if __name__ == "__main__":
    mp.spawn(main, args=(2,), nprocs=2)
"""


PORT = 12355  # the tutorial's; a recording that names no random port lets the test name it


def run(folder: Path) -> str:
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("", PORT))  # OSError "Address already in use": something else holds it; record later
        holder.listen(4)
        (folder / "multigpu.py").write_text(SCRIPT.replace("{port}", str(PORT)))
        environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(
            [sys.executable, "multigpu.py"],
            capture_output=True,
            text=True,
            timeout=120,
            env=environ,
            cwd=folder,
        )
    assert done.returncode != 0, done.stderr[-3000:]
    return done.stderr  # what the test read: mp.spawn's traceback, without the script's stdout


RECORDED_RUNS = {"u30_spawn_port": run}


def test_a_port_in_use_under_mp_spawn_says_the_script_sets_it():
    stderr = recorded("u30_spawn_port")
    assert "EADDRINUSE" in stderr, stderr[-3000:]
    found = explained(stderr)
    assert found.id == "log.rendezvous_or_port" and f"port {PORT} is taken" in found.summary, found.summary
    assert (
        f"os.environ['MASTER_PORT'] = '{PORT}'" in found.fix
        and "os.environ.setdefault('MASTER_PORT'" in found.fix
    )
