"""``torchdoctor net``'s run: the smoke test (and the bench) from one `NetOptions` to findings.

Three ways to run, chosen by where the command finds itself:

- under torchrun, srun or mpirun, this process is one rank: it runs the test itself and rank 0 speaks for
  the job (the others only when they saw a failure);
- alone on one host, it forks the ranks from this process (`torchdoctor.net.spawn.fork_ranks`);
- alone with ``--nnodes``/``--rdzv-endpoint``, it starts this host's ranks under torch's elastic launcher.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from torchdoctor import environment
from torchdoctor.distributed.ranks import RankInfo, from_environment
from torchdoctor.errors import BadInput, require_writable_folder
from torchdoctor.findings import Finding, worst
from torchdoctor.net.options import NetOptions
from torchdoctor.net.rank_state import RankState
from torchdoctor.net.spawn import (
    DEFAULT_WORKER,
    STARTUP_ALLOWANCE_S,
    RanksRun,
    default_nproc,
    fork_ranks,
    free_port,
    launch_over_hosts,
)
from torchdoctor.net.status import Status
from torchdoctor.net.verdicts import verdicts


@dataclass
class NetResult:
    """What ``torchdoctor net`` has to show: the findings, the bandwidth rows, what the ranks printed."""

    findings: list[Finding]
    rows: list[dict[str, Any]] = field(default_factory=list)
    backend: str = "?"
    lines: list[str] = field(default_factory=list)  # "[host:0] OK (rank 0/2)", from ranks in other processes
    silent: bool = False  # a rank other than 0 under an outer launcher, with nothing wrong: it says nothing
    find_bad: dict[str, Any] = field(default_factory=dict)  # rank 0's --find-bad measurements
    pair_text: str = ""  # --find-bad's pair matrix as text, when it is small
    torch_unusable: bool = False  # torch could not be imported: nothing else to judge


def run_net(
    options: NetOptions,
    status: Status | None = None,
    out: TextIO | None = None,
    show_now: Callable[[list[Finding]], None] | None = None,
    environ: Mapping[str, str] | None = None,
    worker: str = DEFAULT_WORKER,
) -> NetResult:
    """Run the test as `options` say and judge it.

    ``status`` shows progress; ``out`` takes the lines a rank running in this process prints;
    ``show_now(findings)`` renders a verdict at once when a stage times out in this process (which ends
    right after). ``worker`` names the module whose ``Worker`` runs each rank.
    """
    environ = os.environ if environ is None else environ
    status = status or Status(enabled=False)
    info = from_environment(environ)
    if info.launcher != "none":
        _refuse_launch_flags(options, info)
    elif options.log_dir is not None:  # before torch's import (seconds): refused at once, nothing left made
        require_writable_folder("--log-dir", options.log_dir, keep=False)
    over_hosts = info.launcher == "none" and (options.nnodes > 1 or bool(options.rdzv_endpoint))
    # torch is imported here only where the ranks are forked from this process; over hosts torch's launcher
    # imports it (3 s of CPU saved per host), and a run it ended is judged by `_torch_ended_the_launch`
    unusable = _preflight(options, info, environ) or ([] if over_hosts else _torch_unusable(environ))
    if unusable:
        return NetResult(unusable)
    if info.launcher != "none":
        result = _as_rank(options, info, status, out or sys.stdout, show_now, worker)
    else:
        result = _alone(options, status, environ, worker)
    if result.torch_unusable:
        return result
    if options.bench and not result.rows and options.nnodes > 1 and worst(result.findings) != "fail":
        result.findings.append(
            Finding("net.bandwidth", "skip", "bandwidth is reported on the host that has rank 0")
        )
    elif options.bench and _alone_in_the_job(result.findings):
        result.findings.append(ONE_RANK_BENCH)
    elif options.bench:
        result.findings += bench_findings(result.rows, result.backend, options.expect_busbw, options.plot)
    if options.worker.find_bad and not result.silent:
        result.findings += _find_bad_findings(result, options)
    return result


# One rank has no link to measure: its sweep is not run (on an H200, torch 2.11, NCCL 2.28, a one-rank collective
# returned in about 26 us whatever its size, and broadcast's busbw read 165,507 GB/s).
ONE_RANK_BENCH = Finding(
    "net.bandwidth",
    "skip",
    "not measured: 1 rank, so nothing crosses a link (a one-rank collective returns at once whatever its size; "
    "timed, it reads as hundreds of TB/s)",
    {"ranks": 1},
    "Start 2 or more ranks: --nproc-per-node 2 on a host with 2 GPUs, or --nnodes 2.",
)


def _alone_in_the_job(findings: list[Finding]) -> bool:
    """Whether the smoke test ran one rank in all: the job's world size, not the ranks this host started
    (over hosts each host reads only its own ranks' states)."""
    return any(f.id == "net.smoke" and f.details.get("world_size") == 1 for f in findings)


def _find_bad_findings(result: NetResult, options: NetOptions) -> list[Finding]:
    from torchdoctor.net import find_bad

    if not result.find_bad and options.nnodes > 1 and worst(result.findings) != "fail":
        return [Finding("net.find_bad", "skip", "--find-bad is reported on the host that has rank 0")]
    found = find_bad.findings(result.find_bad)
    if result.find_bad:
        found += _pair_picture(result, found, options)
    return found


def _pair_picture(result: NetResult, found: list[Finding], options: NetOptions) -> list[Finding]:
    """The pair matrix: as text on the result when small, drawn where --pairs-plot says (else beside the logs
    of --log-dir, else in the current folder), and in --json."""
    from torchdoctor.net import pair_matrix

    slow = pair_matrix.named_slow(found)
    path = options.pairs_plot or (options.log_dir or Path.cwd()) / pair_matrix.PICTURE_NAME
    matrix, said = pair_matrix.picture_finding(result.find_bad, path, slow)
    result.pair_text = pair_matrix.matrix_text(matrix, slow) or ""
    if said is None:
        return []
    said.details["pair_matrix"] = matrix
    return [said]


def _as_rank(options, info: RankInfo, status, out, show_now, worker: str) -> NetResult:
    """Under torchrun / srun / mpirun this process is one rank; rank 0 reports, the others only failures."""
    timeout = options.timeout

    def on_timeout(stuck: RankState) -> None:  # the watchdog ends the process right after: show it now
        status.stop()
        if show_now is not None:
            show_now(verdicts({info.rank: stuck}, info.world_size, timeout, expected_reports=1))
        sys.stdout.flush()

    with status:
        status.say(f"rank {info.rank} of {info.world_size}: testing, at most {timeout:g}s a stage")
        Worker = importlib.import_module(worker).Worker
        state = Worker(options.worker, out=out, on_timeout=on_timeout).run(
            on_row=status.row if info.rank == 0 else None
        )
    findings = verdicts({info.rank: state}, info.world_size, timeout, expected_reports=1)
    silent = info.rank != 0 and worst(findings) != "fail"
    return NetResult(findings, state.bench, state.backend or "?", silent=silent, find_bad=state.find_bad)


def _refuse_launch_flags(options: NetOptions, info: RankInfo) -> None:
    """Flags that start ranks mean nothing to a rank someone else started: say so rather than ignore them."""
    given = [
        flag
        for flag, value in (
            ("--nproc-per-node", options.nproc_per_node),
            ("--nnodes", options.nnodes if options.nnodes != 1 else None),
            ("--rdzv-endpoint", options.rdzv_endpoint or None),
            ("--rdzv-id", options.rdzv_id),
            ("--nccl-debug", options.nccl_debug or None),
            ("--log-dir", options.log_dir),
        )
        if value is not None
    ]
    if given:
        raise BadInput(
            f"{', '.join(given)}: this is rank {info.rank} of {info.world_size} started by {info.launcher}, "
            f"which decides how ranks start and where they log; give {'it' if len(given) == 1 else 'them'} "
            "to the launcher, or run `torchdoctor net` alone"
        )


def _torch_unusable(environ: Mapping[str, str]) -> list[Finding]:
    """A failed ``net.smoke`` when torch cannot even be imported here (the ranks would all die the same way)."""
    from torchdoctor.torch_import import blamed_variables, fix_for, import_torch, import_traceback

    failure = import_torch()
    if failure is None:
        return []
    return [
        Finding(
            "net.smoke",
            "fail",
            f"torch cannot be imported here, so no rank can start: {failure}",
            {"error": failure},
            fix_for(blamed_variables(failure, import_traceback(), environ), environ),
        )
    ]


def _torch_ended_the_launch(ran: RanksRun, environ: Mapping[str, str]) -> list[Finding]:
    """Over hosts, the same finding as `_torch_unusable` when torch's launcher (or its ranks) died importing
    torch: no rank left a state, and a traceback went through torch's ``__init__.py``. Only then is torch
    imported here, to name the error and the variable to blame."""
    said = ran.output + "".join(text for log in ran.logs.values() for text in log.values())
    if ran.states or "Traceback" not in said or f"torch{os.sep}__init__.py" not in said:
        return []
    return _torch_unusable(environ)


def _preflight(options: NetOptions, info: RankInfo, environ: Mapping[str, str]) -> list[Finding]:
    """What would make the rendezvous fail, found in seconds before any rank starts: a host that does not
    resolve, and on the host that opens the store, a port already taken or an address not of this host.

    Alone on one host that is ``PET_MASTER_ADDR``/``PET_MASTER_PORT`` (torchrun's) or ``MASTER_ADDR``/
    ``MASTER_PORT`` when set (a real launch would use them); over hosts the ``--rdzv-endpoint``. Reaching
    the endpoint from the other hosts is judged by the run itself, which names the host that cannot.
    """
    from torchdoctor.launch.preflight import (
        check_host,
        check_loopback_name,
        check_own_name,
        check_port_free,
        is_local_address,
    )
    from torchdoctor.launch.torchrun import parse_endpoint

    if info.launcher != "none":
        return []
    if options.rdzv_endpoint:
        host, port = parse_endpoint(options.rdzv_endpoint)
        flag, port_given = "--rdzv-endpoint", True
    elif _master(environ, "ADDR") or _master(environ, "PORT"):
        host, port = _master(environ, "ADDR") or "127.0.0.1", int(_master(environ, "PORT") or 0)
        flag = "PET_MASTER_PORT" if environ.get("PET_MASTER_PORT") else "MASTER_PORT"
        port_given = bool(port)
    else:
        return []
    resolved = check_host(host)
    if resolved.status == "fail":
        return [resolved]
    addresses = resolved.details["addresses"]
    elsewhere = (check_loopback_name(host, addresses) or check_own_name(host)) if options.nnodes > 1 else None
    if elsewhere is not None:
        return [elsewhere]
    local = any(is_local_address(a) for a in addresses)
    if options.rdzv_endpoint and not local:
        return []  # another host opens the store there
    if not local or port_given:
        found = check_port_free(host, port, local, flag, addresses)
        return [found] if found.status == "fail" else []
    return []


def _master(environ: Mapping[str, str], what: str) -> str | None:
    """``PET_MASTER_ADDR``/``_PORT`` (torchrun's, which a torchrun launch would use), else ``MASTER_*``."""
    return environment.given(f"PET_MASTER_{what}", environ) or environment.given(f"MASTER_{what}", environ)


def _alone(options: NetOptions, status: Status, environ: Mapping[str, str], worker: str) -> NetResult:
    """Start the ranks (forked here, or under torch's launcher over several hosts) and judge what they left."""
    if (
        options.rdzv_id is not None and not options.rdzv_endpoint
    ):  # it names a rendezvous: alone it does nothing
        raise BadInput(
            f"--rdzv-id {options.rdzv_id!r} only applies with --rdzv-endpoint HOST:PORT (several hosts)"
        )
    environ = dict(environ)
    if options.nccl_debug:
        environ["NCCL_DEBUG"] = "INFO"
        environ.setdefault("NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,ENV,NET")
    log_dir, made = options.log_dir, None
    if log_dir is not None:
        require_writable_folder("--log-dir", log_dir)
    elif options.nccl_debug:  # kept after the run: the NCCL finding points at it
        log_dir = made = Path(tempfile.mkdtemp(prefix="torchdoctor-net-logs-"))
    nproc = options.nproc_per_node or default_nproc(environ)
    over_hosts = options.nnodes > 1 or bool(options.rdzv_endpoint)
    try:
        with status:
            status.say(f"starting {nproc} ranks")
            ran = _start(options, nproc, over_hosts, log_dir, environ, status, worker)
    except BaseException:  # Ctrl-C included: nothing of ours stays behind
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise
    unusable = _torch_ended_the_launch(ran, environ) if over_hosts else []
    if unusable:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        return NetResult(unusable, torch_unusable=True)
    findings = verdicts(
        ran.states,
        ran.world_size,
        options.timeout,
        ran.output,
        ran.finished,
        expected_reports=nproc,
        endpoint=options.rdzv_endpoint,
        nnodes=options.nnodes,
        exits=ran.exits,
    )
    backend_used = next((f.details.get("backend") for f in findings if f.id == "net.smoke"), None)
    if options.nccl_debug and backend_used != "nccl":
        if made is not None:  # NCCL wrote nothing: no empty folder is left behind
            shutil.rmtree(made, ignore_errors=True)
        findings.append(
            Finding(
                "net.nccl", "skip", f"--nccl-debug: the ranks used {backend_used or 'no backend'}, not NCCL"
            )
        )
    elif options.nccl_debug:
        from torchdoctor.net.nccl_log import findings as nccl_findings
        from torchdoctor.net.nccl_log import summarise

        text = "\n".join(log.get(name, "") for log in ran.logs.values() for name in ("stdout", "stderr"))
        findings += nccl_findings(summarise(text), source=f"the ranks' logs in {ran.log_dir}")
    lines = [
        line
        for local_rank in sorted(ran.logs)
        for line in ran.logs[local_rank].get("stdout", "").splitlines()
        if line.startswith("[") and "NCCL" not in line
    ]
    first = next((s for _, s in sorted(ran.states.items()) if s.bench), None)
    backend = next((f.details.get("backend") for f in findings if f.id == "net.smoke"), None)
    backend = backend or next((s.backend for _, s in sorted(ran.states.items()) if s.backend), None) or "?"
    searched = next((s.find_bad for _, s in sorted(ran.states.items()) if s.find_bad), {})
    return NetResult(findings, first.bench if first else [], backend, lines, find_bad=searched)


def _start(options, nproc, over_hosts, log_dir, environ, status, worker) -> RanksRun:
    from torchdoctor.net.bandwidth import DEFAULT_SIZES

    steps = len(options.worker.ops) * len(options.worker.sizes or max(DEFAULT_SIZES.values(), key=len))
    deadline = STARTUP_ALLOWANCE_S + 4 * options.timeout + (steps * options.timeout if options.bench else 0)
    deadline += options.timeout if options.worker.find_bad else 0
    world_size = nproc * options.nnodes

    def on_poll(states: dict[int, RankState]) -> None:
        status.ranks(states, world_size, options.timeout, options.rdzv_endpoint if over_hosts else None)

    if over_hosts:
        return launch_over_hosts(
            nproc,
            options.worker,
            options.nnodes,
            options.rdzv_endpoint,
            options.rdzv_id or "torchdoctor-net",
            deadline,
            log_dir,
            environ,
            on_poll,
            worker,
        )
    address = (_master(environ, "ADDR") or "127.0.0.1", int(_master(environ, "PORT") or free_port()))
    return fork_ranks(nproc, options.worker, address, deadline, log_dir, environ, on_poll, worker)


def bench_findings(
    rows: list[dict[str, Any]], backend: str, expect_busbw: float | None, plot: Path | None
) -> list[Finding]:
    """The peak-busbw verdict, and the plot when asked for (a plot that cannot be written is a finding)."""
    from torchdoctor.net import bandwidth

    found = bandwidth.findings(rows, backend, expect_busbw)
    if plot is not None and rows:
        try:
            bandwidth.plot(rows, str(plot), title=f"busbw, {rows[0]['ranks']} ranks over {backend}")
        except (
            OSError
        ) as error:  # checked writable up front; a full disk or a vanished folder is still possible
            found.append(
                Finding(
                    "net.plot",
                    "fail",
                    f"could not write the plot {plot}: {error.strerror or error}",
                    {"plot": str(plot), "error": str(error)},
                    f"Check that {plot.parent} exists, is writable and has free space; the figures are in the "
                    "table above (and in --json).",
                )
            )
        else:
            found[0].details["plot"] = str(plot)
    return found
