"""``torchdoctor launch``: torchrun's command line, run under torch's own launcher with our additions.

`torchdoctor launch` takes every flag ``torchrun`` takes, spelled as torchrun spells them, read by torch's
own parser (``torch.distributed.run.get_args_parser``), so the two cannot drift apart. It adds: every worker
starts in ``torchdoctor.distributed.bootstrap`` (debug mode, watchdog hooks), a hang watchdog, a config file
(accelerate's keys), checks before torchrun starts (`preflight`), and Ctrl-C stops everything it started.
Settings come from the command line, then the config file, then torchrun's defaults.

On several nodes every node waits at the rendezvous for the others, at most `rendezvous_timeout` seconds (the
watchdog's timeout when there is one); a node that gives up says which nodes never came.
"""

from __future__ import annotations

import argparse
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
from typing import Any

from torchdoctor.distributed import preflight, torchrun, watchdog
from torchdoctor.distributed.bootstrap import STARTED_VARIABLE
from torchdoctor.distributed.torchrun import MAX_NPROC_PER_NODE, flag
from torchdoctor.errors import BadInput, require_count, require_readable_file, require_seconds

MAX_NNODES = 100_000
MAX_RESTARTS = 1_000_000
# What torch.distributed.run waits at the rendezvous when not told otherwise (static `timeout`, c10d
# `join_timeout`), in torch 2.1 to 2.13.
TORCH_RENDEZVOUS_TIMEOUT = 600
# How much longer than the rendezvous timeout the launcher gives torchrun before stopping it itself.
RENDEZVOUS_GRACE = 60
# The ports torchrun uses when none is given: static (--master-port) and c10d (--rdzv-endpoint HOST).
STATIC_PORT, C10D_PORT = 29500, 29400
# `nproc_per_node` words torch knows besides a number (torch.distributed.run.determine_local_world_size).
NPROC_WORDS = ("auto", "cpu", "gpu", "xpu")
# Seconds the workers get to end after Ctrl-C, per signal, before the next one (SIGTERM, then SIGKILL).
STOP_GRACE = 5.0

# accelerate's config key -> torchrun's flag (its argparse name)
CONFIG_FLAGS = {
    "num_machines": "nnodes",
    "machine_rank": "node_rank",
    "main_process_ip": "master_addr",
    "main_process_port": "master_port",
    "rdzv_backend": "rdzv_backend",
}


@dataclass
class LaunchOptions:
    """Everything ``torchdoctor launch`` was asked for.

    ``flags`` are torchrun's flags that were said, keyed by their argparse name (``nproc_per_node``,
    ``rdzv_endpoint``, ``module``, …) with the values torch's parser gives them. ``program`` is the script
    (or module, with ``module``) and its arguments."""

    flags: dict[str, Any] = field(default_factory=dict)
    program: list[str] = field(default_factory=list)
    gpu_ids: str | None = None
    debug: bool = False
    watchdog: float | None = None
    config: str | None = None
    verbose: bool = False
    # flag -> where its value came from when not from the command line: "config.yaml line 3: num_machines:"
    sources: dict[str, str] = field(default_factory=dict)

    def said(self, name: str) -> str:
        """How the user gave flag ``name``: its config file line, else the flag."""
        return self.sources.get(name, flag(name))


# ---------------------------------------------------------------------------------------------------------
# The command line


def command_line_parser() -> argparse.ArgumentParser:
    """torch's own torchrun parser with ``torchdoctor launch``'s flags added; an option left out is absent
    from the result (not torch's default), so that only what the user said is passed on."""
    from torch.distributed.run import get_args_parser

    parser = get_args_parser()
    parser.prog = "torchdoctor launch"
    parser.description = (
        "Run a training script as torchrun does (every torchrun flag, as torchrun spells it), with "
        "debug-mode collectives, a hang watchdog, a config file and checks before the start. Options "
        "after the script go to the script. Exit status: the run's; 2 for bad input; 1 when a check "
        "before the start failed; 130 after Ctrl-C."
    )
    for action in parser._actions:  # argparse keeps no public list of them
        if action.option_strings and action.dest != "help":
            action.default = argparse.SUPPRESS
    ours = parser.add_argument_group("torchdoctor")
    ours.add_argument(
        "--debug", action="store_true", help="Check every collective's shapes across ranks first."
    )
    ours.add_argument(
        "--watchdog",
        metavar="SECONDS",
        help="After SECONDS without progress: report where every rank waits, stop the run. On several "
        "nodes, also the longest wait for the other nodes to join (else torch's 600).",
    )
    ours.add_argument("--config", metavar="FILE", help="YAML settings (accelerate's config keys).")
    ours.add_argument("--verbose", "-v", action="store_true", help="Print the torchrun command line first.")

    def refuse(message: str):
        raise BadInput(_usage_message(message))

    parser.error = refuse
    return parser


def _usage_message(message: str) -> str:
    if message.startswith("unrecognized arguments:"):
        unknown = message.split(":", 1)[1].split()[0]
        return (
            f"no such option: {unknown} (see `torchdoctor launch --help`; options after the script go "
            "to the script)"
        )
    if message.startswith("the following arguments are required"):
        return "no script given: torchdoctor launch [OPTIONS] SCRIPT [ARGS] (see `torchdoctor launch --help`)"
    return message


def parse_command_line(argv: list[str]) -> LaunchOptions:
    """The options of ``torchdoctor launch ARGV``; raises `BadInput` for anything torch's parser or ours
    refuses. ``--help`` prints the help and raises `SystemExit` (0)."""
    parsed = vars(command_line_parser().parse_args(argv))
    ours = {name: parsed.pop(name, None) for name in ("debug", "watchdog", "config", "verbose")}
    program = [parsed.pop("training_script"), *parsed.pop("training_script_args")]
    return LaunchOptions(
        flags=parsed,
        program=program,
        debug=bool(ours["debug"]),
        watchdog=_seconds("--watchdog", ours["watchdog"]),
        config=ours["config"],
        verbose=bool(ours["verbose"]),
    )


def _seconds(name: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"{name} {text!r}: not a number of seconds") from None
    require_seconds(name, value)
    return value


# ---------------------------------------------------------------------------------------------------------
# The config file


def merge(cli: LaunchOptions, config: Mapping) -> LaunchOptions:
    """The options in effect: the command line where it said something, else the config file.

    The file counts ``num_processes`` over every machine, as accelerate does; torchrun wants it per node.
    A value taken from the file keeps its file and line (from `load_config`'s ``where``) in ``sources``.
    """
    where = getattr(config, "where", {})
    flags, sources = dict(cli.flags), dict(cli.sources)
    for key, name in CONFIG_FLAGS.items():
        if name not in flags and config.get(key) is not None:
            flags[name] = str(config[key]) if name == "nnodes" else config[key]
            sources[name] = where.get(key, f"{key}:")
    total = config.get("num_processes", -1)
    if "nproc_per_node" not in flags and total > 0:  # accelerate writes -1 for "not said"
        machines = nnodes_range(flags.get("nnodes"), sources)[1]
        said = where.get("num_processes", "num_processes:")
        counted = "num_machines" if "nnodes" in sources else "--nnodes"
        if total % machines:
            raise BadInput(
                f"{said} {total} processes cannot be shared evenly by {machines} machines "
                f"({counted}); make it a multiple"
            )
        if total // machines > MAX_NPROC_PER_NODE:
            raise BadInput(
                f"{said} {total} processes over {machines} machines ({counted}) is {total // machines} per "
                f"machine; at most {MAX_NPROC_PER_NODE}"
            )
        flags["nproc_per_node"] = str(total // machines)
        sources["nproc_per_node"] = said
    gpu_ids = cli.gpu_ids if cli.gpu_ids is not None else config.get("gpu_ids")
    for key, given in (("gpu_ids", cli.gpu_ids), ("watchdog", cli.watchdog)):
        if given is None and key in where:
            sources[key] = where[key]
    return LaunchOptions(
        flags=flags,
        program=list(cli.program),
        gpu_ids=None if gpu_ids is None else str(gpu_ids),
        debug=cli.debug or bool(config.get("debug", False)),
        watchdog=cli.watchdog if cli.watchdog is not None else config.get("watchdog"),
        config=cli.config,
        verbose=cli.verbose,
        sources=sources,
    )


# ---------------------------------------------------------------------------------------------------------
# Checking the values


def nnodes_range(text: str | None, sources: Mapping[str, str] | None = None) -> tuple[int, int]:
    """``"2"`` -> (2, 2), ``"1:4"`` -> (1, 4), as torchrun reads ``--nnodes``; None -> (1, 1).
    Raises `BadInput` naming the value."""
    if text is None:
        return 1, 1
    said = (sources or {}).get("nnodes", "--nnodes")
    parts = str(text).split(":")
    if len(parts) > 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise BadInput(f"{said} {text}: give a number of nodes, or MIN:MAX (e.g. 1:4)")
    low, high = int(parts[0]), int(parts[-1])
    if not 1 <= low <= high <= MAX_NNODES:
        if len(parts) == 1:
            raise BadInput(f"{said} {text}: must be between 1 and {MAX_NNODES}")
        raise BadInput(f"{said} {text}: need 1 <= MIN <= MAX <= {MAX_NNODES}")
    return low, high


def validate(options: LaunchOptions) -> None:
    """Raise `BadInput` naming the first value that cannot work: its flag, or its config file and line."""
    flags, said = options.flags, options.said
    nproc = flags.get("nproc_per_node")
    if nproc is not None and str(nproc) not in NPROC_WORDS:
        if not (str(nproc).isascii() and str(nproc).strip().isdigit()):
            raise BadInput(
                f"{said('nproc_per_node')} {nproc}: give a number, or one of {', '.join(NPROC_WORDS)}"
            )
        require_count(said("nproc_per_node"), int(nproc), 1, MAX_NPROC_PER_NODE)
    _, most = nnodes_range(flags.get("nnodes"), options.sources)
    rank = flags.get("node_rank")
    if rank is not None and not 0 <= rank < most:
        counted = f"{'num_machines' if 'nnodes' in options.sources else '--nnodes'} is {flags.get('nnodes')}"
        raise BadInput(
            f"{said('node_rank')} {rank}: must be between 0 and {most - 1}, as "
            + (counted if "nnodes" in flags else "there is 1 node (--nnodes not given)")
        )
    require_count(said("master_port"), flags.get("master_port"), 1, 65535)
    for name in ("master_addr", "local_addr"):
        value = flags.get(name)
        if value is not None and (not value.strip() or any(c.isspace() for c in value)):
            raise BadInput(f"{said(name)} {value!r}: give a host name or an IP address")
    if flags.get("rdzv_endpoint"):
        try:
            torchrun.parse_endpoint(flags["rdzv_endpoint"], default_port=C10D_PORT)
        except ValueError as error:
            raise BadInput(f"{said('rdzv_endpoint')}: {error}") from None
    backend = flags.get("rdzv_backend")
    if backend is not None and "rdzv_backend" in options.sources and backend not in ("static", "c10d"):
        raise BadInput(f"{said('rdzv_backend')} {backend!r}: choose static or c10d")
    if backend is not None and not str(backend).strip():
        raise BadInput(f"{said('rdzv_backend')} '': choose static or c10d (or another backend torch has)")
    conf = flags.get("rdzv_conf")
    if conf:
        for item in conf.split(","):
            key, equals, value = item.partition("=")
            if not (equals and key.strip() and value.strip()):
                raise BadInput(f"--rdzv-conf {conf!r}: {item!r} is not KEY=VALUE (e.g. join_timeout=600)")
    require_count("--max-restarts", flags.get("max_restarts"), 0, MAX_RESTARTS)
    if flags.get("monitor_interval") is not None:
        require_seconds("--monitor-interval", flags["monitor_interval"], maximum=3600)
    if flags.get("shutdown_timeout") is not None:
        require_count("--shutdown-timeout", flags["shutdown_timeout"], 0, 7 * 24 * 3600)
    for name in ("redirects", "tee"):
        if flags.get(name) is not None:
            _check_std(name, flags[name])
    ranks = flags.get("local_ranks_filter")
    if ranks and not all(r.strip().isascii() and r.strip().isdigit() for r in ranks.split(",")):
        raise BadInput(f"--local-ranks-filter {ranks!r}: give local ranks separated by commas, e.g. 0,1")
    for name in ("signals_to_handle",):
        for sig in str(flags.get(name) or "").split(","):
            if sig.strip() and not hasattr(signal, sig.strip()):
                raise BadInput(
                    f"--signals-to-handle {flags[name]!r}: no signal {sig.strip()!r} (e.g. SIGTERM,SIGINT)"
                )
    log_dir = flags.get("log_dir")
    if log_dir is not None and os.path.lexists(log_dir):
        from torchdoctor.errors import require_folder

        require_folder("--log-dir", log_dir)
    elif log_dir is not None and not log_dir.strip():
        raise BadInput("--log-dir '': empty; give a folder")
    if options.gpu_ids is not None:
        _check_gpu_ids(options)
    if options.watchdog is not None:
        require_seconds(said("watchdog"), options.watchdog)
    if flags.get("no_python") and (options.debug or options.watchdog is not None):
        asked = "--debug" if options.debug else "--watchdog"
        raise BadInput(
            f"{asked} needs a Python script, and --no-python runs {options.program[0]!r} as a program"
        )
    if flags.get("no_python") and flags.get("module"):
        raise BadInput("--no-python and -m/--module together: -m runs a Python module, --no-python a program")


def _check_std(name: str, value: str) -> None:
    """torch's own reading of ``--redirects``/``--tee``: ``0``-``3``, or ``LOCAL_RANK:N,...``."""
    from torch.distributed.elastic.multiprocessing.api import Std

    try:
        Std.from_str(str(value))
    except (ValueError, KeyError, TypeError):
        raise BadInput(
            f"{flag(name)} {value!r}: give 0 (none), 1 (stdout), 2 (stderr) or 3 (both), or per local rank "
            "such as 0:3,1:1"
        ) from None


def _check_gpu_ids(options: LaunchOptions) -> None:
    ids = options.gpu_ids
    if ids == "all":
        return
    said = options.sources.get("gpu_ids", "gpu_ids:")
    parts = [p.strip() for p in str(ids).split(",")]
    for part in parts:
        if not (part.isascii() and part.isdigit()) and not part.startswith(("GPU-", "MIG-")):
            raise BadInput(f"{said} {ids!r}: {part!r} is not a GPU index (give e.g. 0,1 or all)")


def check_script(options: LaunchOptions) -> None:
    """Raise `BadInput` unless the program can be started: a readable script file (a module is found
    by the workers themselves; with ``--no-python`` an executable)."""
    target = options.program[0]
    if options.flags.get("module"):
        if not target.strip() or any(c.isspace() or c in "/\\" for c in target):
            raise BadInput(f"-m {target!r}: give a module name such as pkg.train")
        return
    if options.flags.get("no_python"):
        if shutil.which(target) is None:
            raise BadInput(f"program {target!r} (--no-python): not found, or not executable")
        return
    require_readable_file("script", target)


def rendezvous_timeout(options: LaunchOptions) -> int:
    """Whole seconds a node waits at the rendezvous for the other nodes: the watchdog's timeout when there
    is one (a node that never comes is a hang like any other), else torch's default."""
    if options.watchdog is None:
        return TORCH_RENDEZVOUS_TIMEOUT
    return max(1, math.ceil(options.watchdog))


# ---------------------------------------------------------------------------------------------------------
# The rendezvous


def is_standalone(options: LaunchOptions) -> bool:
    """Whether this run needs no rendezvous address: ``--standalone``, or one node and nothing said about
    where to meet (then a free port, no clash with another job on the machine)."""
    flags = options.flags
    if flags.get("standalone"):
        return True
    said_where = any(flags.get(n) for n in ("rdzv_endpoint", "master_addr", "master_port", "rdzv_backend"))
    return not said_where and nnodes_range(flags.get("nnodes"))[1] == 1


def backend(options: LaunchOptions) -> str:
    """The rendezvous backend in effect (torchrun's default is static)."""
    return "c10d" if is_standalone(options) else str(options.flags.get("rdzv_backend") or "static")


def endpoint(options: LaunchOptions) -> tuple[str, int]:
    """Where the nodes meet: ``--rdzv-endpoint``, else ``--master-addr``:``--master-port``."""
    flags = options.flags
    if flags.get("rdzv_endpoint"):
        default = C10D_PORT if backend(options) == "c10d" else flags.get("master_port") or STATIC_PORT
        return torchrun.parse_endpoint(flags["rdzv_endpoint"], default_port=default)
    return flags.get("master_addr") or "127.0.0.1", flags.get("master_port") or STATIC_PORT


def preflight_findings(options: LaunchOptions, environ: Mapping[str, str] | None = None) -> list:
    """`preflight`'s findings for this node's rendezvous (only the interfaces when standalone or when the
    backend is neither static nor c10d)."""
    environ = os.environ if environ is None else environ
    if is_standalone(options) or backend(options) not in ("static", "c10d"):
        return [preflight.check_interfaces(environ)]
    host, port = endpoint(options)
    hosted = (options.flags.get("node_rank") or 0) == 0 if backend(options) == "static" else None
    return preflight.preflight(
        host,
        port,
        hosted_here=hosted,
        port_flag="--rdzv-endpoint" if options.flags.get("rdzv_endpoint") else "--master-port",
        single_node=nnodes_range(options.flags.get("nnodes"))[1] == 1,
        environ=environ,
    )


def torchrun_flags(options: LaunchOptions, log_dir: str | None = None) -> dict[str, Any]:
    """The flags torchrun gets: the user's, then ours — ``--standalone`` on one node with nothing said
    about the rendezvous, the rendezvous timeout from the watchdog, a log folder of ours when none is
    given (torchrun would leave a ``torchelastic_*`` folder behind in the temporary directory)."""
    flags = dict(options.flags)
    if is_standalone(options):
        flags["standalone"] = True
    elif nnodes_range(flags.get("nnodes"))[1] > 1 or options.watchdog is not None:
        timeout = rendezvous_timeout(options)
        if backend(options) == "c10d":
            # read_timeout (default 60 s) bounds reaching the store on the host node
            ours = {"join_timeout": timeout, **({"read_timeout": timeout} if timeout < 60 else {})}
        else:
            ours = {"timeout": timeout}
        given = dict(i.split("=", 1) for i in flags.get("rdzv_conf", "").split(",") if "=" in i)
        flags["rdzv_conf"] = ",".join(f"{k}={v}" for k, v in {**ours, **given}.items())
    if flags.get("log_dir") is None and log_dir is not None:
        flags["log_dir"] = log_dir
    flags.pop("run_path", None)  # the bootstrap runs the script with runpy either way
    return flags


def torchrun_command(options: LaunchOptions, log_dir: str | None = None) -> list[str]:
    """The command line that runs the program: torchrun (through `torchdoctor.distributed.torchrun`, so
    that each worker starts in the bootstrap and torchrun's summary names the script)."""
    return torchrun.torchrun_command(
        torchrun_flags(options, log_dir), options.program, launcher="torchdoctor.distributed.torchrun"
    )


def never_joined(options: LaunchOptions, waited: float) -> str:
    """What the launcher says when it waited ``waited`` seconds at the rendezvous and no worker started:
    which node this is, which nodes it waited for, where, and what to check."""
    nnodes = nnodes_range(options.flags.get("nnodes"))[1]
    host, port = endpoint(options)
    where = f"{host}:{port}"
    if backend(options) == "c10d":
        head = (
            f"torchdoctor: this node waited {waited:.0f}s at the c10d rendezvous {where} for {nnodes} nodes "
            "in all; they did not all come."
        )
    else:
        rank = options.flags.get("node_rank") or 0
        others = [r for r in range(nnodes) if r != rank]
        which = f"node rank {others[0]}" if len(others) == 1 else f"node ranks {_span(others)}"
        head = (
            f"torchdoctor: node rank {rank} of {nnodes} waited {waited:.0f}s for the other "
            f"node{'s' if len(others) > 1 else ''} ({which}) at {where}; "
            + ("none came." if len(others) == 1 else "not all of them came.")
        )
    start = "its own --node-rank and " if backend(options) != "c10d" else ""
    return (
        f"{head} Start `torchdoctor launch` on every node with --nnodes {nnodes}, {start}"
        f"the same --master-addr/--master-port, and check that each can reach {where} (address, firewall).\n"
    )


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


# ---------------------------------------------------------------------------------------------------------
# Running


class Stopped(Exception):
    """The launcher was told to stop (Ctrl-C, SIGTERM from ``kill`` or ``scancel``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def launch(options: LaunchOptions, stream=None) -> int:
    """Run the program on this node as ``options`` say; the exit status of the run.

    Checks first (bad input raises `BadInput`; a failed pre-flight check is printed with its fix and
    returns 1). With a watchdog, a hang ends the run and the report goes to ``stream`` (default
    ``sys.stderr``), as does the torchrun command line with ``verbose``, and, on several nodes, the names
    of the nodes that never came to the rendezvous. Ctrl-C or SIGTERM stops every process the launch
    started, removes its temporary files, says so in one line and returns 128 + the signal's number.
    """
    check_script(options)
    validate(options)
    stream = stream or sys.stderr
    found = preflight_findings(options)
    for finding in found:
        if finding.status in ("fail", "warn"):
            label = "error: " if finding.status == "fail" else ""
            stream.write(f"torchdoctor: {label}{finding.summary}; {finding.fix}\n")
    if preflight.failures(found):
        stream.flush()
        return 1
    prefix = "torchdoctor-launch-" if options.watchdog is None else "torchdoctor-watchdog-"
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    result = watchdog.Supervision(1)
    try:
        command = torchrun_command(options, str(directory / "torchrun"))
        if options.verbose:
            stream.write(f"torchdoctor: running {shlex.join(command)}\n")
            stream.flush()
        env = worker_environment(options)
        env[STARTED_VARIABLE] = str(directory)  # each worker leaves a mark there: the rendezvous was over
        began = time.monotonic()
        with _stopped_by_signals():
            try:
                if options.watchdog is None:
                    process = _start(command, env)
                    result = watchdog.Supervision(_wait(process))
                else:
                    result = _run_watched(command, env, directory, options)
            except Stopped as stop:
                return _interrupted(stop.signum, stream)
        waited, started = time.monotonic() - began, any(directory.glob("started.*"))
    finally:
        if not result.report:  # kept after a hang: the report names the stack files
            shutil.rmtree(directory, ignore_errors=True)
    if result.report:
        stream.write("\n" + result.report)
    elif result.returncode != 0 and nnodes_range(options.flags.get("nnodes"))[1] > 1 and not started:
        if waited >= rendezvous_timeout(options):  # else torchrun failed otherwise, and said how
            stream.write(never_joined(options, waited))
    stream.flush()
    return result.returncode


_running: list[subprocess.Popen] = []  # the launcher of this run, for the stop on a signal


def _wait(process: subprocess.Popen) -> int:
    returncode = process.wait()
    _running.remove(process)  # not on `Stopped`: `_interrupted` stops it
    return returncode


def _interrupted(signum: int, stream) -> int:
    stopped = 0
    for process in list(_running):
        stopped += torchrun.stop(process, grace=STOP_GRACE)
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    stream.write(f"torchdoctor: stopped by {name}; ended the {stopped} processes of this launch\n")
    stream.flush()
    return 128 + signum


@contextlib.contextmanager
def _stopped_by_signals():
    """While the run lasts, SIGINT and SIGTERM raise `Stopped` in the main thread, so that the launcher
    stops everything it started instead of dying alone and leaving the workers behind."""
    if threading.current_thread() is not threading.main_thread():  # only it may set handlers
        yield
        return
    _signals["pending"] = 0
    previous = {signum: signal.signal(signum, _raise_stopped) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _start(command: list[str], env: dict[str, str], **popen) -> subprocess.Popen:
    """`torchrun.start`, remembered in `_running` before a stop signal can act (blocking the signals
    instead would block them in torchrun too, which inherits the mask)."""
    _signals["starting"] = True
    try:
        process = torchrun.start(command, env, **popen)
        _running.append(process)
    finally:
        _signals["starting"] = False
    if _signals["pending"]:
        raise Stopped(_signals["pending"])
    return process


_signals = {"starting": False, "pending": 0}


def _raise_stopped(signum, frame) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the stop short
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _signals["starting"]:
        _signals["pending"] = signum
        return
    raise Stopped(signum)


def _run_watched(
    command: list[str], env: dict[str, str], directory: Path, options: LaunchOptions
) -> watchdog.Supervision:
    env[watchdog.DIR_VARIABLE] = str(directory)
    env[watchdog.SECONDS_VARIABLE] = str(options.watchdog)
    # torchrun gives up on a missing node by itself; should it not, the launcher stops it a little later
    several = nnodes_range(options.flags.get("nnodes"))[1] > 1
    start_timeout = rendezvous_timeout(options) + RENDEZVOUS_GRACE if several else None
    process = _start(command, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        return watchdog.supervise(
            process,
            directory,
            options.watchdog,
            lambda: torchrun.stop(process, grace=STOP_GRACE),
            start_timeout=start_timeout,
        )
    except Stopped:
        raise  # `_interrupted` stops it
    except BaseException:
        torchrun.stop(process, grace=STOP_GRACE)
        _running.remove(process)
        raise
    else:
        _running.remove(process)
