"""A rank started by hand (RANK=0 WORLD_SIZE=2 MASTER_ADDR=... MASTER_PORT=... python train.py) waits in
init_process_group for a rank nobody started: silent for the default timeout (30 minutes under gloo), deaf to
Ctrl-C, then TCPStore's "Timed out after N seconds waiting for clients. 1/2 clients joined." from the store its
own rank 0 hosts (torchrun's workers only connect to the agent's store, and never print it). Found with
pytorch/examples' DDP tutorial (multigpu_torchrun.py, on gloo): explain said the others never started or cannot
reach MASTER_ADDR, with torchrun's --rdzv-endpoint advice, not that the script ran without a launcher. With
torchdoctor's debug mode on, the wait raises torchdoctor's own "waited N s of T in init_process_group for rank 1",
which explain did not know at all ("torchdoctor knows no fix"). Read from real processes (the timeouts shortened;
the plain run's console recorded, fixtures/recorded_runs/, benchmarks/recorded_runs.py runs it again), and as
printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from explaining import explained
from helpers import free_port
from recorded import recorded

SCRIPT = """
from datetime import timedelta
import torch.distributed as dist
{debug}
dist.init_process_group("gloo", timeout=timedelta(seconds=3))
"""
DEBUG = "import torchdoctor.distributed.debug as debug\ndebug.enable(timeout=3)"


def _by_hand(folder: Path, debug: str) -> str:
    script = folder / "train.py"
    script.write_text(SCRIPT.format(debug=debug))
    environ = {
        **os.environ,
        "RANK": "0",
        "WORLD_SIZE": "2",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    for name in ("TORCHELASTIC_RUN_ID", "LOCAL_RANK", "TORCHDOCTOR_DEBUG_TIMEOUT"):
        environ.pop(name, None)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=environ
    )
    assert done.returncode != 0, done.stderr[-2000:]
    return done.stderr


def run(folder: Path) -> str:
    stderr = _by_hand(folder, "")
    assert "1/2 clients joined" in stderr, stderr[-2000:]
    return stderr  # what the test reads: the script prints nothing else


# the run with debug mode on stays live below: what it reads is torchdoctor's own message, which a recording would
# keep after debug mode's words changed
RECORDED_RUNS = {"u29_by_hand": run}


def test_rank_0_started_by_hand_for_a_world_of_2_says_no_launcher_started_the_others():
    stderr = recorded("u29_by_hand")
    assert "1/2 clients joined" in stderr, stderr[-2000:]
    found = explained(stderr)
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "this process hosts the store itself" in found.summary and "spawn" not in found.summary
    assert "every rank, 0 to 1, must be started" in found.fix and "torchrun --nproc-per-node 2" in found.fix
    assert "Ctrl-C does not stop it" in found.fix and "--rdzv-endpoint" not in found.fix
    assert found.details["confidence"] == "likely"


def test_debug_modes_wait_for_a_rank_started_by_hand_on_this_torch_is_read_as_the_rank_never_started(
    tmp_path,
):
    stderr = _by_hand(tmp_path, DEBUG)
    assert "in init_process_group for rank 1" in stderr, stderr[-2000:]
    found = explained(stderr)
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "rank 0 of 2, started without a launcher, waited in init_process_group for rank 1" in found.summary
    assert "torchrun --nproc-per-node 2" in found.fix
    # debug mode already bounded the wait and let Ctrl-C stop it: not told to turn it on
    assert "debug.enable()" not in found.fix


WAITED = (
    "torchdoctor.distributed.DistributedOperationException: rank 0 of 4 waited 7 s of 7 in init_process_group for "
    "ranks 1-3 at 10.0.0.5:29873 (MASTER_ADDR:MASTER_PORT; TORCHDOCTOR_DEBUG_TIMEOUT=7); none came: start every "
    "rank, 0 to 3, each with its own RANK and the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE=4, or let a "
    "launcher start them all: torchrun --nproc-per-node 4 SCRIPT\n"
)
STORE_FRAMES = (
    '  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/rendezvous.py", line 280, in '
    "_env_rendezvous_handler\n"
    "    store = _create_c10d_store(\n"
    '  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/rendezvous.py", line 199, in '
    "_create_c10d_store\n"
    "    return TCPStore(\n"
)
JOINED = "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/4 clients joined.\n"


def test_debug_modes_wait_as_printed_names_the_ranks_and_the_address():
    found = explained(WAITED)
    assert found.id == "log.rendezvous_or_port"
    assert "for ranks 1-3 at 10.0.0.5:29873" in found.summary and "every rank, 0 to 3" in found.fix


def test_the_store_hosted_by_the_script_as_printed_says_started_without_a_launcher():
    found = explained(STORE_FRAMES + JOINED)
    assert (
        "this process hosts the store itself" in found.summary and "torchrun --nproc-per-node 4" in found.fix
    )


def test_the_clients_line_without_the_scripts_store_frames_is_not_said_to_be_by_hand():
    # a paste of the message alone (an agent's store, another launcher): the reading stays the store's
    found = explained(JOINED)
    assert found.id == "log.rendezvous_or_port" and "hosts the store itself" not in found.summary
    assert "Started by hand" not in found.fix


def test_mp_spawns_processes_hosting_the_store_stay_read_as_spawn():
    spawned = "torch.multiprocessing.spawn.ProcessRaisedException: \n\n-- Process 0 terminated with the following error:\n"
    found = explained(spawned + "Traceback (most recent call last):\n" + STORE_FRAMES + JOINED)
    assert "spawn started fewer processes" in found.summary and "hosts the store itself" not in found.summary


def test_a_line_naming_master_addr_and_port_otherwise_is_not_debug_modes_wait():
    found = explained("ValueError: set MASTER_ADDR:MASTER_PORT (rank 0's host and port) before init\n")
    assert "started without a launcher" not in found.summary


# Lightning's bug_report_model.py given Trainer(accelerator="cpu", devices=2, num_nodes=2) on one machine (a 10 s
# timeout instead of the default 30 minutes): its launcher starts this machine's 2 processes for a world of 4, rank 0
# hosts the store and counts the clients; rank 1, started late, then cannot connect to it. As Lightning 2.6 and
# torch 2.13 printed it (frames shortened)
LIGHTNING = (
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
    "Traceback (most recent call last):\n"
    '  File "/home/me/bug_report_model.py", line 69, in run\n'
    "    trainer.fit(model, train_dataloaders=train_data, val_dataloaders=val_data)\n"
    + STORE_FRAMES
    + "torch.distributed.DistStoreError: Timed out after 11 seconds waiting for clients. 1/4 clients joined.\n"
    "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n"
    "[E1130 23:23:34.300292509 socket.cpp:1028] [c10d] The client socket has timed out after 10000ms while trying "
    "to connect to (127.0.0.1, 35553).\n"
    "torch.distributed.DistNetworkError: The client socket has timed out after 10000ms while trying to connect to "
    "(127.0.0.1, 35553).\n"
)


def test_lightnings_world_of_num_nodes_times_devices_on_one_machine_says_num_nodes_not_started_by_hand():
    found = explained(LIGHTNING)
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "only 1 of 4 processes reached the store" in found.summary
    assert "Lightning set up a world of 4 processes, Trainer's num_nodes x devices" in found.summary
    assert "num_nodes=1" in found.fix and "NODE_RANK" in found.fix and "Started by hand" not in found.fix


def test_a_client_that_cannot_connect_alone_is_still_the_store_it_cannot_reach():
    found = explained(LIGHTNING.split("Initializing distributed: GLOBAL_RANK: 1")[1])
    assert (
        found.id == "log.rendezvous_or_port"
        and "cannot reach the rendezvous store at 127.0.0.1:35553" in found.summary
    )
