"""A node of a several-node launch waiting at the rendezvous says so while it waits, naming whom it waits for and
for how long (session 40: it was silent until torch gave up, 600 s without --watchdog)."""

import os
import re
import subprocess
import sys

from helpers import free_port

from torchdoctor.launch.rendezvous_wait import waiting_line


def test_the_line_names_the_nodes_waited_for_and_the_time_left():
    assert waiting_line(4, 0, "node01:29500", 5.2, 600) == (
        "torchdoctor: node rank 0 of 4 waits at the rendezvous node01:29500 for the other nodes (node ranks 1-3): "
        "5 s of 600\n"
    )
    assert waiting_line(2, None, "node01:29400", 35, 300) == (
        "torchdoctor: this node waits at the c10d rendezvous node01:29400 for 2 nodes in all: 35 s of 300\n"
    )
    assert waiting_line(3, None, "node01:29400", 35, 300, joined=2) == (
        "torchdoctor: this node waits at the c10d rendezvous node01:29400 for 3 nodes in all, 2 of 3 come so "
        "far: 35 s of 300\n"
    )


def test_a_node_alone_at_the_rendezvous_says_whom_it_waits_for_before_giving_up(tmp_path):
    (tmp_path / "train.py").write_text("print('never runs')\n")
    port = free_port()
    command = [sys.executable, "-m", "torchdoctor", "launch", "--nnodes", "2", "--node-rank", "0"]
    command += ["--master-addr", "127.0.0.1", "--master-port", str(port), "--watchdog", "8", "train.py"]
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    said = [line for line in result.stderr.splitlines() if line.startswith("torchdoctor: ")]
    waiting = rf"torchdoctor: node rank 0 of 2 waits at the rendezvous 127.0.0.1:{port} for the other node "
    assert re.fullmatch(waiting + r"\(node rank 1\): \d+ s of 8", said[0]), result.stderr
    assert "none came." in said[-1] and result.returncode != 0


def test_nodes_that_meet_at_once_say_nothing_of_waiting(tmp_path):
    """The line is said only at the rendezvous: importing torch and starting the workers, slow on a loaded
    machine (5 s and more here), are not a wait for another node."""
    (tmp_path / "train.py").write_text("print('ran')\n")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    nodes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "torchdoctor",
                "launch",
                "--nnodes",
                "2",
                "--node-rank",
                str(rank),
                "--master-addr",
                "127.0.0.1",
                "--master-port",
                str(port),
                "train.py",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=tmp_path,
            env=env,
        )  # fmt: skip
        for rank in (0, 1)
    ]
    outputs = [node.communicate(timeout=120)[0] for node in nodes]
    assert all(node.returncode == 0 for node in nodes), outputs
    assert all("ran" in out and "waits at the rendezvous" not in out for out in outputs), outputs
