"""``torchdoctor launch``: run what `launch_options` read under torch's own launcher, with our additions.

Every worker starts in ``torchdoctor.launch.bootstrap`` (debug mode, watchdog hooks); the rendezvous is
checked before torchrun starts (`preflight`); a hang watchdog on request; Ctrl-C or SIGTERM stops every
process the launch started and removes its temporary files.

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
from pathlib import Path
from typing import Any

from torchdoctor import environment
from torchdoctor.findings import Finding
from torchdoctor.hang import failure, supervise, worker
from torchdoctor.hang.files import REPORT_FILE, WATCHDOG_PREFIX
from torchdoctor.launch import preflight, stopped_places, torchrun
from torchdoctor.launch.bootstrap import STARTED_VARIABLE
from torchdoctor.launch.options import (
    C10D_PORT,
    STATIC_PORT,
    LaunchOptions,
    check_script,
    nnodes_range,
    validate,
)
from torchdoctor.launch.orphans import temporary_folder
from torchdoctor.rank_list import who

# What torch.distributed.run waits at the rendezvous when not told otherwise (static `timeout`, c10d
# `join_timeout`), in torch 2.1 to 2.13.
TORCH_RENDEZVOUS_TIMEOUT = 600
# How much longer than the rendezvous timeout the launcher gives torchrun before stopping it itself.
RENDEZVOUS_GRACE = 60
# Seconds the workers get to end after Ctrl-C, per signal, before the next one (SIGTERM, then SIGKILL).
STOP_GRACE = 5.0
# Signals that would end the launcher and leave torchrun, in a session of its own, running without it:
# Ctrl-C, kill/scancel, the terminal closing or ssh dropping (SIGHUP), Ctrl-\\, and the user signals and the
# alarm, whose default is to end the process too.
STOP_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
    if hasattr(signal, name)
)


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
        port_flag=_port_said(options),
        single_node=nnodes_range(options.flags.get("nnodes"))[1] == 1,
        environ=environ,
    )


def _port_said(options: LaunchOptions) -> str:
    """How the user gave the rendezvous port: ``--rdzv-endpoint``, ``--master-port`` or its ``PET_*``
    variable (a config file's port is fixed with the flag)."""
    name = "rdzv_endpoint" if options.flags.get("rdzv_endpoint") else "master_port"
    source = options.sources.get(name, "")
    return source if source.startswith("PET_") else torchrun.flag(name)


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


def program_command(options: LaunchOptions, log_dir: str | None = None) -> list[str]:
    """The command line that runs the program: torchrun (through `torchdoctor.launch.torchrun`, so
    that each worker starts in the bootstrap and torchrun's summary names the script)."""
    return torchrun.command_from_flags(
        torchrun_flags(options, log_dir), options.program, launcher="torchdoctor.launch.torchrun"
    )


def unreached(options: LaunchOptions) -> Finding | None:
    """On a node that does not host the rendezvous, after it gave up there: the endpoint tried again
    (`preflight.check_reachable`), as the failure when it does not answer (no answer in seconds, no route),
    else None. A refusal is not that: nothing listens there, the host node never started or gave up too."""
    host, port = endpoint(options)
    if backend(options) == "static":
        if (options.flags.get("node_rank") or 0) == 0:
            return None
    else:
        resolved = preflight.check_host(host)
        if resolved.status != "ok" or any(
            preflight.is_local_address(a) for a in resolved.details["addresses"]
        ):
            return None
    reach = preflight.check_reachable(host, port)
    return reach if reach.status in ("warn", "fail") else None


def never_joined(options: LaunchOptions, waited: float, unreached: Finding | None = None) -> str:
    """What the launcher says when it waited ``waited`` seconds at the rendezvous and no worker started:
    which node this is, which nodes it waited for, where, and what to check. ``unreached``: this node is
    not the rendezvous host and the endpoint does not answer it (`unreached`): then that is what is said,
    not that the others never came, which this node cannot know."""
    nnodes = nnodes_range(options.flags.get("nnodes"))[1]
    host, port = endpoint(options)
    where = f"{host}:{port}"
    if unreached is not None:
        rank = options.flags.get("node_rank")
        static = backend(options) == "static"
        this = f"node rank {rank} of {nnodes}" if static and rank else "this node"
        others = "node rank 0" if static else "the other nodes"
        fix = unreached.fix[:1].upper() + unreached.fix[1:]
        return (
            f"torchdoctor: {this} could not reach the rendezvous at {where} in {waited:.0f}s: "
            f"{unreached.summary} when tried again (a firewall dropping port {port}, or an address the nodes "
            f"do not share), so whether {others} came is not known here. {fix}; on {host}, "
            f"`ss -ltn 'sport = :{port}'` shows whether the launch there listens.\n"
        )
    if backend(options) == "c10d":
        head = (
            f"torchdoctor: this node waited {waited:.0f}s at the c10d rendezvous {where} for {nnodes} nodes "
            "in all; they did not all come."
        )
    else:
        rank = options.flags.get("node_rank") or 0
        others = [r for r in range(nnodes) if r != rank]
        which = who(others, "node rank")
        head = (
            f"torchdoctor: node rank {rank} of {nnodes} waited {waited:.0f}s for the other "
            f"node{'s' if len(others) > 1 else ''} ({which}) at {where}; "
            + ("none came." if len(others) == 1 else "not all of them came.")
        )
    start = "its own --node-rank and " if backend(options) != "c10d" else ""
    said = "--rdzv-endpoint" if options.flags.get("rdzv_endpoint") else "--master-addr/--master-port"
    return (
        f"{head} Start `torchdoctor launch` on every node with --nnodes {nnodes}, {start}"
        f"the same {said}, and check that each can reach {where} (address, firewall).\n"
    )


def worker_environment(options: LaunchOptions, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the workers start with: ours, plus what the options ask for."""
    env = dict(os.environ if environ is None else environ)
    if options.debug:
        env["TORCHDOCTOR_DEBUG_MODE"] = "1"
    if options.gpu_ids not in (None, "all"):
        env["CUDA_VISIBLE_DEVICES"] = options.gpu_ids
    from torchdoctor.stragglers.watch import DIR_VARIABLE, ENABLED_VARIABLE, SPARE_CORE

    if options.stragglers is False:
        env.pop(ENABLED_VARIABLE, None)
    elif options.stragglers or options.watchdog is not None:  # with the watchdog: where its cost allows
        env[ENABLED_VARIABLE] = "1" if options.stragglers else SPARE_CORE
        folder = options.stragglers_dir or options.flags.get("log_dir")
        if folder:
            env[DIR_VARIABLE] = os.path.abspath(folder)
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
    # what torchrun and the workers read from here: refused now in the words `check` uses, not in every rank
    environment.require_valid(environment.TORCHRUN + environment.DEBUG_MODE + environment.LOG_LEVEL)
    stream = stream or sys.stderr
    found = preflight_findings(options)
    for finding in found:
        if finding.status in ("fail", "warn"):
            label = "error: " if finding.status == "fail" else ""
            stream.write(f"torchdoctor: {label}{finding.summary}; {finding.fix}\n")
    if preflight.failures(found):
        stream.flush()
        return 1
    prefix = "torchdoctor-launch-" if options.watchdog is None else WATCHDOG_PREFIX
    # the watchdog's folder is kept after a hang or a failure: with the run's logs where there is a --log-dir, so
    # that `torchdoctor explain LOG_DIR` reads the stacks beside them and a cleaned /tmp does not lose them
    directory = temporary_folder(prefix) if options.watchdog is None else _watchdog_folder(options, prefix)
    result = supervise.Supervision(1)
    ended = ""
    try:
        command = program_command(options, str(directory / "torchrun"))
        if options.verbose:
            stream.write(f"torchdoctor: running {shlex.join(command)}\n")
            stream.flush()
        env = worker_environment(options)
        env[STARTED_VARIABLE] = str(directory)  # each worker leaves a mark there: the rendezvous was over
        began = time.monotonic()
        with _stopped_by_signals():
            try:
                with _while_at_the_rendezvous(options, directory, stream, env):
                    if options.watchdog is None:
                        process = _start(command, env)
                        result = supervise.Supervision(_wait(process))
                    else:
                        result = _run_watched(command, env, directory, options)
            except Stopped as stop:
                return _interrupted(stop.signum, stream, directory)
        waited, started = time.monotonic() - began, any(directory.glob("started.*"))
        if result.returncode != 0 and not result.report:
            ended = ended_early(directory)  # read now: the folder goes below
    finally:
        if not result.report:  # kept after a hang: the report names the stack files
            shutil.rmtree(directory, ignore_errors=True)
    if result.report or ended:
        stream.write("\n" + (result.report or ended))
        beside_the_logs(options, result.report or ended)
    elif result.returncode != 0 and nnodes_range(options.flags.get("nnodes"))[1] > 1 and not started:
        if waited >= rendezvous_timeout(options):  # else torchrun failed otherwise, and said how
            stream.write(never_joined(options, waited, unreached(options)))
    stream.flush()
    return result.returncode


def _watchdog_folder(options: LaunchOptions, prefix: str) -> Path:
    """A new folder for the watchdog's files: in the run's ``--log-dir`` where one is given (made now, as torchrun
    would), else in the system's temporary folder. Its path is absolute: the workers are told it, and a script
    that changes its working directory (Hydra's outputs/...) would write a relative one's files elsewhere."""
    log_dir = options.flags.get("log_dir")
    if log_dir:
        log_dir = os.path.abspath(log_dir)
        os.makedirs(log_dir, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=log_dir or None))


def _while_at_the_rendezvous(options: LaunchOptions, directory: Path, stream, env: dict[str, str]):
    """On several nodes, a line on ``stream`` now and then saying whom this node waits for at the rendezvous
    (`rendezvous_wait`), from the marks torchrun's agent leaves in ``directory`` (named to it in ``env``, which
    torchrun starts with); nothing on one node."""
    nnodes = nnodes_range(options.flags.get("nnodes"))[1]
    if is_standalone(options) or nnodes < 2 or backend(options) not in ("static", "c10d"):
        return contextlib.nullcontext()
    from torchdoctor.launch.rendezvous_wait import FOLDER_VARIABLE, saying_whom_it_waits_for

    env[FOLDER_VARIABLE] = str(directory)  # where torchrun's agent marks the rendezvous
    host, port = endpoint(options)
    rank = (options.flags.get("node_rank") or 0) if backend(options) == "static" else None
    return saying_whom_it_waits_for(
        stream, directory, nnodes, rank, f"{host}:{port}", rendezvous_timeout(options)
    )


def beside_the_logs(options: LaunchOptions, report: str) -> None:
    """The report also in the run's ``--log-dir`` (when one was given), so that `torchdoctor explain LOG_DIR`
    reads it beside the ranks' logs, which a rank stopped by the watchdog ends without an error in."""
    folder = options.flags.get("log_dir")
    if not folder:
        return
    try:
        Path(folder, REPORT_FILE).write_text(report, encoding="utf-8")
    except OSError:  # the folder went, or is not writable: the report on stderr says it all
        pass


def ended_early(directory: Path) -> str:
    """After a failed run without the watchdog: the rank(s) whose script ended while the others were still
    training, from what each worker noted as its script ended in the launch's folder
    (`torchdoctor.hang.failure.ended_early`, the watchdog's reading); "" when it is not that."""
    ranks = sorted({int(p.name.split(".")[1]) for p in directory.glob("started.*") if p.name.count(".") == 2})
    found = failure.ended_early(directory, ranks)
    if found is None:
        return ""
    return "\n".join(supervise.failed_lines(found)) + "\n"


_running: list[subprocess.Popen] = []  # the launcher of this run, for the stop on a signal


def _wait(process: subprocess.Popen) -> int:
    returncode = process.wait()
    _running.remove(process)  # not on `Stopped`: `_interrupted` stops it
    return returncode


def _interrupted(signum: int, stream, directory: Path | None = None) -> int:
    """Stop what this launch started; 128 + ``signum``. After Ctrl-C the command line says "interrupted"
    (as every command does), after where each rank that could not say it itself was (``directory``: the
    launch's folder); after SIGTERM, nobody at a terminal asked: say what stopped the run."""
    stopped = 0
    for process in list(_running):
        stopped += torchrun.stop(process, grace=STOP_GRACE)
        _running.remove(process)
    if signum == signal.SIGINT and directory is not None:
        places = stopped_places.places_of_the_others(directory)
        culprit = stopped_places.odd_rank_line(directory)
        try:
            stream.write("".join(f"{line}\n" for line in [*places, *([culprit] if culprit else [])]))
            stream.flush()
        except (OSError, ValueError):  # the terminal went with the Ctrl-C
            pass
    if signum != signal.SIGINT:
        name = signal.Signals(signum).name
        try:  # after SIGHUP the terminal may be gone
            stream.write(f"torchdoctor: stopped by {name}; ended the {stopped} processes of this launch\n")
            stream.flush()
        except (OSError, ValueError):
            pass
    return 128 + signum


@contextlib.contextmanager
def _stopped_by_signals():
    """While the run lasts, each of `STOP_SIGNALS` raises `Stopped` in the main thread, so that the launcher
    stops everything it started instead of dying alone and leaving the workers behind."""
    if threading.current_thread() is not threading.main_thread():  # only it may set handlers
        yield
        return
    _signals["pending"] = 0
    previous = {signum: signal.signal(signum, _raise_stopped) for signum in STOP_SIGNALS}
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
    for other in STOP_SIGNALS:  # a second Ctrl-C (or the SIGTERM after a SIGHUP) must not cut the stop short
        signal.signal(other, signal.SIG_IGN)
    if _signals["starting"]:
        _signals["pending"] = signum
        return
    raise Stopped(signum)


def _run_watched(
    command: list[str], env: dict[str, str], directory: Path, options: LaunchOptions
) -> supervise.Supervision:
    env[worker.DIR_VARIABLE] = str(directory)
    env[worker.SECONDS_VARIABLE] = str(options.watchdog)
    # torchrun gives up on a missing node by itself; should it not, the launcher stops it a little later
    several = nnodes_range(options.flags.get("nnodes"))[1] > 1
    start_timeout = rendezvous_timeout(options) + RENDEZVOUS_GRACE if several else None
    process = _start(command, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        supervision = supervise.supervise(
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
    _running.remove(process)  # finished: a later stop signal has nothing of this run to end
    return supervision
