"""Running outside commands (nvcc, gcc, ssh, mpirun, …) with a timeout, as checks take them as an argument.

A check receives ``run=run_command`` so tests can point ``PATH`` at fake scripts; the real commands run, with
no mock of our code in between.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
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
        return CommandResult(
            args, None, error=f"{type(error).__name__}: {error.strerror or error}: {args[0]}"
        )
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
    return CommandResult(args, process.returncode, stdout, stderr)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
