"""The rank's other threads' waiting for a CPU (`torchdoctor.stragglers.threads`), read from a real process
whose thread shares its core with two busy processes."""

import os
import subprocess
import sys
import threading
import time

import pytest

from torchdoctor.stragglers.threads import OtherThreads

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux's per-thread schedstat")

SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"


def spin(core: int, seconds: float) -> None:
    """Run on ``core`` for ``seconds`` of the wall clock (the calling thread only)."""
    os.sched_setaffinity(0, {core})
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def helper(core: int, go: threading.Event, spun: threading.Event, leave: threading.Event) -> None:
    """Spin on ``core`` for 0.6 s once ``go`` is set, say so (``spun``), and end once told (``leave``): a thread
    that ends is read no more, so it is read while it lives."""
    go.wait(10)
    spin(core, 0.6)
    spun.set()
    leave.wait(10)


def test_a_thread_kept_off_its_core_is_counted_and_the_training_thread_is_not():
    core = min(os.sched_getaffinity(0))
    allowed = os.sched_getaffinity(0)
    busy = [subprocess.Popen([sys.executable, "-c", SPIN, str(core)]) for _ in range(2)]
    try:
        time.sleep(0.3)  # the busy processes are running
        others = OtherThreads()  # created here: this thread is the training thread, left out
        go, spun, leave = threading.Event(), threading.Event(), threading.Event()
        thread = threading.Thread(target=helper, args=(core, go, spun, leave))
        thread.start()
        assert others.waited() < 0.05  # the helper is seen from here on; it has not run yet
        began = time.monotonic()
        go.set()
        assert spun.wait(10)
        runnable = time.monotonic() - began
        waited = others.waited()
        # three runnable on one core: the helper thread waited for it about two thirds of its 0.6 s, never
        # longer than it could run
        assert 0.1 < waited < runnable, (waited, runnable)
        assert thread.native_id in others.open
        leave.set()
        thread.join()
        others.waited()
        assert thread.native_id not in others.open, "the helper ended: its file is closed"
        spin(core, 0.6)  # the training thread kept off the core now: not counted
        os.sched_setaffinity(0, allowed)
        assert others.waited() < 0.05
    finally:
        os.sched_setaffinity(0, allowed)
        for process in busy:
            process.kill()
            process.wait()


def test_nothing_is_read_once_closed():
    others = OtherThreads()
    others.close()
    assert others.waited() is None and not others.open
