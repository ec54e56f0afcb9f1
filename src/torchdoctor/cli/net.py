"""`torchdoctor net`: can the ranks talk to each other, what does NCCL use, and how fast is it."""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import typer

from torchdoctor.cli.app import JSON, VERBOSE, app, report
from torchdoctor.errors import BadInput, require_count, require_seconds

# --expect-busbw above this is a typo: NVLink 5 moves 1.8 TB/s per GPU.
MAX_EXPECT_BUSBW = 100_000.0  # GB/s
MAX_ITERS = 100_000
MAX_NPROC_PER_NODE = 1024
# Flags that still mean something with --read-log (it only reads saved text).
_READ_LOG_FLAGS = {"read_log", "as_json", "verbose"}


@app.command()
def net(
    ctx: typer.Context,
    nproc_per_node: int = typer.Option(
        None,
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
        help="Message sizes, e.g. 1M,16M,256M, each at most 64G (default: sized for the backend).",
    ),
    iters: int = typer.Option(
        None, "--iters", show_default=False, help="Timed iterations per size (default: 3 gloo, 20 NCCL)."
    ),
    warmup: int = typer.Option(
        None, "--warmup", show_default=False, help="Warm-up iterations per size (default: 1 gloo, 5 NCCL)."
    ),
    expect_busbw: float = typer.Option(
        None, "--expect-busbw", metavar="GBPS", help="Fail when the peak busbw is below 90% of this."
    ),
    plot: Path = typer.Option(None, "--plot", metavar="FILE.png", help="Draw busbw against message size."),
    read_log: list[Path] = typer.Option(
        [],
        "--read-log",
        metavar="FILE",
        help="Only summarise a saved NCCL_DEBUG=INFO log or torch error output (takes no other flag but --json, -v).",
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
        _reject_flags_beside_read_log(ctx)
        from torchdoctor.net.read_log import read_log_findings

        report(read_log_findings(*read_log), as_json, verbose)
    from torchdoctor.net.bandwidth import MAX_SIZE, OPS, human_size, parse_size
    from torchdoctor.net.launch import parse_endpoint

    require_seconds("--timeout", timeout)
    if backend not in ("auto", "nccl", "gloo"):
        raise BadInput(f"--backend {backend}: choose auto, nccl or gloo")
    require_count("--nproc-per-node", nproc_per_node, minimum=1, maximum=MAX_NPROC_PER_NODE)
    require_count("--nnodes", nnodes, minimum=1)
    if nnodes > 1 and not rdzv_endpoint:
        raise BadInput(f"--nnodes {nnodes} needs --rdzv-endpoint HOST:PORT (got {rdzv_endpoint!r})")
    if rdzv_endpoint:
        try:
            parse_endpoint(rdzv_endpoint)
        except ValueError as error:
            raise BadInput(f"--rdzv-endpoint: {error}") from None
    op_list = [op.strip() for op in ops.split(",") if op.strip()]
    unknown = [op for op in op_list if op not in OPS]
    if unknown or not op_list:
        raise BadInput(
            f"--ops {ops}: unknown collective {', '.join(unknown)!r}; choose from {', '.join(OPS)}"
        )
    try:  # parse_size takes 1 byte .. MAX_SIZE
        size_list = [parse_size(s) for s in sizes.split(",") if s.strip()]
    except ValueError as error:
        raise BadInput(f"--sizes {sizes}: {error}") from None
    if sizes.strip() and not size_list:
        raise BadInput(f"--sizes {sizes!r}: give sizes from 1 byte to {human_size(MAX_SIZE)}, e.g. 1M,16M")
    require_count("--iters", iters, minimum=1, maximum=MAX_ITERS)
    require_count("--warmup", warmup, minimum=0, maximum=MAX_ITERS)
    if expect_busbw is not None and not (
        math.isfinite(expect_busbw) and 0 < expect_busbw <= MAX_EXPECT_BUSBW
    ):
        raise BadInput(
            f"--expect-busbw {expect_busbw:g}: must be a number of GB/s above 0 and at most {MAX_EXPECT_BUSBW:g}"
        )
    if plot is not None:
        if plot.suffix.lower() != ".png":
            raise BadInput(f"--plot {plot}: give a file name ending in .png")
        if not plot.resolve().parent.is_dir():
            raise BadInput(f"--plot {plot}: folder {plot.resolve().parent} does not exist")
        _require_writable_file("--plot", plot)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BadInput("--plot needs matplotlib: pip install 'torchdoctor[plot]'") from None
    bench = bench or expect_busbw is not None or plot is not None

    worker_args = [
        f"--timeout={timeout:g}",
        f"--backend={backend}",
        f"--ops={','.join(op_list)}",
    ]
    if iters is not None:  # else the backend's default, each on its own
        worker_args.append(f"--iters={iters}")
    if warmup is not None:
        worker_args.append(f"--warmup={warmup}")
    if size_list:
        worker_args.append("--sizes=" + ",".join(str(s) for s in size_list))
    if bench:
        worker_args.append("--bench")

    info = from_environment()
    if info.launcher != "none":
        findings, rows = _as_worker(worker_args, info, as_json, verbose)
    else:
        if log_dir is not None:
            _require_log_dir(log_dir)
        elif nccl_debug:
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


def _reject_flags_beside_read_log(ctx: typer.Context) -> None:
    """--read-log only reads saved text: a flag of the live run next to it is a mistake, not something to drop."""
    given = [
        param.opts[0]
        for param in ctx.command.params
        if param.name not in _READ_LOG_FLAGS
        and (source := ctx.get_parameter_source(param.name)) is not None
        and source.name not in ("DEFAULT", "DEFAULT_MAP")
    ]
    if given:
        raise BadInput(
            f"--read-log only summarises saved output; {', '.join(given)} "
            f"{'does' if len(given) == 1 else 'do'} not apply to it (only --json and -v do)"
        )


def _require_writable_file(flag: str, path: Path) -> None:
    """Raise `BadInput` unless ``path`` can be written now, rather than after a whole bench."""
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as error:
        raise BadInput(f"{flag} {path}: cannot write this file ({error.strerror or error})") from None
    if not existed:
        path.unlink(missing_ok=True)


def _require_log_dir(path: Path) -> None:
    """Create ``path`` (a folder) now and check a file can be written in it, or raise `BadInput`."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except FileExistsError:
        raise BadInput(f"--log-dir {path}: exists and is not a folder") from None
    except OSError as error:
        raise BadInput(
            f"--log-dir {path}: cannot create or write this folder ({error.strerror or error})"
        ) from None


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
        try:
            bandwidth.plot(rows, str(plot), title=f"busbw, {rows[0]['ranks']} ranks over {backend}")
        except (
            OSError
        ) as error:  # checked writable up front; a full disk or a vanished folder is still possible
            from torchdoctor.findings import Finding

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
