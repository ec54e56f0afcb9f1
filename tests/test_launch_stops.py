"""A launch stopped while torchrun still waits at the rendezvous (a node that never comes): one line, no
traceback of torchrun's, nothing left running."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_launch import free_port, running

from torchdoctor.launch.orphans import OWNER_FILE, temporary_folder
from torchdoctor.process_state import started_at, stat_of


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


# Ctrl-C, for real: SIGHUP, SIGTERM and the launcher's other stop signals take the same handler and the
# same stop (test_launch.py's test_every_stop_signal_raises_stopped_and_says_its_name checks each, and its
# line, in-process; test_launch's real SIGHUP under the watchdog says "stopped by SIGHUP").
@pytest.mark.parametrize("signum", [signal.SIGINT])
def test_stopped_at_the_rendezvous_without_a_traceback(tmp_path, signum):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    port = free_port()
    launcher = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", "launch", "--nnodes", "2", "--node-rank", "0",
         "--master-addr", "127.0.0.1", "--master-port", str(port), str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        # inside torch's rendezvous, waiting for node rank 1: node 0's agent listens on the master port (the
        # job's store) once it has imported torch and is there; seen from the kernel's table, without a
        # connection the store would answer. (A fixed 5 s wait stood for it: ~2.5 s too long when idle.)
        while not listening(port):
            assert launcher.poll() is None and time.monotonic() < deadline, launcher.communicate()
            time.sleep(0.2)
        torchrun = children_of(launcher.pid)
        time.sleep(0.5)  # the agent goes on from binding the port to waiting for the other node
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


def listening(port: int) -> bool:
    """Whether a socket of this machine listens on TCP ``port`` (the kernel's tables, IPv4 and IPv6)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                return True
    return False


SLEEPER = """
import os, pathlib, sys, time
pathlib.Path(sys.argv[1], f"worker.{os.environ['RANK']}").write_text(str(os.getpid()))
time.sleep(600)
"""


def start_sleepers(tmp_path, *flags):
    """`torchdoctor launch` on 2 ranks that sleep; (launcher, torchrun pids, worker pids) once both sleep."""
    script = tmp_path / "train.py"
    script.write_text(SLEEPER)
    launcher = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", "launch", *flags, "--nproc-per-node", "2", str(script),
         str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # a launcher killed by SIGKILL cannot remove its folder
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("worker.*"))) < 2:
        assert launcher.poll() is None, launcher.returncode
        assert time.monotonic() < deadline, "the two workers did not start within 120 s"
        time.sleep(0.2)
    time.sleep(0.5)  # each pid is written before its sleep starts
    workers = [int(p.read_text()) for p in tmp_path.glob("worker.*")]
    return launcher, children_of(launcher.pid), workers


def wait_until_gone(pids, timeout=90.0):
    deadline = time.monotonic() + timeout
    while [pid for pid in pids if running(pid)] and time.monotonic() < deadline:
        time.sleep(0.2)
    return [pid for pid in pids if running(pid)]


@pytest.mark.timeout(360)  # waits up to 120 s for the workers to start, 90 s for them to end
@pytest.mark.parametrize("flags", [(), ("--watchdog", "60")], ids=["plain", "watchdog"])
def test_a_launcher_killed_with_sigkill_takes_torchrun_and_the_workers_along(tmp_path, flags):
    launcher, torchrun, workers = start_sleepers(tmp_path, *flags)
    try:
        assert len(torchrun) == 1 and all(running(pid) for pid in workers)
        launcher.kill()  # SIGKILL: no handler of ours runs
        launcher.wait(timeout=30)
        left = wait_until_gone(torchrun + workers)
    finally:
        for pid in torchrun + workers:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
    assert not left, f"still running after the launcher was killed: {left} (torchrun {torchrun})"
    # its temporary folder is left (nothing of it ran), and removed when the next launch makes its own
    prefix = "torchdoctor-launch-" if not flags else "torchdoctor-watchdog-"
    abandoned = list(tmp_path.glob(f"{prefix}*"))
    assert len(abandoned) == 1, abandoned
    if not flags:
        fresh = temporary_folder(prefix, tmp_path)
        assert list(tmp_path.glob(f"{prefix}*")) == [fresh]
        shutil.rmtree(fresh)
    else:  # a watchdog's folder is kept after a hang on purpose (its report names the stacks in it)
        shutil.rmtree(abandoned[0])


@pytest.mark.timeout(360)
def test_workers_end_when_torchrun_itself_is_killed_with_sigkill(tmp_path):
    launcher, torchrun, workers = start_sleepers(tmp_path)
    try:
        os.kill(torchrun[0], signal.SIGKILL)  # torch's agent gets no chance to stop its workers
        left = wait_until_gone(workers)
        launcher.wait(timeout=60)
    finally:
        for pid in workers:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
        if launcher.poll() is None:
            launcher.kill()
    assert not left, f"workers still running after torchrun was killed: {left}"


def test_a_new_temporary_folder_removes_only_those_whose_launcher_is_gone(tmp_path):
    gone = subprocess.Popen(["sleep", "0.3"])
    gone_mark = f"{gone.pid} {started_at(gone.pid)}"  # with its start time: a reused pid is another process
    gone.wait()
    marks = {"gone": gone_mark, "alive": f"{os.getpid()} {started_at()}", "mine": None}
    for name, mark in marks.items():
        folder = tmp_path / f"torchdoctor-launch-{name}"
        folder.mkdir()
        if mark is not None:
            (folder / OWNER_FILE).write_text(mark)
    (tmp_path / "torchdoctor-watchdog-gone").mkdir()
    (tmp_path / "torchdoctor-watchdog-gone" / OWNER_FILE).write_text(gone_mark)
    fresh = temporary_folder("torchdoctor-launch-", tmp_path)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(
        ["torchdoctor-launch-alive", "torchdoctor-launch-mine", "torchdoctor-watchdog-gone", fresh.name]
    )
    assert (fresh / OWNER_FILE).read_text().split()[0] == str(os.getpid())


def test_a_stopped_process_ends_on_the_stops_signal_not_only_on_sigkill():
    # a rank stopped by SIGSTOP (a debugger, Ctrl-Z, a scheduler's suspend, tests/hang_faults/frozen_rank.py)
    # holds every signal pending but SIGKILL: the stop wakes it (SIGCONT, as a shell's `kill` does) so that the
    # SIGTERM it was sent ends it; without, the watchdog's stop waited out both grace periods for SIGKILL
    from torchdoctor.launch import torchrun

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        os.kill(sleeper.pid, signal.SIGSTOP)
        while stat_of(sleeper.pid).state != "T":  # the kernel stops it when it next runs
            time.sleep(0.01)
        torchrun.stop(sleeper, grace=30, signals=(signal.SIGTERM, signal.SIGKILL))
        assert sleeper.wait(timeout=5) == -signal.SIGTERM
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
