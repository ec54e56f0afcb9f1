"""Running a script on N real ranks over gloo, the way torchrun does: the one way the tests start ranks.

Not a test module itself (the name does not start with ``test_``); the tests import it as
``from rank_runner import run_ranks``, which works because pytest puts ``tests/`` on ``sys.path``.

Like torchrun's agent, the test process hosts the job's TCPStore and each rank is a plain Python process that
calls ``dist.init_process_group("gloo")`` with ``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT`` set.
Every run is bounded: a rank still running at the timeout is killed and reported, so a hang fails the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def ctrl_c_as_at_a_terminal() -> None:
    """In a child before it runs: Ctrl-C (SIGINT) neither ignored nor blocked, as a shell started from a terminal
    has it, whatever the test worker that starts the child inherited or holds at that moment."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


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
        rank_env = {
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
            **(env or {}),
        }
        out, err = open(tmp_path / f"rank{rank}.out", "w+"), open(tmp_path / f"rank{rank}.err", "w+")
        procs.append(
            (
                subprocess.Popen(
                    [sys.executable, str(path), *(args(rank) if args else [])],
                    env=rank_env,
                    stdout=out,
                    stderr=err,
                    preexec_fn=ctrl_c_as_at_a_terminal,
                ),
                out,
                err,
            )
        )
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
