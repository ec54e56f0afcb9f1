"""The rank's other threads' waiting for a CPU (`torchdoctor.stragglers.threads`), read in a real process whose
thread shares its core with two busy processes. The process is a child of its own: a pytest worker has threads
of its own (execnet's) that wait for a CPU too on a loaded machine."""

import json
import os
import subprocess
import sys

import pytest

from torchdoctor.stragglers.threads import OtherThreads

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux's per-thread schedstat")

SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"

# The child: a helper thread spins 0.6 s on the busy core, and ends once told; then the training thread (the
# one that made OtherThreads) spins there itself. It prints what OtherThreads read at each point.
CHILD = r"""
import json, os, sys, threading, time
from torchdoctor.stragglers.threads import OtherThreads

core = int(sys.argv[1])
allowed = os.sched_getaffinity(0)


def spin(seconds):
    os.sched_setaffinity(0, {core})
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def helper(go, spun, leave):
    go.wait(10)
    spin(0.6)
    spun.set()
    leave.wait(10)


others = OtherThreads()
go, spun, leave = threading.Event(), threading.Event(), threading.Event()
thread = threading.Thread(target=helper, args=(go, spun, leave))
thread.start()
found = {"before": others.waited()}
began = time.monotonic()
go.set()
spun.wait(10)
found["runnable"] = time.monotonic() - began
found["helper"] = others.waited()
found["helper_open"] = thread.native_id in others.open
leave.set()
thread.join()
# join() returns once Python is done with the thread; the kernel ends it a moment later (under load, later)
deadline = time.monotonic() + 10
while os.path.exists(f"/proc/self/task/{thread.native_id}") and time.monotonic() < deadline:
    time.sleep(0.01)
others.waited()
found["helper_open_after"] = thread.native_id in others.open
spin(0.6)
os.sched_setaffinity(0, allowed)
found["training"] = others.waited()
print(json.dumps(found))
"""


def test_a_thread_kept_off_its_core_is_counted_and_the_training_thread_is_not():
    core = min(os.sched_getaffinity(0))
    busy = [subprocess.Popen([sys.executable, "-c", SPIN, str(core)]) for _ in range(2)]
    try:
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(core)], capture_output=True, text=True, timeout=60, check=True
        )
    finally:
        for process in busy:
            process.kill()
            process.wait()
    found = json.loads(child.stdout)
    assert found["before"] == 0.0  # the helper is seen from there on; it had not run yet
    # three runnable on one core: the helper waited for it about two thirds of its 0.6 s, never longer than it
    # could run
    assert 0.1 < found["helper"] < found["runnable"], found
    assert found["helper_open"] and not found["helper_open_after"], found  # its file closed once it ended
    assert found["training"] == 0.0, found  # the training thread kept off the core: not counted


def test_nothing_is_read_once_closed():
    others = OtherThreads()
    others.close()
    assert others.waited() is None and not others.open
