"""Rank 0's judge, in a process of its own: it reads every rank's windows from the job's store and judges them,
so that the training process does neither (0.7 ms of CPU per window of 10 steps for 2 ranks, 9 ms for 32,
all of it holding the interpreter lock the training thread needs to start its work).

Rank 0 starts it (`start`) once the process group exists, where the job's store is a TCPStore another process
can reach by its address; it writes to rank 0's stderr, where it says its verdicts. At the end rank 0 tells it
the run is over (`finish`): it waits for the ranks' end marks, judges what is left, says the summary, writes
the files and exits, and rank 0 waits for it (at most `FINISH_TIMEOUT` seconds). Ctrl-C does not stop it on
its own: it stops, without a word, as soon as rank 0 is gone (its pipe from rank 0 closes, or its parent
changes), so whatever stops rank 0 stops it too. It runs at a lower priority than the ranks.

    python -m torchdoctor.stragglers.judge --host H --port P --prefix X --world-size N --parent PID [--dir D]
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from torchdoctor.stragglers.aggregate import END_TIMEOUT, POLL_SECONDS, Aggregator

FINISH = b"finish\n"
FINISH_TIMEOUT = END_TIMEOUT + 45.0  # the end marks, the rest judged, the picture drawn (matplotlib's import)
CONNECT_SECONDS = 60.0  # how long the judge tries to reach the store
NICENESS = 10  # the judge's priority below the ranks' (CFS: ~1/10 of a core's share against one of them)


def start(host: str, port: int, prefix: str, world_size: int, directory: str | None, stderr: int):
    """Start the judge for a job of ``world_size`` ranks whose windows are under ``prefix`` in the TCPStore at
    ``host:port``; it writes to the file descriptor ``stderr``. Returns the process (OSError when it cannot
    be started)."""
    package_root = str(Path(__file__).resolve().parents[2])  # found however this process found torchdoctor
    path = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "PYTHONPATH": package_root + (os.pathsep + path if path else ""),
        "OMP_NUM_THREADS": "1",
    }
    command = [sys.executable, "-m", "torchdoctor.stragglers.judge", "--host", host, "--port", str(port),
               "--prefix", prefix, "--world-size", str(world_size), "--parent", str(os.getpid())]  # fmt: skip
    if directory:
        command += ["--dir", str(directory)]
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, env=env, close_fds=True
    )


def finish(process: subprocess.Popen, say: Callable[[str], None], timeout: float = FINISH_TIMEOUT) -> None:
    """Tell the judge the run is over and wait (at most ``timeout`` seconds) for its summary."""
    try:
        process.stdin.write(FINISH)
        process.stdin.close()
    except OSError:  # it is gone already: its status says so below
        pass
    try:
        status = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        say(
            f"torchdoctor: stragglers: the judge (pid {process.pid}) did not finish within {timeout:.0f} s and "
            "was stopped: the summary is missing"
        )
        return
    if status != 0:
        say(
            f"torchdoctor: stragglers: the judge (pid {process.pid}) exited with status {status}: no summary "
            "(its reason, if it gave one, is above)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchdoctor.stragglers.judge", description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument(
        "--parent", type=int, required=True, help="rank 0's pid: the judge stops when it is gone"
    )
    parser.add_argument("--dir", default=None, help="where to write the findings, the picture, the windows")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches rank 0, which tells the judge or goes away
    _yield_to_training()
    try:
        store = _connect(args.host, args.port, args.prefix)
    except (RuntimeError, ValueError, OSError) as error:
        _say(f"torchdoctor: stragglers: the judge could not reach the job's store at {args.host}:{args.port}: "
             f"{str(error).splitlines()[0] if str(error) else type(error).__name__}")  # fmt: skip
        return 1
    from torchdoctor.stragglers import results

    kept = Path(args.dir) / results.WINDOWS_NAME if args.dir else None
    aggregator = Aggregator(store, args.world_size, None, kept)
    aggregator.start()
    if not _wait_for_finish(args.parent):
        return 0  # rank 0 is gone without finishing: nothing to say to anyone
    results.report(aggregator, aggregator.finish(), args.dir, _say)
    return 0


def _yield_to_training() -> None:
    """Run at a lower priority than the ranks (`NICENESS`): where the cores are all busy, the judge (its start-up
    above all: torch's import, 2-3 s of CPU) waits for them, not they for it; a verdict a moment later costs
    nothing."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # Windows, or not allowed: the default priority
        pass


def _connect(host: str, port: int, prefix: str):
    """The job's store, as a client, under the windows' prefix."""
    from datetime import timedelta

    import torch.distributed as dist

    store = dist.TCPStore(
        host, port, is_master=False, wait_for_workers=False, timeout=timedelta(seconds=CONNECT_SECONDS)
    )
    return dist.PrefixStore(prefix, store)


def _wait_for_finish(parent: int) -> bool:
    """Wait until rank 0 says the run is over (True), or is gone (False: its pipe closed, or the judge has
    another parent now)."""
    said = b""
    with selectors.DefaultSelector() as selector:
        selector.register(sys.stdin.buffer, selectors.EVENT_READ)
        while True:
            if selector.select(POLL_SECONDS):
                data = os.read(sys.stdin.fileno(), 64)
                if not data:
                    return False
                said += data
                if FINISH in said:
                    return True
            if os.getppid() != parent:
                return False


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
