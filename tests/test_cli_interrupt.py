"""Ctrl-C on `torchdoctor check` at any moment of its run: one line, exit 130, nothing left behind.

The terminal sends Ctrl-C to the whole foreground process group, so the signal goes to the group, as a
terminal would send it, children and all. The moments are the run's own stages, not times: while torch is
being imported (its library is mapped into the process), and as the first check of each kind of area starts
(the status line on a terminal names it; `STAGES` says which), so the test means the same on a fast machine
and on a loaded one.
"""

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# while `import torch` runs, then the first check of the areas, in the order `check` runs them: one that
# runs in this process (sys.python), one that runs commands (env.toolkits: the group's Ctrl-C reaches them
# too), one that starts ranks (net.smoke), the last one (gpu.balance). The dist area's first check
# (dist.debug_mode) is another check that reads this process's settings, the moment sys.python stands for:
# each moment is a `check` of its own (an import of torch, ~3 s of CPU).
STAGES = ["import torch", "sys.python", "env.toolkits", "net.smoke", "gpu.balance"]
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _read(fd: int, wait: float) -> bytes:
    """What the terminal has for us within ``wait`` seconds; b"" at its end."""
    ready, _, _ = select.select([fd], [], [], wait)
    if not ready:
        return b"?"  # nothing yet, but not the end
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the process closed its end
        return b""


def _reached(run: subprocess.Popen, fd: int, stage: str, seen: bytearray) -> bool:
    """Wait until ``check`` reaches ``stage`` (True) or ends first (False); bounded."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if stage == "import torch":
            try:
                if "libtorch" in Path(f"/proc/{run.pid}/maps").read_text():
                    return True
            except OSError:  # ended meanwhile
                return False
        elif f"checking {stage}".encode() in _ANSI.sub(b"", bytes(seen)):
            return True
        chunk = _read(fd, 0.02)
        if chunk == b"" or run.poll() is not None:
            return False
        if chunk != b"?":
            seen += chunk
    raise AssertionError(f"check never reached {stage} in 300 s: {bytes(seen)[-500:]!r}")


@pytest.mark.timeout(900)
def test_ctrl_c_at_any_moment_of_check_is_one_line_and_130(tmp_path):
    tried = []
    for stage in STAGES:
        terminal, stderr = pty.openpty()  # the status line, which names each check, is shown on a terminal
        run = subprocess.Popen(
            [sys.executable, "-m", "torchdoctor", "check"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
            cwd=tmp_path,
            env={**os.environ, "TERM": "xterm", "COLUMNS": "200"},
        )
        os.close(stderr)
        seen = bytearray()
        try:
            if _reached(run, terminal, stage, seen):
                os.killpg(run.pid, signal.SIGINT)
            out = run.stdout.read()
            run.wait(timeout=120)
            while chunk := _read(terminal, 5):
                seen += chunk if chunk != b"?" else b""
        finally:
            os.close(terminal)
            run.stdout.close()
        err = _ANSI.sub(b"", bytes(seen)).decode(errors="replace").replace("\r\n", "\n")
        assert "Traceback" not in err, (stage, err[-2000:])
        if run.returncode in (0, 1) and any(
            line.startswith(w) for line in out.splitlines() for w in ("OK:", "WARN:", "FAIL:")
        ):
            continue  # the verdict was out: the signal came while the interpreter shut down, and is ignored
        tried.append(stage)
        assert run.returncode == 130, (stage, run.returncode, out[-1000:], err[-2000:])
        last = [line for line in err.replace("\r", "\n").splitlines() if line.strip()][-1]
        assert last.strip() == "torchdoctor: interrupted", (stage, err[-2000:])
    # the short checks can be over before the signal lands (their verdict is then out, and that is fine);
    # the long moments (torch importing, the two-rank smoke test) are always caught
    assert "import torch" in tried and len(tried) >= 2, (
        f"check finished before the signals: interrupted at {tried}"
    )


class _RaisesOnCollection:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __del__(self):
        raise self.error


def test_ctrl_c_where_python_cannot_raise_it_is_remembered_not_printed(capsys):
    # Ctrl-C that lands in a weakref callback during an import (or any __del__) is "unraisable": Python printed
    # "Exception ignored in ... Traceback" on the terminal, in the middle of `check`'s status line
    import gc

    from torchdoctor.cli import _Interrupts

    before, handler, given = sys.unraisablehook, signal.getsignal(signal.SIGINT), []
    sys.unraisablehook = given.append  # the hook there was (Python's prints the traceback)
    interrupts = _Interrupts()
    try:
        with interrupts:
            _RaisesOnCollection(KeyboardInterrupt())
            gc.collect()
            assert interrupts.seen and given == []
            _RaisesOnCollection(ValueError("not ours to hide"))  # anything else is still the hook's there was
            gc.collect()
            assert [type(u.exc_value) for u in given] == [ValueError]
        assert capsys.readouterr().err == ""
    finally:
        signal.signal(signal.SIGINT, handler)  # __exit__ ignores Ctrl-C once interrupted
        sys.unraisablehook = before


class _StatusInterrupted(int):
    """A command's status whose reading is where Ctrl-C lands: right after the command returned."""

    def __eq__(self, other):
        raise KeyboardInterrupt

    __hash__ = int.__hash__


def test_ctrl_c_right_after_the_command_returned_is_one_line_and_130(monkeypatch, capsys):
    # CI, 2026-11-29: the signal sent as check's status line showed its last check landed once the command had
    # returned, where its status is taken, and Python printed a traceback
    import torchdoctor.cli as cli

    class _Returns:
        def main(self, **kwargs):
            return _StatusInterrupted(0)

    monkeypatch.setattr(cli, "_command_line", lambda: _Returns())
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert cli.main(["check"]) == 130
    finally:
        signal.signal(signal.SIGINT, handler)  # __exit__ ignores Ctrl-C once interrupted
    err = capsys.readouterr().err
    assert err == "torchdoctor: interrupted\n", err
