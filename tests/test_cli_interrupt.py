"""Ctrl-C on `torchdoctor check` at any moment of its run: one line, exit 130, nothing left behind.

The terminal sends Ctrl-C to the whole foreground process group, so the signal goes to the group, as a
terminal would send it, children and all.
"""

import os
import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.timeout(600)
def test_ctrl_c_at_any_moment_of_check_is_one_line_and_130(tmp_path):
    tried = []
    for delay in (0.2, 0.6, 1.0, 1.5, 2.2, 3.0, 4.5, 6.0):
        run = subprocess.Popen(
            [sys.executable, "-m", "torchdoctor", "check"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            cwd=tmp_path,
        )
        time.sleep(delay)
        if run.poll() is not None:  # finished before the signal: nothing to interrupt at this moment
            run.communicate()
            continue
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=120)
        assert "Traceback" not in err, (delay, err[-2000:])
        if run.returncode in (0, 1) and any(
            line.startswith(w) for line in out.splitlines() for w in ("OK:", "WARN:", "FAIL:")
        ):
            continue  # the verdict was out: the signal came while the interpreter shut down, and is ignored
        tried.append(delay)
        assert run.returncode == 130, (delay, run.returncode, out[-1000:], err[-2000:])
        assert err.strip().splitlines()[-1] == "torchdoctor: interrupted", (delay, err[-2000:])
    assert len(tried) >= 4, f"check finished before most signals: interrupted at {tried} s only"
