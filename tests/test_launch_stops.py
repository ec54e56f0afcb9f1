"""A launch stopped while torchrun still waits at the rendezvous (a node that never comes): one line, no
traceback of torchrun's, nothing left running."""

import os
import signal
import subprocess
import sys
import time

import pytest
from test_launch import free_port, running


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except OSError:
                pass
    return found


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP, signal.SIGTERM])
def test_stopped_at_the_rendezvous_without_a_traceback(tmp_path, signum):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", "launch", "--nnodes", "2", "--node-rank", "0",
         "--master-addr", "127.0.0.1", "--master-port", str(free_port()), str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not children_of(launcher.pid):  # torchrun has started
            assert launcher.poll() is None and time.monotonic() < deadline, launcher.communicate()
            time.sleep(0.2)
        torchrun = children_of(launcher.pid)
        time.sleep(5)  # inside torch's rendezvous, waiting for node rank 1
        os.killpg(launcher.pid, signum)
        out, err = launcher.communicate(timeout=120)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 128 + signum, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert "never runs" not in out
    assert not [pid for pid in torchrun if running(pid)]
