"""`torchdoctor mpi` while it waits on hosts that do not answer: it says whom it waits for, and Ctrl-C stops it at
once, ending every ssh it started (session 40: Ctrl-C waited for each ssh to time out, up to 2 × --ssh-timeout
+ 1 s, as the threads that ran them never saw the interrupt)."""

import os
import stat
import sys

from helpers import interrupted_once_hanging

from torchdoctor.mpi.checks import check_ssh
from torchdoctor.mpi.hostfile import parse_hostfile
from torchdoctor.runner import run_command

# The host is the last argument but one (ssh ... HOST true); a host named hang* never answers.
FAKE_SSH = """#!/bin/sh
for last; do :; done
eval host=\\${$(($# - 1))}
case "$host" in
  hang*) echo $$ >> "$FAKE_PIDS"; touch "$FAKE_HANGING"; exec /bin/sleep 600;;
esac
exit 0
"""
FAKE_MPIRUN = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "mpirun (Open MPI) 4.1.4"; exit 0; fi
hostname
"""


def _bin(tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, text in (("ssh", FAKE_SSH), ("mpirun", FAKE_MPIRUN)):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755 | stat.S_IXUSR)
    return folder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_status_says_which_hosts_ssh_still_waits_for(tmp_path):
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("good1 slots=1\ngood2 slots=1\n")
    env = {
        "PATH": str(_bin(tmp_path)),
        "FAKE_PIDS": str(tmp_path / "pids"),
        "FAKE_HANGING": str(tmp_path / "h"),
    }
    heard: list[str] = []
    finding = check_ssh(
        parse_hostfile(hosts),
        lambda args, timeout: run_command(args, timeout, env=env),
        names_of_this_host={"localhost"},
        connect_timeout=3,
        say=heard.append,
    )
    assert finding.status == "ok"
    assert heard[0] == "ssh: waiting for good1, good2 (2 of 2; at most 7s)"
    assert heard[-1] == "ssh: all 2 host(s) answered"


def test_ctrl_c_while_ssh_waits_stops_at_once_and_ends_every_ssh(tmp_path):
    (tmp_path / "hosts.txt").write_text("hang1 slots=1\nhang2 slots=1\n")
    pids = tmp_path / "pids"
    env = {
        **os.environ,
        "PATH": f"{_bin(tmp_path)}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "FAKE_PIDS": str(pids),
        "FAKE_HANGING": str(tmp_path / "hanging"),
    }
    # ssh would be given 2 × 3600 + 1 s: stopping before the helper's 60 s means Ctrl-C ended it
    command = [sys.executable, "-m", "torchdoctor", "mpi", "--hostfile", "hosts.txt", "--ssh-timeout", "3600"]
    status, output = interrupted_once_hanging(command, tmp_path, env)
    assert status == 130, output
    assert output.strip().splitlines()[-1] == "torchdoctor: interrupted" and "Traceback" not in output
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 2 and not any(_alive(pid) for pid in started), "an ssh outlived Ctrl-C"
