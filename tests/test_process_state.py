"""``/proc/PID/stat`` read in one place: a process runs, a zombie does not, a reused pid is another process."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from torchdoctor.process_state import is_running, started_at, stat_of


def test_a_running_process_its_start_time_and_a_reused_pid():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = started_at(child.pid)
        assert started is not None and stat_of(child.pid).parent == os.getpid()
        assert is_running(child.pid) and is_running(child.pid, started)
        # the same pid with another start time: a later process that reuses the pid, not this one
        assert not is_running(child.pid, started + 1)
    finally:
        child.kill()
    deadline = time.monotonic() + 30
    while stat_of(child.pid) is not None and stat_of(child.pid).state not in ("Z", "X"):
        assert time.monotonic() < deadline, "the killed child did not die within 30 s"
        time.sleep(0.05)
    assert not is_running(child.pid, started)  # a zombie: dead, not yet reaped
    child.wait(timeout=30)
    assert not is_running(child.pid) and stat_of(child.pid) is None


def test_this_process():
    assert is_running(os.getpid(), started_at())
