"""torch.multiprocessing.spawn starting fewer processes than the world_size init_process_group waits for: found
with pytorch/examples' imagenet/main.py, whose --multiprocessing-distributed --world-size 2 on a machine where it
counts one device spawns 1 process for a world of 2 (it waits the 30 min default, then TCPStore's "Timed out after
N seconds waiting for clients. 1/2 clients joined."). explain said the others never started or cannot reach
MASTER_ADDR, with torchrun's --rdzv-endpoint advice; the log's ProcessRaisedException says mp.spawn started them.
Read from a real process (the timeout shortened), its console recorded (fixtures/recorded_runs/;
benchmarks/recorded_runs.py runs it again), and as printed."""

from __future__ import annotations

from pathlib import Path

from explaining import explained
from helpers import free_port
from rank_runner import run_script
from recorded import recorded

SCRIPT = """
from datetime import timedelta
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, world_size):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:{port}", world_size=world_size, rank=gpu,
                            timeout=timedelta(seconds=3))


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=1, args=(2,))
"""


def run(folder: Path) -> str:
    script = folder / "train.py"
    script.write_text(SCRIPT.replace("{port}", str(free_port())))
    done = run_script([str(script)], timeout=120)
    assert done.returncode != 0 and "1/2 clients joined" in done.stderr, done.stderr[-2000:]
    return done.stderr  # what the test reads: the script prints nothing else


RECORDED_RUNS = {"spawn_world_size": run}


def test_spawn_of_fewer_processes_than_the_world_says_nprocs():
    stderr = recorded("spawn_world_size")
    assert "1/2 clients joined" in stderr, stderr[-2000:]
    found = explained(stderr)
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "spawn started fewer processes than world_size" in found.summary
    assert "nprocs must equal world_size" in found.fix


JOINED = "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.\n"


def test_the_store_timeout_without_spawn_is_not_said_to_be_spawns():
    found = explained(JOINED)
    assert found.id == "log.rendezvous_or_port" and "spawn" not in found.summary and "nprocs" not in found.fix
