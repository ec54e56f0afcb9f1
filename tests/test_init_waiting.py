"""A rank started by hand waits in init_process_group for ranks that never come: in debug mode the wait is named,
bounded by TORCHDOCTOR_DEBUG_TIMEOUT and stopped by Ctrl-C (torch alone waits 30 minutes, silent and deaf to it)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from helpers import free_port
from rank_runner import ctrl_c_as_at_a_terminal

from torchdoctor.distributed.joining import started_by_hand

SRC = str(Path(__file__).resolve().parents[1] / "src")

TRAIN = textwrap.dedent(
    """
    import torch
    import torch.distributed as dist
    import torchdoctor.distributed.debug

    torchdoctor.distributed.debug.enable()
    dist.init_process_group("gloo")
    total = torch.ones(1)
    dist.all_reduce(total)
    print("rank", dist.get_rank(), "sum", total.item(), flush=True)
    dist.destroy_process_group()
    """
)


def start(script, rank, port, **env):
    variables = dict(
        os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    variables.update(env, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    variables.pop("TORCHELASTIC_RUN_ID", None)
    return subprocess.Popen(
        [sys.executable, str(script)],
        env=variables,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_as_at_a_terminal,  # a suite run from a background job hands its children SIGINT ignored
    )


def test_a_rank_whose_peer_never_comes_names_it_and_gives_up_at_the_debug_timeout(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    port = free_port()
    process = start(script, 0, port, TORCHDOCTOR_DEBUG_TIMEOUT="7")
    try:
        _, stderr = process.communicate(timeout=90)  # torch alone: 30 minutes
    finally:
        process.kill()
    assert process.returncode == 1, stderr
    waiting = f"rank 0 of 2 waited 5 s of 7 in init_process_group for rank 1 at 127.0.0.1:{port}"
    assert f"torchdoctor: {waiting} (MASTER_ADDR:MASTER_PORT; TORCHDOCTOR_DEBUG_TIMEOUT=7)\n" in stderr
    assert "torchdoctor.distributed.DistributedOperationException: rank 0 of 2 waited 7 s of 7" in stderr
    assert "none came: start every rank, 0 to 1, each with its own RANK" in stderr
    assert "torchrun --nproc-per-node 2" in stderr
    frames = [line for line in stderr.splitlines() if line.startswith("  File ")]
    assert frames and all(str(script) in line for line in frames), stderr  # ends at the user's line


def test_ctrl_c_stops_the_wait(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    process = start(script, 0, free_port(), TORCHDOCTOR_DEBUG_TIMEOUT="600")
    try:
        said = ""
        deadline = time.monotonic() + 60
        while "waited 5 s of 600" not in said and time.monotonic() < deadline:
            said += process.stderr.readline()
        assert "waited 5 s of 600" in said, said
        signals = _signal_state(process.pid)  # said on failure: a rank that ignores or blocks Ctrl-C
        process.send_signal(signal.SIGINT)
        try:
            _, rest = process.communicate(timeout=20)  # torch alone: no effect at all
        except subprocess.TimeoutExpired:
            rest = f"still running 20 s after SIGINT; its signals then: {signals}"
    finally:
        process.kill()
    assert process.returncode in (1, -signal.SIGINT) and "KeyboardInterrupt" in rest, rest


def _signal_state(pid):
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    variables = sorted(
        name for name in os.environ if name.startswith(("TORCH", "PYTHON", "OMP", "NCCL", "GLOO"))
    )
    return [line for line in status if line.startswith("Sig")] + [f"environment: {variables}"]


def test_two_ranks_started_by_hand_a_few_seconds_apart_meet_and_reduce(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    port = free_port()
    first = start(script, 0, port, TORCHDOCTOR_DEBUG_TIMEOUT="60")
    time.sleep(3)
    second = start(script, 1, port, TORCHDOCTOR_DEBUG_TIMEOUT="60")
    try:
        out0, err0 = first.communicate(timeout=90)
        out1, err1 = second.communicate(timeout=90)
    finally:
        first.kill()
        second.kill()
    assert (first.returncode, second.returncode) == (0, 0), err0 + err1
    assert out0 == "rank 0 sum 2.0\n" and out1 == "rank 1 sum 2.0\n"


def test_only_a_rendezvous_through_master_addr_without_a_launcher_is_waited_for_aloud():
    by_hand = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    assert started_by_hand({}, ("gloo",), by_hand)
    assert started_by_hand({"init_method": "env://"}, (), by_hand)
    assert not started_by_hand({}, ("gloo",), {**by_hand, "TORCHELASTIC_RUN_ID": "x"})  # torchrun's agent
    assert not started_by_hand({"init_method": "tcp://127.0.0.1:29500"}, (), by_hand)
    assert not started_by_hand({"store": object()}, (), by_hand)
    assert not started_by_hand({}, (), {**by_hand, "WORLD_SIZE": "1"})
    assert not started_by_hand({"world_size": 1}, (), by_hand)
