"""Running a script on N real ranks over gloo, the way torchrun does: the one way the tests start ranks.

Not a test module itself (the name does not start with ``test_``); the tests import it as
``from rank_runner import run_ranks``, which works because pytest puts ``tests/`` on ``sys.path``.

Like torchrun's agent, the test process hosts the job's TCPStore and each rank is a plain Python process that
calls ``dist.init_process_group("gloo")`` with ``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT`` set.
Every run is bounded: a rank still running at the timeout is killed and reported, so a hang fails the test.

Each rank is forked from a process of this pytest worker that has imported torch and torch.distributed once
(tests/rank_forkserver.py), and runs its script there as ``python script.py`` would: torch's import was 2.5-3.5 s
of CPU in every rank, nearly all of what a short job costs (26 jobs, some 60 ranks in the suite). A rank whose
environment differs from the fork server's in what torch or Python read as they start (``TORCH_*``, ``OMP_*``,
``PYTHON*``, ...) is a fresh ``python script.py`` instead, as every rank was before. `run_script` and
`start_script` run one such process outside a job (a torch script whose output a test reads, torchrun's agent).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
FORK_SERVER = Path(__file__).resolve().parent / "rank_forkserver.py"
# what torch (OpenMP, MKL, c10d's start-up), the loader and Python read as a process starts: a rank is forked
# only where these are as the fork server had them when it imported torch
AT_START = ("TORCH_", "TORCHINDUCTOR_", "TORCHDYNAMO_", "OMP_", "MKL_", "KMP_", "GOMP_", "PYTHON", "LD_")
AT_START += ("CUDA", "NCCL_", "GLOO_", "MALLOC_")
# read when a rank joins the job, not at torch's import: each rank's own, and the flight recorder's size (read as
# the process group is made: set after torch's import, it still sizes the recorder)
RANK_OWN = ("MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")
RANK_OWN += ("TORCH_FR_BUFFER_SIZE",)


def ctrl_c_as_at_a_terminal() -> None:
    """In a child before it runs: Ctrl-C (SIGINT) neither ignored nor blocked, as a shell started from a terminal
    has it, whatever the test worker that starts the child inherited or holds at that moment."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def _at_start(env: dict) -> dict:
    return {key: value for key, value in env.items() if key.startswith(AT_START) and key not in RANK_OWN}


class _ForkServer:
    """This worker's fork server (tests/rank_forkserver.py), started at its first job, stopped at the session's
    end (`stop_fork_server`, from tests/conftest.py)."""

    def __init__(self, env: dict) -> None:
        self.at_start = _at_start(env)
        self.process = subprocess.Popen(
            [sys.executable, str(FORK_SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            preexec_fn=ctrl_c_as_at_a_terminal,
        )
        self.pending = b""
        self.started: dict[int, int] = {}  # request -> pid
        self.ended: dict[int, int] = {}  # pid -> exit code
        self.requests = 0

    def fork(self, argv: list[str], env: dict, stdout: str, stderr: str) -> _ForkedRank:
        self.requests += 1
        request = {"id": self.requests, "argv": argv, "env": env, "cwd": os.getcwd(), "stdout": stdout}
        self.process.stdin.write((json.dumps({**request, "stderr": stderr}) + "\n").encode())
        self.process.stdin.flush()
        while self.requests not in self.started:
            self.pump(None)
        return _ForkedRank(self, self.started.pop(self.requests))

    def pump(self, timeout: float | None) -> None:
        """Read what the server said, waiting at most ``timeout`` seconds (None: until it says something)."""
        out = self.process.stdout.fileno()
        if not select.select([out], [], [], timeout)[0]:
            return
        chunk = os.read(out, 65536)
        if not chunk:
            raise RuntimeError(f"the rank fork server ended (exit {self.process.wait()})")
        self.pending += chunk
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            what, first, second = line.decode().split()
            if what == "started":
                self.started[int(first)] = int(second)
            else:
                self.ended[int(first)] = int(second)

    def stop(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


class _ForkedRank:
    """A forked rank, waited for as `subprocess.Popen` is (its parent, the server, reaps it and says its code)."""

    def __init__(self, server: _ForkServer, pid: int) -> None:
        self.server, self.pid, self.returncode = server, pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.server.pump(0)
            self.returncode = self.server.ended.pop(self.pid, None)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            self.server.pump(left)
        return self.returncode

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:  # ended meanwhile; the server says its code
            pass


_server: _ForkServer | None = None


def _forked_or_fresh(argv: list[str], env: dict, usual: dict, stdout, stderr):
    """A rank forked from this worker's fork server where its environment ``env`` allows, else ``python ARGV``;
    the server, if it must be started, gets ``usual``: a rank's environment without the test's own variables."""
    global _server
    if _server is not None and _server.process.poll() is not None:
        _server = None
    if _server is None:
        _server = _ForkServer({key: value for key, value in usual.items() if key not in RANK_OWN})
    if _at_start(env) == _server.at_start:
        return _server.fork(argv[1:], env, stdout.name, stderr.name)  # the script and its arguments
    return subprocess.Popen(argv, env=env, stdout=stdout, stderr=stderr, preexec_fn=ctrl_c_as_at_a_terminal)


def stop_fork_server() -> None:
    """Stop this worker's fork server (before the run checks that it left no process behind)."""
    global _server
    if _server is not None:
        _server.stop()
        _server = None


atexit.register(stop_fork_server)


def start_script(argv: list[str], stdout, stderr, env: dict | None = None):
    """``python ARGV`` started as `run_script` runs it, its output into the open files ``stdout`` and ``stderr``;
    returns the process, to wait for (``wait(timeout)``, ``poll()``, ``kill()``, ``returncode``) as a `Popen`."""
    usual = {
        **os.environ,
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "OMP_NUM_THREADS": "1",
    }
    return _forked_or_fresh([sys.executable, *argv], {**usual, **(env or {})}, usual, stdout, stderr)


def run_script(argv: list[str], timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python ARGV`` (``script.py ARGS`` or ``-c CODE ARGS``) in a process of its own, forked as a rank is (one
    process, no job), returning what ``subprocess.run(..., capture_output=True, text=True)`` returns: for a
    script whose real output a test reads (explain's tests of what torch prints), without torch's import
    (its environment: this worker's, these sources first on the path, one OpenMP thread, and ``env``)."""
    full = [sys.executable, *argv]
    with tempfile.TemporaryDirectory(prefix="script-") as folder:
        out, err = open(Path(folder) / "out", "w+"), open(Path(folder) / "err", "w+")  # noqa: SIM115
        with out, err:
            process = start_script(argv, out, err, env)
            try:
                code = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(full, code, out.read(), err.read())


@dataclass
class RankResult:
    rank: int
    returncode: int | None  # None: still running at the timeout, killed
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_ranks(
    script: str,
    tmp_path: Path,
    nprocs: int = 2,
    env: dict | None = None,
    timeout: float = 60,
    wait_for: list[int] | None = None,
    args: Callable[[int], list[str]] | None = None,
) -> list[RankResult]:
    """Run ``script`` on ``nprocs`` ranks; wait for the ranks in ``wait_for`` (default all), kill the rest.

    ``env`` is added to every rank's environment; ``args(rank)``, if given, are that rank's command-line arguments.
    """
    import torch.distributed as dist

    store = dist.TCPStore("127.0.0.1", 0, nprocs, True, timedelta(seconds=timeout), wait_for_workers=False)
    path = tmp_path / f"script_{time.monotonic_ns()}.py"
    path.write_text(textwrap.dedent(script))
    procs = []
    for rank in range(nprocs):
        usual = {
            **os.environ,
            "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(store.port),
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(nprocs),
            "LOCAL_WORLD_SIZE": str(nprocs),
            "TORCHELASTIC_USE_AGENT_STORE": "True",  # the store above, as torchrun's agent hosts it
            "TORCHELASTIC_RESTART_COUNT": "0",  # set by torchrun's agent too; torch 2.4 reads it with the above
            "OMP_NUM_THREADS": "1",
        }
        rank_env = {**usual, **(env or {})}
        out, err = open(tmp_path / f"rank{rank}.out", "w+"), open(tmp_path / f"rank{rank}.err", "w+")
        argv = [sys.executable, str(path), *(args(rank) if args else [])]
        procs.append((_forked_or_fresh(argv, rank_env, usual, out, err), out, err))
    deadline = time.monotonic() + timeout
    wanted = range(nprocs) if wait_for is None else wait_for
    try:
        for rank in wanted:
            try:
                procs[rank][0].wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    finally:
        results = []
        for rank, (proc, out, err) in enumerate(procs):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
                code = None
            else:
                code = proc.returncode
            out.seek(0)
            err.seek(0)
            results.append(RankResult(rank, code, out.read(), err.read()))
            out.close()
            err.close()
        del store
    for rank in wanted:
        assert results[rank].returncode is not None, f"rank {rank} still running after {timeout}s:\n{results}"
    return results
