"""A world size larger than the processes started: gloo's rendezvous in init_process_group waits for the address of
a rank nobody runs and times out in the store ("wait timeout after 30000ms, keys: /default_pg/0//cpu//0/2", torch
2.4+'s TCPStore doWait; the key ends in the rank waited for). Found with pytorch/examples' DDP tutorial
(multigpu_torchrun.py) under torchrun --nproc_per_node 2, init_process_group given world_size=4 by hand: explain
said the key 'never came, or the store's host stopped answering' and to check --rdzv-endpoint and MASTER_ADDR, never
that rank 2 did not exist. Read from real processes, one log per rank as torchrun's --log-dir keeps them, recorded
(fixtures/recorded_runs/; benchmarks/recorded_runs.py runs them again), and as printed."""

import os
import socket
from pathlib import Path

from explaining import explained
from rank_runner import start_script
from recorded import recorded_folder

from torchdoctor.explain.diagnose import explain

# two ranks of a world said to be three, with a store of their own (torchrun's agent store is one too)
SCRIPT = """\
import sys
from datetime import timedelta

import torch.distributed as dist

rank, port = int(sys.argv[1]), int(sys.argv[2])
store = dist.TCPStore("127.0.0.1", port, is_master=rank == 0, wait_for_workers=False)
dist.init_process_group("gloo", store=store, rank=rank, world_size=3, timeout=timedelta(seconds=3))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(folder: Path) -> Path:
    port = str(_free_port())
    logs = []
    for rank in (0, 1):
        rank_folder = folder / "logs" / "attempt_0" / str(rank)
        rank_folder.mkdir(parents=True)
        logs.append((rank_folder / "stderr.log").open("w"))
    with open(os.devnull, "w") as devnull:
        ranks = [start_script(["-c", SCRIPT, str(rank), port], devnull, log) for rank, log in enumerate(logs)]
        assert [p.wait(timeout=120) for p in ranks] == [1, 1]
    for log in logs:
        log.close()
    return folder / "logs"  # one stderr.log a rank, as torchrun's --log-dir keeps them


RECORDED_RUNS = {"u28_world_size_of_three": run}


def test_two_ranks_of_a_world_of_three_say_rank_2_is_not_in_the_run():
    logs = recorded_folder("u28_world_size_of_three")
    found = explain([str(logs)])[0]
    stderr = (logs / "attempt_0" / "0" / "stderr.log").read_text()
    assert found.id == "log.rendezvous_or_port", (found.summary, stderr[-2000:])
    assert "waited for rank 2's address" in found.summary and "no rank 2 (only ranks 0, 1)" in found.summary
    assert "world_size= passed to init_process_group by hand" in found.fix
    assert found.details["confidence"] == "likely"


WAITED = (
    '[rank0]:   File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line '
    "2169, in _new_process_group_helper\n"
    "[rank0]:     backend_class = ProcessGroupGloo(\n"
    "[rank0]: torch.distributed.DistStoreError: wait timeout after 30000ms, keys: /default_pg/0//cpu//0/{peer}\n"
    "[rank1]: torch.distributed.DistStoreError: wait timeout after 30000ms, keys: /default_pg/0//cpu//0/{peer}\n"
)


def test_the_wait_as_printed_names_the_rank_missing_from_the_log():
    found = explained(WAITED.format(peer=2))
    assert found.id == "log.rendezvous_or_port" and "no rank 2 (only ranks 0, 1)" in found.summary


def test_a_wait_for_a_rank_the_log_shows_is_not_said_to_be_missing():
    # rank 1 is in the run: it failed or hung before its init_process_group, the reading stays the store's wait
    found = explained(WAITED.format(peer=1))
    assert found.id == "log.rendezvous_or_port" and "waited for rank" not in found.summary


def test_a_store_wait_for_another_key_is_not_a_missing_rank():
    # a barrier's or NCCL's id key names no gloo peer
    found = explained(
        "[rank0]: torch.distributed.DistStoreError: wait timeout after 30000ms, keys: /default_pg/0//cuda//0\n"
        "[rank1]: torch.distributed.DistStoreError: wait timeout after 30000ms, keys: store_based_barrier_key:1\n"
    )
    assert found.id == "log.rendezvous_or_port" and "waited for rank" not in found.summary
