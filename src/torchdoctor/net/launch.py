"""Starting the smoke test's workers through torch's elastic launcher (``python -m torch.distributed.run``).

One host: ``--standalone`` with ``nproc_per_node`` workers. Several hosts: the same command on each, with
``--nnodes``, a c10d rendezvous endpoint and a join timeout, so a node that never comes is a verdict, not a
hang. Each worker writes its report into a temporary folder that is read back here, and keeps its stdout and
stderr in ``log_dir``; the whole run is bounded by a deadline after which the launcher is killed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchdoctor.net.worker import REPORT_DIR_VARIABLE

# Importing torch and joining take a few seconds per process before the first stage starts.
STARTUP_ALLOWANCE_S = 40.0


@dataclass
class LaunchResult:
    """What one launch left behind: each local rank's report, the launcher's own output, its exit."""

    reports: dict[int, dict[str, Any]]
    output: str
    returncode: int | None
    finished: bool  # False: killed at the deadline
    log_dir: Path
    world_size: int
    command: list[str] = field(default_factory=list)
    logs: dict[int, dict[str, str]] = field(default_factory=dict)  # local rank -> {"stdout", "stderr"}


def default_nproc(environ: Mapping[str, str] | None = None, root: Path = Path("/")) -> int:
    """One worker per visible GPU, or 2 on a machine without GPUs.

    Read from ``CUDA_VISIBLE_DEVICES`` and the NVIDIA driver's ``/proc`` entries rather than by importing
    torch here: the workers import it anyway, and on a busy machine that import costs seconds.
    """
    environ = os.environ if environ is None else environ
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        count = len([d for d in visible.split(",") if d.strip() and not d.strip().startswith("-")])
        return count or 2
    gpus = root / "proc/driver/nvidia/gpus"
    count = len(list(gpus.iterdir())) if gpus.is_dir() else 0
    if count == 0 and (root / "dev/kfd").exists():  # ROCm: ask torch, which knows the devices
        try:
            import torch

            count = torch.cuda.device_count()
        except ImportError:
            pass
    return count or 2


def parse_endpoint(text: str) -> tuple[str, int]:
    """``"node01:29400"`` -> ``("node01", 29400)``; an IPv6 host goes in brackets (``"[fe80::1]:29400"``).

    Raises ValueError naming ``text`` unless it is HOST:PORT with a non-empty host and a port in 1-65535.

    >>> parse_endpoint("[::1]:29400")
    ('::1', 29400)
    """
    host, colon, port = text.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not colon or not host.strip() or any(c.isspace() for c in host):
        raise ValueError(f"rendezvous endpoint {text!r} is not HOST:PORT (e.g. node01:29400)")
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ValueError(f"rendezvous endpoint {text!r}: port {port!r} is not a number from 1 to 65535")
    return host, int(port)


def torchrun_command(
    nproc_per_node: int,
    worker_args: Sequence[str],
    log_dir: Path,
    nnodes: int = 1,
    rdzv_endpoint: str | None = None,
    rdzv_id: str | None = None,
    timeout: float = 30.0,
    python: str = sys.executable,
) -> list[str]:
    """The ``torch.distributed.run`` command line that starts the workers."""
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout={timeout!r}: must be a finite number of seconds above 0")
    command = [python, "-m", "torch.distributed.run"]
    if nnodes == 1 and not rdzv_endpoint:
        command += ["--standalone"]
    else:
        parse_endpoint(rdzv_endpoint or "")  # several hosts need HOST:PORT; raises ValueError naming it
        wait = max(int(timeout), 1)
        command += [
            f"--nnodes={nnodes}",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint={rdzv_endpoint}",
            f"--rdzv-id={rdzv_id or 'torchdoctor-net'}",
            # read_timeout bounds reaching the endpoint, join_timeout waiting for the other nodes
            f"--rdzv-conf=join_timeout={wait},read_timeout={wait},last_call_timeout=1",
        ]
    command += [
        f"--nproc-per-node={nproc_per_node}",
        "--max-restarts=0",
        "--monitor-interval=0.2",
        f"--log-dir={log_dir}",
        "--redirects=3",
        "-m",
        "torchdoctor.net.worker",
        *worker_args,
    ]
    return command


def read_reports(folder: Path) -> dict[int, dict[str, Any]]:
    """The ``rank-N.json`` reports in ``folder`` (ones caught mid-write are skipped)."""
    reports = {}
    for path in folder.glob("rank-*.json"):
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        reports[int(report["rank"])] = report
    return reports


def worker_logs(log_dir: Path) -> dict[int, dict[str, str]]:
    """Each local rank's kept ``stdout``/``stderr`` (torchrun writes ``<run>/attempt_0/<local_rank>/``)."""
    logs: dict[int, dict[str, str]] = {}
    for path in sorted(Path(log_dir).glob("*/attempt_*/*/std*.log")):
        local_rank = int(path.parent.name)
        logs.setdefault(local_rank, {})[path.stem] = path.read_text(errors="replace")
    return logs


def launch(
    nproc_per_node: int,
    worker_args: Sequence[str],
    timeout: float,
    log_dir: Path | None = None,
    nnodes: int = 1,
    rdzv_endpoint: str | None = None,
    rdzv_id: str | None = None,
    environ: Mapping[str, str] | None = None,
    deadline_s: float | None = None,
    on_poll: Callable[[dict[int, dict[str, Any]]], None] | None = None,
) -> LaunchResult:
    """Run the workers and wait for them, at most ``deadline_s`` seconds (default: a few ``timeout``s).

    Each rank's stdout/stderr is kept in ``log_dir`` when one is given (else in a temporary folder, removed
    after reading it into ``LaunchResult.logs``).

    ``on_poll`` is called with the reports read so far, a few times a second (the bandwidth progress bar).
    """
    environ = dict(os.environ if environ is None else environ)
    keep_logs = log_dir is not None
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="torchdoctor-net-logs-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    command = torchrun_command(
        nproc_per_node,
        worker_args,
        log_dir,
        nnodes,
        rdzv_endpoint,
        rdzv_id or f"td-{uuid.uuid4().hex[:8]}",
        timeout,
    )
    if deadline_s is None:
        deadline_s = STARTUP_ALLOWANCE_S + 4 * timeout
    with tempfile.TemporaryDirectory(prefix="torchdoctor-net-") as reports_dir:
        environ[REPORT_DIR_VARIABLE] = reports_dir
        environ.setdefault("OMP_NUM_THREADS", "1")
        with tempfile.TemporaryFile(mode="w+") as output:
            process = subprocess.Popen(
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=environ,
                start_new_session=True,  # so the deadline can stop the launcher and its workers together
            )
            finished = _wait(process, time.monotonic() + deadline_s, Path(reports_dir), on_poll)
            output.seek(0)
            text = output.read()
        reports = read_reports(Path(reports_dir))
    logs = worker_logs(log_dir)
    if not keep_logs:  # read above; nobody asked to keep them
        shutil.rmtree(log_dir, ignore_errors=True)
    return LaunchResult(
        reports, text, process.returncode, finished, log_dir, nproc_per_node * nnodes, command, logs
    )


def _wait(process: subprocess.Popen, deadline: float, reports_dir: Path, on_poll) -> bool:
    while process.poll() is None:
        if time.monotonic() > deadline:
            _stop(process)
            return False
        if on_poll is not None:
            on_poll(read_reports(reports_dir))
        time.sleep(0.2)
    if on_poll is not None:
        on_poll(read_reports(reports_dir))
    return True


def _stop(process: subprocess.Popen) -> None:
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue
