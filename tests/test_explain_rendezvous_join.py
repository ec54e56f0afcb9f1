"""torchrun --nnodes 2 started on one machine only: the c10d rendezvous raises a bare RendezvousTimeoutError once
its join timeout passes (torch/distributed/elastic/rendezvous/dynamic_rendezvous.py). Found by running pytorch/
examples' DDP tutorial so; explain said only "the rendezvous failed". Read from a real torchrun, its console
recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again), and as printed."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

from explaining import explained
from helpers import TORCHRUN, free_port
from recorded import recorded

from torchdoctor.explain.diagnose import explain

BARE = "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"


def run(folder: Path) -> str:
    script = folder / "train.py"
    script.write_text("print('never reached')\n")
    port = free_port()
    done = subprocess.run(
        [TORCHRUN, "--nnodes", "2", "--nproc_per_node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
         f"127.0.0.1:{port}", "--rdzv-conf", "join_timeout=3", str(script)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode != 0, done.stderr[-2000:]
    return done.stderr  # what the test read: torchrun's stderr, without the script's stdout


RECORDED_RUNS = {"rendezvous_join_nnodes_2": run}


def test_nnodes_2_on_one_machine_reads_as_the_other_nodes_never_joining():
    stderr = recorded("rendezvous_join_nnodes_2")
    assert "RendezvousTimeoutError" in stderr, stderr[-2000:]
    found = explain(["-"], stdin=io.BytesIO(stderr.encode()))[0]
    assert found.id == "log.rendezvous_or_port", (found.summary, stderr[-2000:])
    assert "fewer nodes than --nnodes" in found.summary and "--nnodes 1" in found.fix


def test_the_bare_timeout_as_printed_names_the_join_and_the_one_machine_fix():
    found = explained(BARE)
    assert found.id == "log.rendezvous_or_port" and found.details["confidence"] == "likely"
    assert "join timeout" in found.summary and "--standalone" in found.fix


def test_a_rendezvous_timeout_with_a_message_of_its_own_is_not_read_as_the_join():
    # etcd's and other handlers raise it with words of their own: not the c10d join's bare raise
    found = explained("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError: Rendezvous timeout\n")
    assert found.id == "log.rendezvous_or_port" and "fewer nodes than --nnodes" not in found.summary
