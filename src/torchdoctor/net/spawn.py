"""Starting the smoke test's ranks and waiting for them, every wait bounded.

On one host (`fork_ranks`) the ranks are forked from this process, which has imported torch already: they
start in milliseconds instead of importing torch again each (seconds), and rank 0 hosts the job's store at
``MASTER_ADDR:MASTER_PORT``. Over several hosts (`launch_over_hosts`) the same command runs on each under
torch's elastic launcher, whose c10d rendezvous gives out the ranks, with a join timeout so that a node that
never comes is a verdict, not a hang.

Either way each rank writes its `RankState` into a temporary folder read back here, and keeps its stdout and
stderr under ``log_dir/<run>/attempt_0/<local rank>/`` (torch's launcher's layout); the whole run is bounded by
a deadline, and everything started is stopped on the way out, on Ctrl-C too.
"""

from __future__ import annotations

import importlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from torchdoctor.net.rank_state import RankState, read_states
from torchdoctor.net.worker import STATE_DIR_VARIABLE, WorkerOptions

# Joining and, over several hosts, importing torch take a few seconds before the first stage starts.
STARTUP_ALLOWANCE_S = 40.0
DEFAULT_WORKER = "torchdoctor.net.worker"
# A rank asked to stop gets this long before it is killed.
STOP_GRACE_S = 5.0

OnPoll = Callable[[dict[int, RankState]], None]


@dataclass
class RanksRun:
    """What one run of the ranks left behind: each rank's state, how each process ended, their output."""

    states: dict[int, RankState]
    world_size: int
    finished: bool  # False: stopped at the deadline
    log_dir: Path
    output: str = ""  # torch's launcher's own output (over several hosts)
    exits: dict[int, dict] = field(
        default_factory=dict
    )  # rank -> {"host", "exitcode", "killed", "traceback"}
    logs: dict[int, dict[str, str]] = field(default_factory=dict)  # local rank -> {"stdout", "stderr"}


def default_nproc(environ: Mapping[str, str] | None = None, root: Path = Path("/")) -> int:
    """One worker per visible GPU, or 2 on a machine without GPUs.

    Read from ``CUDA_VISIBLE_DEVICES`` and the NVIDIA driver's ``/proc`` entries rather than by asking torch,
    which would start CUDA in this process before the ranks are forked from it.
    """
    environ = os.environ if environ is None else environ
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        count = len([d for d in visible.split(",") if d.strip() and not d.strip().startswith("-")])
        return count or 2
    gpus = root / "proc/driver/nvidia/gpus"
    count = len(list(gpus.iterdir())) if gpus.is_dir() else 0
    if count == 0 and (root / "dev/kfd").exists():  # ROCm: ask torch, which knows the devices
        import torch

        count = torch.cuda.device_count()
    return count or 2


def free_port() -> int:
    """A TCP port nothing listens on now (rank 0 opens the store there a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def worker_logs(log_dir: Path) -> dict[int, dict[str, str]]:
    """Each local rank's kept ``stdout``/``stderr`` (``<run>/attempt_0/<local_rank>/``)."""
    logs: dict[int, dict[str, str]] = {}
    for path in sorted(Path(log_dir).glob("*/attempt_*/*/std*.log")):
        local_rank = int(path.parent.name)
        logs.setdefault(local_rank, {})[path.stem] = path.read_text(errors="replace")
    return logs


def fork_ranks(
    nproc: int,
    options: WorkerOptions,
    address: tuple[str, int],
    deadline_s: float,
    log_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    on_poll: OnPoll | None = None,
    worker: str = DEFAULT_WORKER,
) -> RanksRun:
    """Fork ``nproc`` ranks of ``worker`` (a module offering a `Worker` class) on this host, wait at most
    ``deadline_s`` seconds for them, and return what they left.

    ``address`` is ``(MASTER_ADDR, MASTER_PORT)``: rank 0 opens the store there. When one rank fails the
    others are stopped, as torch's launcher does. ``on_poll`` sees the states read so far, a few times a second.
    """
    import torch  # noqa: F401  (imported once here, so that every forked rank has it already)

    importlib.import_module(worker)
    environ = dict(os.environ if environ is None else environ)
    environ.setdefault("OMP_NUM_THREADS", "1")
    environ.update(
        MASTER_ADDR=address[0],
        MASTER_PORT=str(address[1]),
        WORLD_SIZE=str(nproc),
        LOCAL_WORLD_SIZE=str(nproc),
        GROUP_RANK="0",
    )
    environ.pop("TORCHELASTIC_USE_AGENT_STORE", None)
    host = socket.gethostname()
    with _sigterm_as_interrupt(), _folders(log_dir) as (state_dir, logs_at):
        environ[STATE_DIR_VARIABLE] = str(state_dir)
        run = logs_at / f"td-{uuid.uuid4().hex[:8]}" / "attempt_0"
        pids: dict[int, int] = {}
        try:
            for rank in range(nproc):
                (run / str(rank)).mkdir(parents=True)
                env = {**environ, "RANK": str(rank), "LOCAL_RANK": str(rank)}
                pids[rank] = _fork_rank(env, options, worker, run / str(rank), group=pids.get(0, 0))
            exits, finished = _wait_for_ranks(pids, time.monotonic() + deadline_s, state_dir, on_poll)
        finally:
            _stop_ranks(pids)
        for failure in exits.values():
            failure["host"] = host
        return RanksRun(
            read_states(state_dir), nproc, finished, logs_at, exits=exits, logs=worker_logs(logs_at)
        )


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While ranks run, SIGTERM stops them and cleans up as Ctrl-C does (a scheduler's stop, ``kill PID``)."""

    def interrupt(signum, frame) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave SIGTERM as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _folders:
    """A temporary folder for the ranks' states, and one for their logs unless ``log_dir`` is given; both
    removed on the way out (the logs are read first)."""

    def __init__(self, log_dir: Path | None) -> None:
        self.log_dir = log_dir

    def __enter__(self) -> tuple[Path, Path]:
        self.states = Path(tempfile.mkdtemp(prefix="torchdoctor-net-"))
        self.logs = self.log_dir or Path(tempfile.mkdtemp(prefix="torchdoctor-net-logs-"))
        self.logs.mkdir(parents=True, exist_ok=True)
        return self.states, self.logs

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.states, ignore_errors=True)
        if self.log_dir is None:
            shutil.rmtree(self.logs, ignore_errors=True)


def _fork_rank(env: dict[str, str], options: WorkerOptions, worker: str, logs: Path, group: int) -> int:
    """Fork one rank into process group ``group`` (0: a new one); the child never returns from here."""
    parent = os.getpid()
    # Ctrl-C or SIGTERM in the instant after the fork would reach the child while it still has the parent's
    # handlers (a traceback on the parent's terminal): hold them until the child has its own.
    stop_signals = {signal.SIGINT, signal.SIGTERM}
    held = signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    pid = os.fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        try:
            os.setpgid(pid, group or pid)  # both sides set it, so it holds whichever runs first
        except OSError:  # the child got there first, or is already gone
            pass
        return pid
    code = 1
    try:
        for signum in stop_signals:  # the parent decides what Ctrl-C stops; a signal held meanwhile ends us
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        _die_with_parent(parent)
        os.setpgid(0, group)
        for fd, name in ((1, "stdout.log"), (2, "stderr.log")):
            os.dup2(os.open(logs / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
        # fresh file objects: a lock the parent's other threads held at the fork stays held in the old ones
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        os.environ.clear()
        os.environ.update(env)
        import torch

        torch.set_num_threads(_threads(env.get("OMP_NUM_THREADS", "1")))
        state = importlib.import_module(worker).Worker(options, env).run()
        code = 1 if state.error else 0
    except BaseException:  # noqa: BLE001 - a forked rank reports whatever ended it, then leaves by os._exit
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream at exit must not keep a forked rank from leaving
                pass
        os._exit(code)


def _die_with_parent(parent: int) -> None:
    """Have the kernel end this rank if the command that forked it dies, however it dies (SIGKILL included)."""
    from torchdoctor.launch.orphans import die_with_parent

    if not die_with_parent(parent, signal.SIGKILL) and os.getppid() != parent:  # it died already
        os._exit(1)


def _wait_for_ranks(
    pids: dict[int, int], deadline: float, state_dir: Path, on_poll: OnPoll | None
) -> tuple[dict[int, dict], bool]:
    """Wait for every rank to end, at most until ``deadline``; the first failure stops the others.

    Returns rank -> how it ended, for the ranks that did not end with status 0, and whether all ended.
    """
    running, exits, stopping = dict(pids), {}, False
    while running:
        for rank, pid in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                del running[rank]
                code = os.waitstatus_to_exitcode(status)
                if code:
                    exits[rank] = _how_it_ended(code, pid, killed=stopping)
                    stopping = True
        if on_poll is not None:
            on_poll(read_states(state_dir))
        if running and stopping:
            for rank, pid in running.items():
                exits[rank] = _how_it_ended(-signal.SIGTERM, pid, killed=True)
            return exits, True
        if running and time.monotonic() > deadline:
            return exits, False
        if running:
            time.sleep(0.05)
    return exits, True


def _how_it_ended(code: int, pid: int, killed: bool) -> dict:
    if code < 0:
        name = signal.Signals(-code).name
        why = f"Signal {-code} ({name}) received by PID {pid}"
    else:
        why = f"exited with status {code}"
    return {"exitcode": code, "killed": killed or code == -signal.SIGTERM, "traceback": why}


def _stop_ranks(pids: dict[int, int]) -> None:
    """SIGTERM every rank still running (their process group, with anything they started), then SIGKILL."""
    group = pids.get(0)
    if group is None:
        return
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(group, signum)
        except ProcessLookupError:
            break
        until = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < until and _reap(pids):
            time.sleep(0.05)
    _reap(pids)


def _reap(pids: dict[int, int]) -> bool:
    """Collect the ranks that ended; whether any is still running."""
    alive = False
    for pid in pids.values():
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        alive = alive or not done
    return alive


def launch_over_hosts(
    nproc: int,
    options: WorkerOptions,
    nnodes: int,
    endpoint: str,
    rdzv_id: str,
    deadline_s: float,
    log_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    on_poll: OnPoll | None = None,
    worker: str = DEFAULT_WORKER,
) -> RanksRun:
    """This host's ``nproc`` ranks of a run over ``nnodes`` hosts, under torch's elastic launcher."""
    from torchdoctor.launch import torchrun

    environ = dict(os.environ if environ is None else environ)
    environ.setdefault("OMP_NUM_THREADS", "1")
    with _sigterm_as_interrupt(), _folders(log_dir) as (state_dir, logs_at):
        environ[STATE_DIR_VARIABLE] = str(state_dir)
        command = launcher_command(nproc, options, logs_at, nnodes, endpoint, rdzv_id, worker)
        with tempfile.TemporaryFile(mode="w+") as output:
            process = torchrun.start(command, environ, stdout=output, stderr=output, stdin=subprocess.DEVNULL)
            try:
                finished = _wait_for_launcher(process, time.monotonic() + deadline_s, state_dir, on_poll)
            finally:
                torchrun.stop(process)
            output.seek(0)
            text = output.read()
        return RanksRun(
            read_states(state_dir), nproc * nnodes, finished, logs_at, output=text, logs=worker_logs(logs_at)
        )


def launcher_command(
    nproc: int,
    options: WorkerOptions,
    log_dir: Path,
    nnodes: int,
    endpoint: str,
    rdzv_id: str,
    worker: str = DEFAULT_WORKER,
) -> list[str]:
    """The ``torch.distributed.run`` command line that starts this host's ranks of a run over hosts."""
    import math

    from torchdoctor.launch.torchrun import command_from_flags, parse_endpoint

    if not (math.isfinite(options.timeout) and options.timeout > 0):
        raise ValueError(f"timeout={options.timeout!r}: must be a finite number of seconds above 0")
    parse_endpoint(endpoint)  # several hosts need HOST:PORT; raises ValueError naming it
    wait = max(int(options.timeout), 1)
    flags = {
        "nnodes": nnodes,
        "rdzv_backend": "c10d",
        "rdzv_endpoint": endpoint,
        "rdzv_id": rdzv_id,
        # read_timeout bounds reaching the endpoint, join_timeout waiting for the other nodes
        "rdzv_conf": f"join_timeout={wait},read_timeout={wait},last_call_timeout=1",
        "nproc_per_node": nproc,
        "max_restarts": 0,
        "monitor_interval": 0.2,
        "log_dir": log_dir,
        "redirects": 3,
        "module": True,
    }
    return command_from_flags(flags, [DEFAULT_WORKER, options.to_json(), worker])


def _wait_for_launcher(process, deadline: float, state_dir: Path, on_poll: OnPoll | None) -> bool:
    while process.poll() is None:
        if time.monotonic() > deadline:
            return False
        if on_poll is not None:
            on_poll(read_states(state_dir))
        time.sleep(0.2)
    if on_poll is not None:
        on_poll(read_states(state_dir))
    return True


def _threads(value: str) -> int:
    """The rank's intra-op threads: ``OMP_NUM_THREADS`` when it is a whole number above 0, else 1 (OpenMP
    ignores ``0`` or ``four``, and ``torch.set_num_threads`` refuses them; ``sys.threads`` says so)."""
    value = value.strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1
