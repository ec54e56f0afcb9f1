"""Running outside commands (nvcc, gcc, ssh, mpirun, …) with a timeout, as checks take them as an argument.

A check receives ``run=run_command`` so tests can point ``PATH`` at fake scripts; the real commands run, with
no mock of our code in between.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    args: tuple[str, ...]
    returncode: int | None  # None: not found or timed out (see ``error``)
    stdout: str = ""
    stderr: str = ""
    error: str = ""  # "not found: nvcc", "timed out after 10s", "permission denied: ..."

    @property
    def ok(self) -> bool:
        return self.returncode == 0


# The commands run_command waits on now, in any thread: a Ctrl-C reaches only the main thread, and a command
# in its own session does not see it, so whoever waits on threads ends these (`end_running_commands`).
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


def run_command(
    args: Sequence[str], timeout: float = 10, env: Mapping[str, str] | None = None, input: str | None = None
) -> CommandResult:
    """Run ``args`` and capture its output; never raises for a missing program, a failure or a timeout.

    >>> run_command(["definitely-not-a-program"]).error
    'not found: definitely-not-a-program'
    """
    args = tuple(str(a) for a in args)
    path = (env or os.environ).get("PATH")
    if os.sep not in args[0] and shutil.which(args[0], path=path) is None:
        return CommandResult(args, None, error=f"not found: {args[0]}")
    with _ctrl_c_held() as pressed:
        try:
            # its own session, so a timeout ends the command's children too (mpirun's ssh/orted, nvcc's cc1plus)
            process = subprocess.Popen(
                args,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                text=True,
                errors="replace",
                env=None if env is None else dict(env),
                start_new_session=True,
            )
        except OSError as error:  # e.g. PermissionError: Permission denied: /opt/cuda/bin/nvcc
            if pressed():
                raise KeyboardInterrupt from None
            return CommandResult(
                args, None, error=f"{type(error).__name__}: {error.strerror or error}: {args[0]}"
            )
    if pressed():  # Ctrl-C while it started: end it (and what it started already) before saying so
        _kill_group(process)
        process.wait()
        raise KeyboardInterrupt
    with _running_lock:
        _running.add(process)
    try:
        stdout, stderr = process.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        return CommandResult(args, None, stdout or "", stderr or "", error=f"timed out after {timeout:g}s")
    except BaseException:  # Ctrl-C: its own session would outlive us
        _kill_group(process)
        process.wait()
        raise
    finally:
        with _running_lock:
            _running.discard(process)
    return CommandResult(args, process.returncode, stdout, stderr)


def end_running_commands() -> None:
    """End every command `run_command` is waiting on, in every thread, with what each started.

    For a Ctrl-C in the main thread while other threads wait on commands (``torchdoctor mpi``'s ssh to every
    host at once): the interrupt reaches neither those threads nor the commands, each in its own session, so
    without this the main thread would wait for the slowest of them to time out before it could stop.
    """
    with _running_lock:
        running = list(_running)
    for process in running:
        if process.returncode is None:  # not reaped yet: its process group is still the one it started
            _kill_group(process)


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[Callable[[], bool]]:
    """Ctrl-C held back while a command starts (yields whether it was pressed): raised inside Popen, before the
    process is ours to end, it would leave the command's own session running, and whatever it started (seen on a
    loaded machine: the command had started a child before Popen returned). Only in the main thread, where
    Python's own handler is in place."""
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: False
        return
    pressed: list[int] = []
    signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
    try:
        yield lambda: bool(pressed)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
