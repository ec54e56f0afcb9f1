"""A node alone at a c10d rendezvous of several nodes says, while it waits, how many of them have come (session
41: the line said only how many it waited for, so a user could not tell one node missing from all of them).
The count is the rendezvous's own, read by torchrun's agent from its state in the store."""

import os
import re
import subprocess
import sys

from helpers import free_port


def test_a_node_alone_at_a_c10d_rendezvous_says_how_many_nodes_have_come(tmp_path):
    (tmp_path / "train.py").write_text("print('never runs')\n")
    port = free_port()
    command = [sys.executable, "-m", "torchdoctor", "launch", "--nnodes", "3", "--rdzv-backend", "c10d"]
    command += ["--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "u11", "--watchdog", "8", "train.py"]
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    said = [line for line in result.stderr.splitlines() if line.startswith("torchdoctor: ")]
    waiting = rf"torchdoctor: this node waits at the c10d rendezvous 127\.0\.0\.1:{port} for 3 nodes in all, "
    assert re.fullmatch(waiting + r"1 of 3 come so far: \d+ s of 8", said[0]), result.stderr
    assert result.returncode != 0
