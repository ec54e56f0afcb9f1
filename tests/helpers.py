"""Small helpers the tests share (``from helpers import free_port``; pytest puts ``tests/`` on ``sys.path``)."""

import contextlib
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# names the temporary folder the suite was started with, outside every folder the run deletes (conftest.py sets
# it once, in the first pytest process; its workers inherit it)
OUTSIDE_THE_RUN = "TORCHDOCTOR_TEST_OUTSIDE_THE_RUN"


# the torchrun beside the Python running the tests (the venv's; None where it has none), else the one on PATH
VENV_TORCHRUN = shutil.which("torchrun", path=str(Path(sys.executable).parent))
TORCHRUN = VENV_TORCHRUN or "torchrun"


def torchrun_two_ranks(folder: Path, script: str, *flags: str) -> subprocess.CompletedProcess:
    """``script`` written to ``folder/train.py`` and run on 2 ranks by a standalone torchrun with ``flags`` and
    ``--tee 3``, one thread a rank: its status and what it printed (at most 120 s)."""
    path = folder / "train.py"
    path.write_text(script)
    command = [TORCHRUN, "--standalone", "--nproc_per_node", "2", *flags, "--tee", "3", str(path)]
    if VENV_TORCHRUN is not None:
        # torchrun's agent forked where torch is imported (rank_runner.run_script), its console script run as its
        # shebang line runs it (the same frames); the ranks are started by the agent, as torchrun starts them
        from rank_runner import run_script

        return run_script(command, timeout=120, env={"OMP_NUM_THREADS": "1"})
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )


def launch_two_ranks(folder: Path, script: str, *flags: str, env: dict | None = None) -> tuple[int, str]:
    """``script`` written to ``folder/train.py`` and run there on 2 ranks by ``torchdoctor launch --standalone``
    with ``flags`` (``--debug``, ``--watchdog 60``) and ``env`` on top of this process's environment (its
    ``sys.path`` as PYTHONPATH): the exit status and the output, stdout then stderr (at most 120 s)."""
    (folder / "train.py").write_text(script)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "launch", "--standalone", "--nproc-per-node", "2", *flags, "train.py"],
        env=environ, capture_output=True, text=True, timeout=120, cwd=folder,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def interrupted_once_hanging(command: list[str], folder: Path, env: dict) -> tuple[int | None, str]:
    """``command`` run in ``folder`` as a terminal's foreground job (a process group of its own, SIGINT as it comes),
    sent SIGINT as Ctrl-C sends it a second after the script wrote ``folder/hanging``: its exit status and what it
    printed, stdout and stderr as one (at most 90 s to hang, 60 s to stop)."""
    log = folder / "console.log"
    with open(log, "wb") as out:
        group = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=folder, env=env, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's foreground job
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while not (folder / "hanging").exists():
            assert group.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(1)  # the other rank reaches the collective it will wait in
        os.killpg(group.pid, signal.SIGINT)
        group.wait(timeout=60)
    finally:
        if group.poll() is None:
            os.killpg(group.pid, signal.SIGKILL)
            group.wait()
    return group.returncode, log.read_text()


def launch_interrupted_once_hanging(folder: Path, script: str, ranks: int = 2) -> tuple[int | None, str]:
    """``script`` written to ``folder/train.py``, run on ``ranks`` ranks by ``torchdoctor launch --standalone`` and
    stopped with Ctrl-C once it wrote ``folder/hanging`` (`interrupted_once_hanging`): its exit status and output."""
    (folder / "train.py").write_text(script)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable,
        "-m",
        "torchdoctor",
        "launch",
        "--standalone",
        "--nproc-per-node",
        str(ranks),
        "train.py",
    ]
    return interrupted_once_hanging(command, folder, environ)


def kept_for_a_person(prefix: str) -> Path:
    """A new folder that outlives the test run, for what a failure should leave for a person to read (a failed
    live job's files): under the temporary folder the suite was started with, not the run's own, which is
    deleted at its end."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=os.environ.get(OUTSIDE_THE_RUN)))


def free_port() -> int:
    """A TCP port nothing listens on right now, on any address of this machine."""
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def hook_count(model) -> int:
    """How many forward and forward-pre hooks ``model`` and its submodules hold: 0 once a detector is off."""
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


def main_here(main, name: str, args, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    """``main(args)`` in this process with ``env`` added to the environment (and COLUMNS=200), in ``cwd``: its
    status and what it printed, as `subprocess.run` returns a process's, ``name`` as the command. The
    environment and the folder are as before afterwards."""
    saved, where = dict(os.environ), os.getcwd()
    os.environ.update({"COLUMNS": "200", **(env or {})})
    out, err = io.StringIO(), io.StringIO()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(args))
    finally:
        os.chdir(where)
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess([name, *args], status, out.getvalue(), err.getvalue())
