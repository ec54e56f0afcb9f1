"""Rank 0's judge, in a process of its own: it reads every rank's windows from the job's store and judges them,
so that the training process does neither (1.5 ms of CPU per window of 10 steps for 2 ranks, 2.6 ms for 4,
all of it holding the interpreter lock the training thread needs to start its work).

Rank 0 starts it as early as it knows it is rank 0 of several (from the launcher's ``RANK`` and ``WORLD_SIZE``,
before the script builds its model), as a fork of itself (`start`): torch is imported there already (the watch's
hooks need it), so the judge has ``torch.distributed`` for its client of the job's store without importing
torch again, which a fresh interpreter paid on every launch (1.4-1.7 s of CPU; over 30 s on a loaded machine at
its lower priority), and it holds no more of rank 0's memory than rank 0 had before its script began, as the
DataLoader's workers are forks of the training process. The fork keeps nothing of rank 0's that is rank 0's to
use: its signal handlers go back to the defaults (Ctrl-C ignored), its other file descriptors are closed, its
stdout goes to /dev/null, and it leaves with ``os._exit`` (rank 0's exit handlers and buffered output are rank
0's). Where rank 0 learns it is rank 0 only from the process group (no launcher's ``RANK``), its memory is the
training's by then, so the judge is a fresh interpreter instead (`start_fresh`; torch's import runs in a thread
meanwhile, so that a judge let go leaves at once).

The judge writes to rank 0's stderr, where it says its verdicts. It learns where the windows are once the
process group exists (`connect`: the job's TCPStore, reached by its address), and at the end that the run is
over (`finish`): it then waits for the ranks' end marks, judges what is left, says the summary, writes the files
and exits, while rank 0 waits for it (at most `FINISH_TIMEOUT` seconds). Told nothing (`stop`), it exits, at
once. Ctrl-C does not stop it on its own: it stops, without a word, as soon as rank 0 is gone (its pipe from rank
0 closes, or its parent changes), so whatever stops rank 0 stops it too. It runs at a lower priority than the
ranks.

    python -m torchdoctor.stragglers.judge --parent PID [--dir D]     # then, on its stdin:
    judge HOST PORT WORLD_SIZE PREFIX
    finish
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

from torchdoctor.stragglers.aggregate import END_TIMEOUT, POLL_SECONDS, Aggregator

FINISH_TIMEOUT = END_TIMEOUT + 45.0  # the end marks, the rest judged, the picture drawn (matplotlib's import)
CONNECT_SECONDS = 60.0  # how long the judge tries to reach the store
NAME = "straggler judge"  # a forked judge's name for ps and top (/proc/PID/comm: 15 characters at most)
NICENESS = 10  # the judge's priority below the ranks' (CFS: ~1/10 of a core's share against one of them)


class Judge:
    """A judge forked by rank 0 (`start`), as rank 0 holds it: its ``pid``, the pipe rank 0 writes to
    (``stdin``), and `wait` and `kill` as `subprocess.Popen` has them (``returncode`` once it has exited)."""

    def __init__(self, pid: int, stdin) -> None:
        self.pid = pid
        self.stdin = stdin
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status (a signal's as ``-N``); `subprocess.TimeoutExpired` after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
            elif time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"the judge (pid {self.pid})", timeout)
            else:
                time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                delay = min(delay * 2, 0.05)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:  # exited, not yet waited for
                pass


def start(directory: str | None, stderr: int) -> Judge | subprocess.Popen:
    """Fork the judge from this process (torch.distributed imported first, if it is not yet); it writes to the
    file descriptor ``stderr`` and, at the end, into ``directory`` (if any). Returns its process (OSError when
    it cannot be started). Where there is no fork (Windows), a fresh interpreter (`start_fresh`)."""
    if not hasattr(os, "fork"):
        return start_fresh(directory, stderr)
    import torch.distributed  # noqa: F401 - the fork's, for its client of the store (the watch imported torch)

    parent = os.getpid()
    reading, writing = os.pipe()
    # Ctrl-C or SIGTERM in the instant after the fork would run rank 0's handlers in the judge: held until it
    # has its own (as `torchdoctor.net.spawn` forks its ranks)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    with warnings.catch_warnings():  # Python 3.12's word on a fork of a process with threads: the fork runs
        warnings.simplefilter("ignore", DeprecationWarning)  # only its own code, none of theirs
        pid = os.fork()
    if pid == 0:  # the judge
        status = 1
        try:
            os.close(writing)
            status = _in_the_fork(reading, stderr, parent, directory, held)
        except BaseException:  # noqa: BLE001 - said on rank 0's stderr, then the fork leaves
            try:
                traceback.print_exc()
                sys.stderr.flush()
            except BaseException:  # noqa: BLE001, S110 - nowhere left to say it
                pass
        finally:
            os._exit(status)
    signal.pthread_sigmask(signal.SIG_SETMASK, held)
    os.close(reading)
    _below_the_ranks(pid)
    return Judge(pid, os.fdopen(writing, "wb"))


def _in_the_fork(reading: int, stderr: int, parent: int, directory: str | None, held) -> int:
    """The judge's work in the fork, rank 0's state left to rank 0: its signal handlers, file descriptors and
    stream objects (fresh ones here: a lock another thread of rank 0 held at the fork stays held in those, and
    what they buffer is rank 0's to write)."""
    for number in signal.valid_signals():
        try:
            if callable(signal.getsignal(number)):
                signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches rank 0, which tells the judge or goes away
    signal.pthread_sigmask(signal.SIG_SETMASK, held)
    try:
        Path("/proc/self/comm").write_text(NAME)  # else it shows as rank 0's python
    except OSError:  # not Linux
        pass
    os.dup2(reading, 0)
    os.dup2(stderr, 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # rank 0's sockets, pipes and files
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the fork's own, never closed: it leaves with os._exit
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False, buffering=1, errors="backslashreplace")  # noqa: SIM115
    lines = _lines(parent)
    where = next(lines, "").split(maxsplit=4)
    if len(where) != 5 or where[0] != "judge":
        return 0  # nothing to judge, or rank 0 is gone: nothing to say to anyone
    return _judge(where, lines, directory)


def start_fresh(directory: str | None, stderr: int) -> subprocess.Popen:
    """Start the judge in a fresh interpreter (`python -m torchdoctor.stragglers.judge`, torch imported there); it writes to the file descriptor ``stderr`` and, at the end, into ``directory`` (if
    any). Returns the process (OSError when it cannot be started)."""
    package_root = str(Path(__file__).resolve().parents[2])  # found however this process found torchdoctor
    path = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "PYTHONPATH": package_root + (os.pathsep + path if path else ""),
        "OMP_NUM_THREADS": "1",
    }
    command = [sys.executable, "-m", "torchdoctor.stragglers.judge", "--parent", str(os.getpid())]
    if directory:
        command += ["--dir", str(directory)]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, env=env, close_fds=True
    )
    _below_the_ranks(process.pid)
    return process


def connect(process: Judge | subprocess.Popen, host: str, port: int, prefix: str, world_size: int) -> None:
    """Tell the judge where the windows of a job of ``world_size`` ranks are: under ``prefix`` in the TCPStore
    at ``host:port`` (OSError when the judge is gone)."""
    process.stdin.write(f"judge {host} {port} {world_size} {prefix}\n".encode())
    process.stdin.flush()


def stop(process: Judge | subprocess.Popen) -> None:
    """The judge has nothing to judge (one rank, or a store it cannot reach): let it go."""
    try:
        process.stdin.close()
        process.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        process.kill()
        process.wait()


def finish(
    process: Judge | subprocess.Popen, say: Callable[[str], None], timeout: float = FINISH_TIMEOUT
) -> None:
    """Tell the judge the run is over and wait (at most ``timeout`` seconds) for its summary."""
    try:
        process.stdin.write(b"finish\n")
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
    parser.add_argument(
        "--parent", type=int, required=True, help="rank 0's pid: the judge stops when it is gone"
    )
    parser.add_argument("--dir", default=None, help="where to write the findings, the picture, the windows")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches rank 0, which tells the judge or goes away
    # the start-up's cost (torch's import), paid while rank 0 is still setting up, in a thread: a judge told
    # nothing, or whose rank 0 is gone, leaves at once, not once a slow import on a busy machine is over
    importing = threading.Thread(target=_import_torch, name="torchdoctor-judge-import", daemon=True)
    importing.start()
    lines = _lines(args.parent)
    where = next(lines, "").split(maxsplit=4)
    if len(where) != 5 or where[0] != "judge":
        os._exit(0)  # nothing to judge, or rank 0 is gone: nothing to say to anyone (the import left behind)
    while importing.is_alive():  # rank 0 may go while the import is still under way (a loaded machine)
        importing.join(POLL_SECONDS)
        if os.getppid() != args.parent:
            os._exit(0)
    return _judge(where, lines, args.dir)


def _judge(where: list[str], lines, directory: str | None) -> int:
    """Reach the store ``where`` says (``judge HOST PORT WORLD_SIZE PREFIX``), judge the windows until rank 0
    says ``finish`` (then the summary and the files) or is gone (nothing said); the exit status."""
    import torch.distributed as dist

    from torchdoctor.stragglers import results

    _, host, port, world_size, prefix = where
    try:
        store = dist.PrefixStore(prefix, _client(dist, host, int(port)))
    except (RuntimeError, ValueError, OSError) as error:
        _say(f"torchdoctor: stragglers: the judge could not reach the job's store at {host}:{port}: "
             f"{str(error).splitlines()[0] if str(error) else type(error).__name__}")  # fmt: skip
        return 1
    kept = Path(directory) / results.WINDOWS_NAME if directory else None
    aggregator = Aggregator(store, int(world_size), None, kept)
    aggregator.start()
    if next(lines, "") != "finish":
        return 0  # rank 0 is gone without finishing: nothing to say to anyone
    results.report(aggregator, aggregator.finish(), directory, _say)
    return 0


def _import_torch() -> None:
    """torch.distributed's import (2-3 s of CPU), off the judge's main thread; a failure is the main thread's
    to meet, importing it again."""
    try:
        import torch.distributed  # noqa: F401 - imported for its cost, used by `main`
    except Exception:  # noqa: BLE001 - raised again where it is used
        pass


def _below_the_ranks(pid: int) -> None:
    """Run the judge ``pid`` at a lower priority than the ranks (`NICENESS` below rank 0's), set by rank 0 the
    moment it is started: where the cores are all busy, the judge (a fresh one's start-up above all: Python's and
    torch's imports, 1.5-3 s of CPU) waits for them, not they for it; a verdict a moment later costs nothing."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS))
    except (AttributeError, OSError):  # Windows, or not allowed: the default priority
        pass


def _client(dist, host: str, port: int):
    """A client of the job's TCPStore."""
    from datetime import timedelta

    return dist.TCPStore(
        host, port, is_master=False, wait_for_workers=False, timeout=timedelta(seconds=CONNECT_SECONDS)
    )


def _lines(parent: int):
    """The lines rank 0 writes on the judge's stdin, as they come; ends when rank 0 is gone (its pipe closed, or the judge has
    another parent now)."""
    pending = b""
    with selectors.DefaultSelector() as selector:
        selector.register(0, selectors.EVENT_READ)
        while True:
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                yield line.decode(errors="replace").strip()
            if selector.select(POLL_SECONDS):
                data = os.read(0, 4096)
                if not data:
                    return
                pending += data
            elif os.getppid() != parent:
                return


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
