"""``torchdoctor launch``: run a script under torch's own elastic launcher, ``torch.distributed.run``.

The launcher adds two things to a plain ``torchrun``: every worker starts in
``torchdoctor.distributed.bootstrap`` (debug mode, watchdog hooks), and with a watchdog the run is supervised
and stopped with a report when it hangs. Settings come from the command line, then the config file, then
torchrun's defaults.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchdoctor.distributed import watchdog
from torchdoctor.errors import BadInput


@dataclass
class LaunchOptions:
    """Everything ``torchdoctor launch`` was asked for; ``None`` means "not said"."""

    nproc_per_node: int | None = None
    nnodes: int | None = None
    node_rank: int | None = None
    master_addr: str | None = None
    master_port: int | None = None
    rdzv_backend: str | None = None
    gpu_ids: str | None = None
    debug: bool = False
    watchdog: float | None = None


def merge(cli: LaunchOptions, config: Mapping) -> LaunchOptions:
    """The options in effect: the command line where it said something, else the config file.

    The file counts ``num_processes`` over every machine, as accelerate does; torchrun wants it per node.
    """
    nnodes = cli.nnodes if cli.nnodes is not None else config.get("num_machines")
    nproc = cli.nproc_per_node
    if nproc is None and config.get("num_processes", -1) > 0:  # accelerate writes -1 for "not said"
        total, machines = config["num_processes"], nnodes or 1
        if total % machines:
            raise BadInput(
                f"num_processes: {total} processes cannot be shared evenly by {machines} machines "
                "(num_machines); make it a multiple"
            )
        nproc = total // machines
    gpu_ids = cli.gpu_ids if cli.gpu_ids is not None else config.get("gpu_ids")
    return LaunchOptions(
        nproc_per_node=nproc,
        nnodes=nnodes,
        node_rank=cli.node_rank if cli.node_rank is not None else config.get("machine_rank"),
        master_addr=cli.master_addr or config.get("main_process_ip"),
        master_port=cli.master_port if cli.master_port is not None else config.get("main_process_port"),
        rdzv_backend=cli.rdzv_backend or config.get("rdzv_backend"),
        gpu_ids=None if gpu_ids is None else str(gpu_ids),
        debug=cli.debug or bool(config.get("debug", False)),
        watchdog=cli.watchdog if cli.watchdog is not None else config.get("watchdog"),
    )


def validate(options: LaunchOptions) -> None:
    """Raise `BadInput` naming the first value that cannot work."""
    for name in ("nproc_per_node", "nnodes"):
        value = getattr(options, name)
        if value is not None and value < 1:
            raise BadInput(f"--{name.replace('_', '-')} {value}: must be 1 or more")
    if options.node_rank is not None and not 0 <= options.node_rank < (options.nnodes or 1):
        raise BadInput(
            f"--node-rank {options.node_rank}: must be between 0 and nnodes-1 ({options.nnodes or 1}-1)"
        )
    if options.master_port is not None and not 0 < options.master_port < 65536:
        raise BadInput(f"--master-port {options.master_port}: not a port number (1-65535)")
    if options.watchdog is not None and not options.watchdog > 0:
        raise BadInput(f"--watchdog {options.watchdog:g}: must be a positive number of seconds")
    if options.rdzv_backend not in (None, "static", "c10d"):
        raise BadInput(f"rdzv_backend {options.rdzv_backend!r}: choose static or c10d")


def torchrun_command(options: LaunchOptions, script: str, args: list[str]) -> list[str]:
    """The ``python -m torch.distributed.run ...`` command line that runs ``script`` in the bootstrap.

    One node with no address or port given runs ``--standalone`` (a free port, no clash with another job);
    otherwise the static rendezvous at ``master_addr:master_port``, or c10d at that endpoint.
    """
    command = [sys.executable, "-m", "torch.distributed.run"]
    command += ["--nproc-per-node", str(options.nproc_per_node or 1)]
    nnodes = options.nnodes or 1
    if nnodes == 1 and options.master_addr is None and options.master_port is None:
        command.append("--standalone")
    elif options.rdzv_backend == "c10d":
        endpoint = f"{options.master_addr or '127.0.0.1'}:{options.master_port or 29500}"
        command += ["--nnodes", str(nnodes), "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint]
    else:
        command += ["--nnodes", str(nnodes), "--node-rank", str(options.node_rank or 0)]
        command += ["--master-addr", options.master_addr or "127.0.0.1"]
        command += ["--master-port", str(options.master_port or 29500)]
    return [*command, "-m", "torchdoctor.distributed.bootstrap", script, *args]


def worker_environment(options: LaunchOptions, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the workers start with: ours, plus what the options ask for."""
    env = dict(os.environ if environ is None else environ)
    if options.debug:
        env["TORCHDOCTOR_DEBUG_MODE"] = "1"
    if options.gpu_ids not in (None, "all"):
        env["CUDA_VISIBLE_DEVICES"] = options.gpu_ids
    return env


def launch(options: LaunchOptions, script: str, args: list[str], stream=None, verbose: bool = False) -> int:
    """Run ``script`` with ``args`` on this node as ``options`` say; the exit status of the run.

    With a watchdog, a hang ends the run and the report goes to ``stream`` (default ``sys.stderr``), as
    does the torchrun command line with ``verbose``.
    """
    if not Path(script).is_file():
        raise BadInput(f"script {script!r}: no such file")
    validate(options)
    stream = stream or sys.stderr
    command = torchrun_command(options, script, args)
    env = worker_environment(options)
    if verbose:
        stream.write(f"torchdoctor: running {shlex.join(command)}\n")
        stream.flush()
    if options.watchdog is None:
        process = subprocess.Popen(command, env=env)
        with _passing_sigterm_to(process):
            try:
                return process.wait()
            except KeyboardInterrupt:  # the terminal sent SIGINT to torchrun too: it stops the workers
                return _wait_after_interrupt(process)
    directory = Path(tempfile.mkdtemp(prefix="torchdoctor-watchdog-"))
    env[watchdog.DIR_VARIABLE] = str(directory)
    env[watchdog.SECONDS_VARIABLE] = str(options.watchdog)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    result = watchdog.Supervision(1)
    try:
        with _passing_sigterm_to(process):
            result = watchdog.supervise(
                process, directory, options.watchdog, lambda: _stop(process, directory)
            )
    except KeyboardInterrupt:
        result = watchdog.Supervision(_wait_after_interrupt(process))
    finally:
        if not result.report:  # kept after a hang: the report names the stack files
            shutil.rmtree(directory, ignore_errors=True)
    if result.report:
        stream.write("\n" + result.report)
        stream.flush()
    return result.returncode


@contextlib.contextmanager
def _passing_sigterm_to(process: subprocess.Popen):
    """While the run lasts, a SIGTERM to the launcher (``scancel``, ``kill``) goes to torchrun, which stops the
    workers cleanly, instead of killing the launcher alone and leaving them behind."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: process.send_signal(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _wait_after_interrupt(process: subprocess.Popen) -> int:
    try:
        return process.wait(timeout=60)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        process.kill()
        return process.wait()


def _stop(process: subprocess.Popen, directory: Path, grace: float = 10) -> None:
    """Stop the hung run: torchrun first (SIGKILL: told to stop, it would print pages of its own traceback
    and every worker's "failure" over the report), then its workers, SIGTERM and SIGKILL after ``grace`` s."""
    process.kill()
    process.wait()
    workers = [w["pid"] for w in watchdog.workers_in(directory) if watchdog.is_alive(w["pid"])]
    _signal(workers, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(watchdog.is_alive(pid) for pid in workers):
        time.sleep(0.1)
    _signal([pid for pid in workers if watchdog.is_alive(pid)], signal.SIGKILL)


def _signal(pids: list[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:  # already gone
            pass
