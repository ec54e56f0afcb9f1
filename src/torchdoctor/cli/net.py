"""`torchdoctor net`: can the ranks talk to each other, what does NCCL use, and how fast is it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import typer

from torchdoctor.cli.app import JSON, VERBOSE, app, report
from torchdoctor.errors import BadInput


@app.command()
def net(
    nproc_per_node: int = typer.Option(
        0,
        "--nproc-per-node",
        metavar="N",
        show_default=False,
        help="Local workers to start (default: one per GPU, 2 without GPUs).",
    ),
    timeout: float = typer.Option(
        30.0, "--timeout", metavar="SECONDS", help="Longest wait for any one stage."
    ),
    backend: str = typer.Option(
        "auto", "--backend", help="auto (NCCL when every rank has a GPU), nccl or gloo."
    ),
    nnodes: int = typer.Option(
        1, "--nnodes", metavar="N", help="Hosts taking part (run the same command on each)."
    ),
    rdzv_endpoint: str = typer.Option(
        "",
        "--rdzv-endpoint",
        metavar="HOST:PORT",
        help="c10d rendezvous of a multi-host run (on one of the hosts).",
    ),
    rdzv_id: str = typer.Option("torchdoctor-net", "--rdzv-id", help="Same on every host of one run."),
    nccl_debug: bool = typer.Option(
        False, "--nccl-debug", help="Run with NCCL_DEBUG=INFO, keep each rank's log, summarise it."
    ),
    log_dir: Path = typer.Option(
        None, "--log-dir", help="Where each rank's output is kept (default: a temp dir)."
    ),
    bench: bool = typer.Option(False, "--bench", help="Measure collective bandwidth over a sweep of sizes."),
    ops: str = typer.Option(
        "all_reduce,all_gather,reduce_scatter,broadcast",
        "--ops",
        help="Collectives to measure, comma-separated.",
    ),
    sizes: str = typer.Option(
        "",
        "--sizes",
        metavar="LIST",
        help="Message sizes, e.g. 1M,16M,256M (default: sized for the backend).",
    ),
    iters: int = typer.Option(
        -1, "--iters", show_default=False, help="Timed iterations per size (default: 3 gloo, 20 NCCL)."
    ),
    warmup: int = typer.Option(
        -1, "--warmup", show_default=False, help="Warm-up iterations per size (default: 1 gloo, 5 NCCL)."
    ),
    expect_busbw: float = typer.Option(
        None, "--expect-busbw", metavar="GBPS", help="Fail when the peak busbw is below 90% of this."
    ),
    plot: Path = typer.Option(None, "--plot", metavar="FILE.png", help="Draw busbw against message size."),
    read_log: list[Path] = typer.Option(
        [],
        "--read-log",
        metavar="FILE",
        help="Only summarise a saved NCCL_DEBUG=INFO log or torch error output.",
    ),
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
) -> None:
    """Communication smoke test (init, all_reduce checked, barrier, memory) and bandwidth bench.

    Alone it starts local workers through torch's elastic launcher; under torchrun, srun or mpirun it is
    one of the workers.
    """
    from torchdoctor.distributed.ranks import from_environment

    if read_log:
        report(_read_logs(read_log), as_json, verbose)
    from torchdoctor.net.bandwidth import OPS, parse_size

    if timeout <= 0:
        raise BadInput(f"--timeout {timeout:g}: must be more than 0 seconds")
    if backend not in ("auto", "nccl", "gloo"):
        raise BadInput(f"--backend {backend}: choose auto, nccl or gloo")
    if nproc_per_node < 0 or nnodes < 1:
        raise BadInput(f"--nproc-per-node {nproc_per_node} / --nnodes {nnodes}: must be at least 1")
    if nnodes > 1 and ":" not in rdzv_endpoint:
        raise BadInput(f"--nnodes {nnodes} needs --rdzv-endpoint HOST:PORT (got {rdzv_endpoint!r})")
    op_list = [op.strip() for op in ops.split(",") if op.strip()]
    unknown = [op for op in op_list if op not in OPS]
    if unknown or not op_list:
        raise BadInput(
            f"--ops {ops}: unknown collective {', '.join(unknown)!r}; choose from {', '.join(OPS)}"
        )
    try:
        size_list = [parse_size(s) for s in sizes.split(",") if s.strip()]
    except ValueError as error:
        raise BadInput(f"--sizes {sizes}: {error}") from None
    if any(s <= 0 for s in size_list):
        raise BadInput(f"--sizes {sizes}: every size must be more than 0 bytes")
    if expect_busbw is not None and expect_busbw <= 0:
        raise BadInput(f"--expect-busbw {expect_busbw:g}: must be more than 0 GB/s")
    if plot is not None:
        if plot.suffix.lower() != ".png":
            raise BadInput(f"--plot {plot}: give a file name ending in .png")
        if not plot.resolve().parent.is_dir():
            raise BadInput(f"--plot {plot}: folder {plot.resolve().parent} does not exist")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BadInput("--plot needs matplotlib: pip install 'torchdoctor[plot]'") from None
    bench = bench or expect_busbw is not None or plot is not None

    worker_args = [
        f"--timeout={timeout:g}",
        f"--backend={backend}",
        f"--ops={','.join(op_list)}",
        f"--iters={iters}",
        f"--warmup={warmup}",
    ]
    if size_list:
        worker_args.append("--sizes=" + ",".join(str(s) for s in size_list))
    if bench:
        worker_args.append("--bench")

    info = from_environment()
    if info.launcher != "none":
        findings, rows = _as_worker(worker_args, info, as_json, verbose)
    else:
        if nccl_debug and log_dir is None:
            log_dir = Path(tempfile.mkdtemp(prefix="torchdoctor-net-logs-"))
        findings, rows = _as_launcher(
            nproc_per_node, worker_args, timeout, nnodes, rdzv_endpoint, rdzv_id, nccl_debug, log_dir, as_json
        )
    if bench and not rows and nnodes > 1 and not any(f.status == "fail" for f in findings):
        from torchdoctor.findings import Finding

        findings.append(Finding("net.bandwidth", "skip", "bandwidth is reported on the host that has rank 0"))
    elif bench:
        findings += _bench_findings(rows, findings, expect_busbw, plot, as_json)
    report(findings, as_json, verbose)


def _progress(disable: bool):
    """A rich progress bar on stderr for the bandwidth sweep."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=disable,
        transient=True,
    )


def _describe(row) -> str:
    from torchdoctor.net.bandwidth import human_size

    return f"{row['op']} {human_size(row['size'])}: {row['busbw']:.3f} GB/s busbw"


def _as_worker(worker_args, info, as_json, verbose):
    """Under torchrun / srun / mpirun this process is one rank; rank 0 reports, the others only failures."""
    from torchdoctor.findings import render_human, to_json, worst
    from torchdoctor.net.verdicts import verdicts
    from torchdoctor.net.worker import Worker, options_from_args

    options = options_from_args(worker_args)
    with _progress(as_json or info.rank != 0) as progress:
        task = progress.add_task("bandwidth", total=None)

        def on_row(row, total):
            progress.update(task, total=total, advance=1, description=_describe(row))

        def on_timeout(stuck):  # the watchdog ends the process right after: render the verdict now
            progress.stop()
            findings = verdicts(
                {info.rank: stuck.to_dict()}, info.world_size, options.timeout, expected_reports=1
            )
            print(to_json(findings)) if as_json else render_human(findings, verbose=verbose)
            sys.stdout.flush()

        out = sys.stderr if as_json else sys.stdout
        found = Worker(options, out=out, on_timeout=on_timeout).run(on_row=on_row).to_dict()
    findings = verdicts({info.rank: found}, info.world_size, options.timeout, expected_reports=1)
    if info.rank != 0 and worst(findings) != "fail":
        raise typer.Exit(0)  # rank 0 speaks for the job; the others only when they saw a failure
    return findings, found.get("bench", [])


def _as_launcher(nproc, worker_args, timeout, nnodes, rdzv_endpoint, rdzv_id, nccl_debug, log_dir, as_json):
    """Alone: start the workers through torch's elastic launcher and judge what they report."""
    from torchdoctor.net.bandwidth import DEFAULT_SIZES
    from torchdoctor.net.launch import STARTUP_ALLOWANCE_S, default_nproc, launch
    from torchdoctor.net.verdicts import verdicts
    from torchdoctor.net.worker import options_from_args

    options = options_from_args(worker_args)
    nproc = nproc or default_nproc()
    environ = dict(os.environ)
    if nccl_debug:
        environ["NCCL_DEBUG"] = "INFO"
        environ.setdefault("NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,ENV,NET")
    steps = (
        len(options.ops) * len(options.sizes or max(DEFAULT_SIZES.values(), key=len)) if options.bench else 0
    )
    deadline = STARTUP_ALLOWANCE_S + 4 * timeout + steps * timeout
    with _progress(as_json or not options.bench) as progress:
        task = progress.add_task("starting workers", total=None)

        def on_poll(reports):
            rows = next((r["bench"] for _, r in sorted(reports.items()) if r.get("bench")), [])
            if rows:
                total = next(r["bench_total"] for r in reports.values() if r.get("bench"))
                progress.update(task, total=total, completed=len(rows), description=_describe(rows[-1]))

        result = launch(
            nproc,
            worker_args,
            timeout,
            log_dir=log_dir,
            nnodes=nnodes,
            rdzv_endpoint=rdzv_endpoint or None,
            rdzv_id=rdzv_id,
            environ=environ,
            deadline_s=deadline,
            on_poll=on_poll if options.bench else None,
        )
    logs = result.logs
    if not as_json:
        for local_rank in sorted(logs):
            for line in logs[local_rank].get("stdout", "").splitlines():
                if line.startswith("[") and "NCCL" not in line:
                    print(line)
    findings = verdicts(
        result.reports,
        result.world_size,
        timeout,
        result.output,
        result.finished,
        expected_reports=nproc,
        endpoint=rdzv_endpoint,
        nnodes=nnodes,
    )
    if nccl_debug:
        from torchdoctor.net.nccl_log import findings as nccl_findings
        from torchdoctor.net.nccl_log import summarise

        text = "\n".join(log.get(name, "") for log in logs.values() for name in ("stdout", "stderr"))
        findings += nccl_findings(summarise(text), source=f"the ranks' logs in {result.log_dir}")
    rows = next((r["bench"] for _, r in sorted(result.reports.items()) if r.get("bench")), [])
    return findings, rows


def _bench_findings(rows, findings, expect_busbw, plot, as_json):
    """The bandwidth table (human output), the peak-busbw verdict, and the plot."""
    from torchdoctor.net import bandwidth

    backend = next((f.details.get("backend") for f in findings if f.id == "net.smoke"), None) or "?"
    if rows and not as_json:
        from rich.console import Console

        Console().print(
            bandwidth.table(rows, title=f"collective bandwidth, {rows[0]['ranks']} ranks, {backend}")
        )
    found = bandwidth.findings(rows, backend, expect_busbw)
    if plot is not None and rows:
        bandwidth.plot(rows, str(plot), title=f"busbw, {rows[0]['ranks']} ranks over {backend}")
        found[0].details["plot"] = str(plot)
    return found


# torch_errors kinds -> the finding id a live run would give for the same failure
_LOG_IDS = {
    "unreachable": "net.join",
    "rendezvous": "net.join",
    "collective_timeout": "net.collective",
    "peer_closed": "net.collective",
    "nccl_error": "net.nccl_error",
}


def _read_logs(paths: list[Path]):
    """Findings from saved output: the NCCL summary and every torch.distributed failure in it."""
    from torchdoctor.findings import Finding
    from torchdoctor.net.nccl_log import findings as nccl_findings
    from torchdoctor.net.nccl_log import summarise
    from torchdoctor.net.torch_errors import classify

    texts = []
    for path in paths:
        try:
            texts.append(path.read_text(errors="replace"))
        except OSError as error:
            raise BadInput(f"--read-log {path}: {error.strerror or error}") from None
    text = "\n".join(texts)
    source = ", ".join(str(p) for p in paths)
    summary = summarise(text)
    found = [] if summary.empty else nccl_findings(summary, source=source)
    for problem in classify(text):
        found.append(Finding(_LOG_IDS[problem.kind], "fail", problem.summary, problem.facts, problem.fix))
    if not found:
        found.append(
            Finding("net.log", "skip", f"no NCCL output or torch.distributed failure found in {source}")
        )
    return found
