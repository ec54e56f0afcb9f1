"""torch's elastic launcher, ``python -m torch.distributed.run``: its command line, starting it, stopping it.

The one place that writes a torchrun command line (`command_from_flags`), starts one so that it can be stopped
whole (`start`), and stops it with everything it started (`stop`). torchrun's agent starts each worker in a
session of its own, so stopping torchrun's process group is not enough: `stop` finds every process under the
launcher, by parent and by a mark in its environment (a worker orphaned by a dead agent keeps it), and
signals each one's process group, SIGINT, then SIGTERM, then SIGKILL, each after a bounded grace.

Run as ``python -m torchdoctor.launch.torchrun [torchrun flags] SCRIPT ARGS`` it is torchrun itself,
except that each worker starts in ``torchdoctor.launch.bootstrap``, the failure summary names SCRIPT
rather than the bootstrap, and a stop signal ends it without torch's pages of traceback.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from torchdoctor.launch.orphans import dying_with_us
from torchdoctor.process_state import is_running, stat_of

# Far above any real machine; a value past it is a typo, which torchrun would not refuse.
MAX_NPROC_PER_NODE = 1024
# Every process under a launcher we start carries this in its environment, so that one orphaned by its
# parent's death is still found.
MARK_VARIABLE = "TORCHDOCTOR_LAUNCHER"
# The pid of torch's agent, for its workers: each asks the kernel to end it when the agent ends (SIGKILL
# included), as the agent asks to be ended when the launcher that started it does.
AGENT_VARIABLE = "TORCHDOCTOR_AGENT_PID"
BOOTSTRAP = "torchdoctor.launch.bootstrap"

_marks: dict[int, str] = {}  # launcher pid -> the mark its processes carry


def flag(name: str) -> str:
    """torchrun's own spelling of the option whose argparse name is ``name``: ``"rdzv_endpoint"`` ->
    ``"--rdzv-endpoint"`` (torchrun takes the underscore spelling too; the dash one is its first)."""
    return "--" + name.replace("_", "-")


def command_from_flags(
    flags: Mapping[str, object],
    program: Sequence[str],
    python: str = sys.executable,
    launcher: str = "torch.distributed.run",
) -> list[str]:
    """``[python, "-m", launcher, --flag=value ..., *program]``.

    ``flags`` are keyed by torchrun's argparse names (``nproc_per_node``, ``rdzv_endpoint``, ``module``, …);
    ``True`` is a bare flag, ``False`` and ``None`` leave it out. ``program`` is the script or module and its
    arguments.

    >>> command_from_flags({"standalone": True, "nproc_per_node": 2}, ["train.py"], python="python")
    ['python', '-m', 'torch.distributed.run', '--standalone', '--nproc-per-node=2', 'train.py']
    """
    command = [python, "-m", launcher]
    for name, value in flags.items():
        if value is True:
            command.append(flag(name))
        elif value is not None and value is not False:
            command.append(f"{flag(name)}={value}")
    return [*command, *program]


def parse_endpoint(text: str, default_port: int | None = None) -> tuple[str, int]:
    """``"node01:29400"`` -> ``("node01", 29400)``; an IPv6 address in brackets (``"[fe80::1]:29400"``).

    Without a port, ``default_port`` (torchrun's c10d takes 29400). Raises ValueError naming ``text``.

    >>> parse_endpoint("[::1]:29400")
    ('::1', 29400)
    """
    stripped = text.strip()
    if stripped.startswith("["):
        host, bracket, rest = stripped[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(
                f"rendezvous endpoint {text!r}: an IPv6 address goes in brackets, [ADDRESS]:PORT"
            )
        port = rest[1:] if rest else None
    elif stripped.count(":") > 1:
        raise ValueError(f"rendezvous endpoint {text!r}: put an IPv6 address in brackets, [ADDRESS]:PORT")
    else:
        host, colon, port = stripped.partition(":")
        port = port if colon else None
    if not host or any(c.isspace() or c in "[]/" for c in host):
        raise ValueError(f"rendezvous endpoint {text!r} is not HOST:PORT (e.g. node01:29400)")
    if port is None:
        if default_port is None:
            raise ValueError(f"rendezvous endpoint {text!r} has no port: HOST:PORT (e.g. node01:29400)")
        return host, default_port
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ValueError(f"rendezvous endpoint {text!r}: port {port!r} is not a number from 1 to 65535")
    return host, int(port)


def start(command: Sequence[str], env: Mapping[str, str] | None = None, **popen) -> subprocess.Popen:
    """Start a launcher in a session of its own, its processes marked so that `stop` finds them all.

    The launcher gets SIGTERM from the kernel when this process ends, however it ends (``kill -9``, the OOM
    killer): torch's agent then stops its workers as it does on any SIGTERM, which ``stop`` cannot do for a
    process that is gone. ``popen`` goes to `subprocess.Popen` (``stdout=``, ``stderr=``, ``stdin=``,
    ``cwd=``)."""
    mark = uuid.uuid4().hex
    env = dict(os.environ if env is None else env)
    env[MARK_VARIABLE] = mark
    popen.setdefault("preexec_fn", dying_with_us(signal.SIGTERM))
    process = subprocess.Popen(list(command), env=env, start_new_session=True, **popen)
    _marks[process.pid] = mark
    return process


def stop(
    process: subprocess.Popen,
    grace: float = 5.0,
    signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL),
) -> int:
    """Stop ``process`` (a launcher from `start`) and every process under it; the number of processes
    that were still running.

    The first signal goes to the launcher alone (torch's agent then stops its workers itself), each
    further one to the process group of every process found; after each, up to ``grace`` seconds for
    them all to end. A launcher that has already ended leaves orphans: they get every signal. Returns once they are gone or all
    signals are sent. Safe to call on a launcher that has already ended (its orphans are still found)."""
    mark = _marks.get(process.pid)
    targets = _processes_under(process.pid, mark)
    found = len(targets)
    own_group = os.getpgrp()
    for number, signum in enumerate(signals):
        targets |= _processes_under(process.pid, mark)
        targets = {t for t in targets if is_running(*t)}
        if not targets and process.poll() is not None:
            break
        if number == 0 and process.poll() is None:
            # the launcher first, alone: torch's agent stops its workers in order when it can
            _send(process.send_signal, signum)
        else:
            for group in {_group(pid) for pid, _ in targets} - {None, own_group}:
                _send(os.killpg, group, signum)
            for pid, _ in targets:
                if _group(pid) == own_group:  # never signal our own group: that is us
                    _send(os.kill, pid, signum)
        _wake_stopped(targets)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            process.poll()  # reap the launcher: a zombie would count as alive
            if process.returncode is not None and not any(is_running(*t) for t in targets):
                break
            time.sleep(0.05)
    _marks.pop(process.pid, None)
    return found


def _wake_stopped(targets: set[tuple[int, int]]) -> None:
    """SIGCONT to each of ``targets`` that is stopped (SIGSTOP, Ctrl-Z, a debugger, a scheduler's suspend), as a
    shell's ``kill`` does for a stopped job: the signal just sent waits, pending, until the process runs again,
    so a stopped rank outlived SIGINT and SIGTERM and every grace period, and only SIGKILL ended it."""
    for pid, started in targets:
        stat = stat_of(pid)
        if stat is not None and stat.started == started and stat.state in ("T", "t"):
            _send(os.kill, pid, signal.SIGCONT)


def _send(action, *args) -> None:
    try:
        action(*args)
    except (ProcessLookupError, PermissionError):  # gone already, or no longer ours (pid reused)
        pass


def _group(pid: int) -> int | None:
    stat = stat_of(pid)
    return None if stat is None else stat.group


def _processes_under(root: int, mark: str | None) -> set[tuple[int, int]]:
    """(pid, start time) of ``root`` and every process under it: its descendants, and any process that
    carries ``mark`` in its environment."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = stat_of(int(entry.name))
            if stat is not None and stat.state not in ("Z", "X"):
                table[int(entry.name)] = stat
    children: dict[int, list[int]] = {}
    for pid, stat in table.items():
        children.setdefault(stat.parent, []).append(pid)
    found, todo = set(), [root]
    if mark is not None:
        needle = f"{MARK_VARIABLE}={mark}".encode()
        for pid in table:
            try:
                if needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                    todo.append(pid)
            except OSError:  # another user's process, or gone
                pass
    while todo:
        pid = todo.pop()
        if pid in table and (pid, table[pid].started) not in found:
            found.add((pid, table[pid].started))
            todo.extend(children.get(pid, []))
    return found


# ---------------------------------------------------------------------------------------------------------
# python -m torchdoctor.launch.torchrun


class _QuietShutdown(logging.Filter):
    """Drops torch's agent's shutdown chatter ("Received SIGINT death signal", then "Sending process N
    closing signal SIGINT" for each worker): the first such record carries the signal as a
    `signal.Signals` argument, and from there on the run is being stopped on purpose; the caller says
    so in one line."""

    stopping = False

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if any(isinstance(a, signal.Signals) for a in args):
            _QuietShutdown.stopping = True
        return not _QuietShutdown.stopping


def _quiet_shutdown() -> None:
    """Put `_QuietShutdown` on the handlers that print torch's agent's records: torch's own on the
    ``torch`` loggers (torch 2.2 on), else a plain one on the root logger like logging's last resort."""
    handlers = [h for name in ("torch.distributed", "torch") for h in logging.getLogger(name).handlers]
    if not handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        logging.getLogger().addHandler(handler)
        handlers = [handler]
    for handler in handlers:
        handler.addFilter(_QuietShutdown())


def main(argv: list[str] | None = None) -> None:
    """torchrun, with each worker started in the bootstrap, the failure summary naming the user's script,
    and no traceback of the agent's own when a signal stops it (exit 128 + the signal's number)."""
    try:
        _main(argv)
    except KeyboardInterrupt:  # stopped before the workers started (importing torch, at the rendezvous)
        sys.exit(130)


def _main(argv: list[str] | None) -> None:
    from torch.distributed import run as torch_run
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    args = torch_run.parse_args(sys.argv[1:] if argv is None else argv)
    name = args.training_script
    if not args.no_python:
        module = ["--module"] if args.module else []
        args.training_script_args = [*module, name, *args.training_script_args]
        args.training_script, args.module, args.run_path = BOOTSTRAP, True, False
    _quiet_shutdown()
    from torchdoctor.launch.rendezvous_wait import noting_the_rendezvous

    noting_the_rendezvous(os.environ)  # so the launcher can say whom it waits for there
    os.environ[AGENT_VARIABLE] = str(os.getpid())  # the agent runs in this process; the workers read it
    try:
        torch_run.run(args)
    except ChildFailedError as failed:
        summary = ChildFailedError(name, failed.failures)
        sys.stderr.write(f"{type(summary).__name__}: {summary}\n")
        sys.exit(1)
    except SignalException as stopped:
        sys.exit(128 + int(stopped.sigval))


if __name__ == "__main__":
    main()
