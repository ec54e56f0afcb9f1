"""``torchdoctor launch``: run a script under torch's own elastic launcher, ``torch.distributed.run``.

The launcher adds two things to a plain ``torchrun``: every worker starts in
``torchdoctor.distributed.bootstrap`` (debug mode, watchdog hooks), and with a watchdog the run is supervised
and stopped with a report when it hangs. Settings come from the command line, then the config file, then
torchrun's defaults.

On several nodes every node waits at the rendezvous for the others, at most `rendezvous_timeout` seconds (the
watchdog's timeout when there is one); a node that gives up says which nodes never came.
"""

from __future__ import annotations

import contextlib
import math
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
from dataclasses import dataclass, field
from pathlib import Path

from torchdoctor.distributed import watchdog
from torchdoctor.distributed.bootstrap import STARTED_VARIABLE
from torchdoctor.errors import BadInput, require_count, require_seconds

# Far above any real machine or cluster; a value past them is a typo, which torchrun would not refuse.
MAX_NPROC_PER_NODE = 1024
MAX_NNODES = 100_000
# What torch.distributed.run waits at the rendezvous when not told otherwise (static `timeout`, c10d
# `join_timeout`), in torch 2.1 to 2.13.
TORCH_RENDEZVOUS_TIMEOUT = 600
# How much longer than the rendezvous timeout the launcher gives torchrun before stopping it itself.
RENDEZVOUS_GRACE = 60


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
    # option -> where its value came from when not from the command line: "config.yaml line 3: num_machines:"
    sources: dict[str, str] = field(default_factory=dict)


def merge(cli: LaunchOptions, config: Mapping) -> LaunchOptions:
    """The options in effect: the command line where it said something, else the config file.

    The file counts ``num_processes`` over every machine, as accelerate does; torchrun wants it per node.
    A value taken from the file keeps its file and line (from `load_config`'s ``where``) in ``sources``.
    """
    where = getattr(config, "where", {})
    sources: dict[str, str] = {}

    def pick(name: str, key: str, given):
        if given is not None or config.get(key) is None:
            return given
        sources[name] = where.get(key, f"{key}:")
        return config[key]

    nnodes = pick("nnodes", "num_machines", cli.nnodes)
    nproc, total = cli.nproc_per_node, config.get("num_processes", -1)
    machines = 1 if nnodes is None else nnodes
    if nproc is None and total > 0 and machines >= 1:  # accelerate writes -1 for "not said"
        said = where.get("num_processes", "num_processes:")
        counted = "--nnodes" if cli.nnodes is not None else "num_machines"
        if total % machines:
            raise BadInput(
                f"{said} {total} processes cannot be shared evenly by {machines} machines "
                f"({counted}); make it a multiple"
            )
        nproc = total // machines
        if nproc > MAX_NPROC_PER_NODE:
            raise BadInput(
                f"{said} {total} processes over {machines} machines ({counted}) is {nproc} per machine; "
                f"at most {MAX_NPROC_PER_NODE}"
            )
        sources["nproc_per_node"] = said
    gpu_ids = cli.gpu_ids if cli.gpu_ids is not None else config.get("gpu_ids")
    return LaunchOptions(
        nproc_per_node=nproc,
        nnodes=nnodes,
        node_rank=pick("node_rank", "machine_rank", cli.node_rank),
        master_addr=cli.master_addr or config.get("main_process_ip"),
        master_port=pick("master_port", "main_process_port", cli.master_port),
        rdzv_backend=pick("rdzv_backend", "rdzv_backend", cli.rdzv_backend),
        gpu_ids=None if gpu_ids is None else str(gpu_ids),
        debug=cli.debug or bool(config.get("debug", False)),
        watchdog=pick("watchdog", "watchdog", cli.watchdog),
        sources=sources,
    )


def validate(options: LaunchOptions) -> None:
    """Raise `BadInput` naming the first value that cannot work: its flag, or its config file and line."""

    def said(name: str) -> str:
        return options.sources.get(name, "--" + name.replace("_", "-"))

    require_count(said("nnodes"), options.nnodes, 1, MAX_NNODES)
    require_count(said("nproc_per_node"), options.nproc_per_node, 1, MAX_NPROC_PER_NODE)
    nnodes = options.nnodes or 1
    if options.node_rank is not None and not 0 <= options.node_rank < nnodes:
        counted = f"{'num_machines' if 'nnodes' in options.sources else '--nnodes'} is {nnodes}"
        raise BadInput(
            f"{said('node_rank')} {options.node_rank}: must be between 0 and {nnodes - 1}, as "
            + (counted if options.nnodes is not None else "there is 1 node (--nnodes not given)")
        )
    require_count(said("master_port"), options.master_port, 1, 65535)
    require_seconds(said("watchdog"), options.watchdog)
    if options.rdzv_backend not in (None, "static", "c10d"):
        label = options.sources.get("rdzv_backend", "rdzv_backend")  # a key of the file only, no flag
        raise BadInput(f"{label} {options.rdzv_backend!r}: choose static or c10d")


def check_script(script: str) -> None:
    """Raise `BadInput` unless ``script`` is a file that can be read; a ``--name`` that is no file is
    taken for what it surely is, an option ``torchdoctor launch`` does not have."""
    path = Path(script)
    if path.is_dir():
        raise BadInput(f"script {script!r}: is a directory; give the Python file to run")
    if not path.is_file():
        if script.startswith("-") and script != "-":
            raise BadInput(
                f"no such option: {script.split('=')[0]} (see `torchdoctor launch --help`; "
                "options after the script go to the script)"
            )
        raise BadInput(f"script {script!r}: no such file")
    if not os.access(path, os.R_OK):
        raise BadInput(f"script {script!r}: cannot read it (permission denied)")


def rendezvous_timeout(options: LaunchOptions) -> int:
    """Whole seconds a node waits at the rendezvous for the other nodes: the watchdog's timeout when there
    is one (a node that never comes is a hang like any other), else torch's default."""
    if options.watchdog is None:
        return TORCH_RENDEZVOUS_TIMEOUT
    return max(1, math.ceil(options.watchdog))


def torchrun_command(options: LaunchOptions, script: str, args: list[str]) -> list[str]:
    """The ``python -m torch.distributed.run ...`` command line that runs ``script`` in the bootstrap.

    One node with no address or port given runs ``--standalone`` (a free port, no clash with another job);
    otherwise the static rendezvous at ``master_addr:master_port``, or c10d at that endpoint, waiting at most
    `rendezvous_timeout` seconds for the other nodes.
    """
    command = [sys.executable, "-m", "torch.distributed.run"]
    command += ["--nproc-per-node", str(options.nproc_per_node or 1)]
    nnodes = options.nnodes or 1
    timeout = rendezvous_timeout(options)
    if nnodes == 1 and options.master_addr is None and options.master_port is None:
        command.append("--standalone")
    elif options.rdzv_backend == "c10d":
        # read_timeout (default 60 s) bounds reaching the store on the host node
        conf = f"join_timeout={timeout}" + (f",read_timeout={timeout}" if timeout < 60 else "")
        command += ["--nnodes", str(nnodes), "--rdzv-backend", "c10d", "--rdzv-endpoint", _endpoint(options)]
        command += ["--rdzv-conf", conf]
    else:
        command += ["--nnodes", str(nnodes), "--node-rank", str(options.node_rank or 0)]
        command += ["--master-addr", options.master_addr or "127.0.0.1"]
        command += ["--master-port", str(options.master_port or 29500)]
        command += ["--rdzv-conf", f"timeout={timeout}"]
    return [*command, "-m", "torchdoctor.distributed.bootstrap", script, *args]


def never_joined(options: LaunchOptions, waited: float) -> str:
    """What the launcher says when it waited ``waited`` seconds at the rendezvous and no worker started:
    which node this is, which nodes it waited for, where, and what to check."""
    nnodes, endpoint = options.nnodes or 1, _endpoint(options)
    if options.rdzv_backend == "c10d":
        head = (
            f"torchdoctor: this node waited {waited:.0f}s at the c10d rendezvous {endpoint} for {nnodes} nodes "
            "in all; they did not all come."
        )
    else:
        rank = options.node_rank or 0
        others = [r for r in range(nnodes) if r != rank]
        which = f"node rank {others[0]}" if len(others) == 1 else f"node ranks {_span(others)}"
        head = (
            f"torchdoctor: node rank {rank} of {nnodes} waited {waited:.0f}s for the other "
            f"node{'s' if len(others) > 1 else ''} ({which}) at {endpoint}; "
            + ("none came." if len(others) == 1 else "not all of them came.")
        )
    start = "its own --node-rank and " if options.rdzv_backend != "c10d" else ""
    return (
        f"{head} Start `torchdoctor launch` on every node with --nnodes {nnodes}, {start}"
        f"the same --master-addr/--master-port, and check that each can reach {endpoint} (address, firewall).\n"
    )


def _endpoint(options: LaunchOptions) -> str:
    return f"{options.master_addr or '127.0.0.1'}:{options.master_port or 29500}"


def _span(ranks: list[int]) -> str:
    """``"1 to 3"`` for consecutive ranks, else ``"0, 2"``."""
    if len(ranks) > 2 and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]} to {ranks[-1]}"
    return ", ".join(str(r) for r in ranks)


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
    does the torchrun command line with ``verbose``, and, on several nodes, the names of the nodes that never
    came to the rendezvous.
    """
    check_script(script)
    validate(options)
    stream = stream or sys.stderr
    command = torchrun_command(options, script, args)
    env = worker_environment(options)
    if verbose:
        stream.write(f"torchdoctor: running {shlex.join(command)}\n")
        stream.flush()
    prefix = "torchdoctor-launch-" if options.watchdog is None else "torchdoctor-watchdog-"
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    env[STARTED_VARIABLE] = str(directory)  # each worker leaves a mark there: the rendezvous was over
    began = time.monotonic()
    result = watchdog.Supervision(1)
    try:
        if options.watchdog is None:
            result = watchdog.Supervision(_run(command, env))
        else:
            result = _run_watched(command, env, directory, options)
        waited, started = time.monotonic() - began, any(directory.glob("started.*"))
    finally:
        if not result.report:  # kept after a hang: the report names the stack files
            shutil.rmtree(directory, ignore_errors=True)
    if result.report:
        stream.write("\n" + result.report)
    elif result.returncode != 0 and (options.nnodes or 1) > 1 and not started:
        if waited >= rendezvous_timeout(options):  # else torchrun failed otherwise, and said how
            stream.write(never_joined(options, waited))
    stream.flush()
    return result.returncode


def _run(command: list[str], env: dict[str, str]) -> int:
    process = subprocess.Popen(command, env=env)
    with _passing_sigterm_to(process):
        try:
            return process.wait()
        except KeyboardInterrupt:  # the terminal sent SIGINT to torchrun too: it stops the workers
            return _wait_after_interrupt(process)


def _run_watched(
    command: list[str], env: dict[str, str], directory: Path, options: LaunchOptions
) -> watchdog.Supervision:
    env[watchdog.DIR_VARIABLE] = str(directory)
    env[watchdog.SECONDS_VARIABLE] = str(options.watchdog)
    # torchrun gives up on a missing node by itself; should it not, the launcher stops it a little later
    start_timeout = rendezvous_timeout(options) + RENDEZVOUS_GRACE if (options.nnodes or 1) > 1 else None
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with _passing_sigterm_to(process):
            return watchdog.supervise(
                process,
                directory,
                options.watchdog,
                lambda: _stop(process, directory),
                start_timeout=start_timeout,
            )
    except KeyboardInterrupt:
        return watchdog.Supervision(_wait_after_interrupt(process))


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
