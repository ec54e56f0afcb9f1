import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

# The suite checks itself that it leaves nothing behind: every process it starts carries this mark in its
# environment (inherited from here, whether or not it later leaves our process tree, as torch's launcher
# does with its own session), and every temporary file goes to a folder of this run's own, so that runs
# side by side do not see each other's.
_MARK = "TORCHDOCTOR_TEST_RUN"
_LEFT_ALONE_FOR = 15.0  # seconds a process or file gets to go away once the last test is done
_TEMP_PREFIX = "torchdoctor-"
_RUN = pytest.StashKey[tuple]()  # (mark, temporary folder)
_FOUND = pytest.StashKey[list]()  # what was left behind


def run_cli(
    *args: str, env: dict | None = None, timeout: float = 120, cwd=None
) -> subprocess.CompletedProcess:
    """Run `python -m torchdoctor ARGS` as a user would, in a real process."""
    full_env = os.environ.copy()
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=cwd,
    )


@pytest.fixture
def cli():
    return run_cli


def _marked_processes(mark: str) -> dict[int, str]:
    """Processes other than this one whose environment holds ``_MARK=mark``: pid -> command line."""
    needle = f"{_MARK}={mark}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found[int(entry.name)] = command or "?"
    return found


def _left_behind(temp: Path, mark: str) -> list[str]:
    """What the run left: live processes it started, ``torchdoctor-*`` entries in its temporary folder."""
    deadline = time.monotonic() + _LEFT_ALONE_FOR
    while True:
        processes = _marked_processes(mark)
        files = sorted(p for p in temp.iterdir() if p.name.startswith(_TEMP_PREFIX)) if temp.is_dir() else []
        if not (processes or files) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    return [f"process {pid} still running: {command[:300]}" for pid, command in sorted(processes.items())] + [
        f"temporary {'folder' if p.is_dir() else 'file'} left: {p}" for p in files
    ]


def pytest_configure(config):
    if not hasattr(sys, "getwindowsversion") and Path("/proc/self/environ").exists():
        mark = uuid.uuid4().hex
        temp = Path(tempfile.mkdtemp(prefix="td-test-run-"))
        temp.chmod(0o755)  # tests that drop to an ordinary user still reach their files
        os.environ[_MARK] = mark
        os.environ["TMPDIR"] = str(temp)
        tempfile.tempdir = None  # re-read TMPDIR
        config.stash[_RUN] = (mark, temp)


def pytest_sessionfinish(session, exitstatus):
    run = session.config.stash.get(_RUN, None)
    if run is None:
        return
    mark, temp = run
    left = _left_behind(temp, mark)
    session.config.stash[_FOUND] = left
    if left:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        shutil.rmtree(temp, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    left = config.stash.get(_FOUND, [])
    if left:
        terminalreporter.section("left behind by the tests (the run fails)", red=True, bold=True)
        for line in left:
            terminalreporter.line(line, red=True)


@pytest.fixture
def taken_port():
    """A port something else listens on (this test process), as an old run would."""
    with socket.socket() as holder:
        holder.bind(("", 0))
        holder.listen(1)
        yield holder.getsockname()[1]
