"""`torchdoctor net`: can the ranks talk to each other, what does NCCL use, and how fast is it."""

from __future__ import annotations

import os
import sys

import typer

from torchdoctor.cli.app import JSON, VERBOSE, app, exit_with_findings, show_findings
from torchdoctor.errors import BadInput

# Flags that still mean something with --read-log (it only reads saved text).
_READ_LOG_FLAGS = {"read_log", "as_json", "verbose"}


@app.command()
def net(
    ctx: typer.Context,
    nproc_per_node: int = typer.Option(
        None,
        "--nproc-per-node",
        "--nproc_per_node",  # torchrun's other spelling, which `launch` takes too
        metavar="N",
        show_default=False,
        help="Local workers to start (default: one per GPU, 2 without GPUs).",
    ),
    timeout: float = typer.Option(
        30.0, "--timeout", metavar="SECONDS", help="Longest wait for any one stage."
    ),
    backend: str = typer.Option(
        "auto", "--backend", metavar="NAME", help="auto (NCCL when every rank has a GPU), nccl or gloo."
    ),
    nnodes: int = typer.Option(
        1, "--nnodes", metavar="N", help="Hosts taking part (run the same command on each)."
    ),
    rdzv_endpoint: str = typer.Option(
        "",
        "--rdzv-endpoint",
        "--rdzv_endpoint",
        metavar="HOST:PORT",
        help="c10d rendezvous of a multi-host run (on one of the hosts).",
    ),
    rdzv_id: str = typer.Option(
        None,
        "--rdzv-id",
        "--rdzv_id",
        metavar="ID",
        show_default=False,
        help="Same on every host of one run (with --rdzv-endpoint; default: torchdoctor-net).",
    ),
    nccl_debug: bool = typer.Option(
        False, "--nccl-debug", help="Run with NCCL_DEBUG=INFO, keep each rank's log, summarise it."
    ),
    log_dir: str = typer.Option(
        None,
        "--log-dir",
        "--log_dir",
        metavar="DIR",
        help="Where each rank's output is kept (default: a temp dir).",
    ),
    bench: bool = typer.Option(False, "--bench", help="Measure collective bandwidth over a sweep of sizes."),
    find_bad: bool = typer.Option(
        False,
        "--find-bad",
        help="Find the slow link, slow rank or silently wrong rank: halves, then pairs, each against its peers.",
    ),
    ops: str = typer.Option(
        None,
        "--ops",
        metavar="LIST",
        show_default=False,
        help="Collectives to measure, comma-separated (with --bench; default: "
        "all_reduce,all_gather,reduce_scatter,broadcast).",
    ),
    sizes: str = typer.Option(
        None,
        "--sizes",
        metavar="LIST",
        help="Message sizes, e.g. 1M,16M,256M, each at most 64G (with --bench; default: sized for the backend).",
    ),
    iters: int = typer.Option(
        None,
        "--iters",
        metavar="N",
        show_default=False,
        help="Timed iterations per size (with --bench; default: 3 gloo, 20 NCCL).",
    ),
    warmup: int = typer.Option(
        None,
        "--warmup",
        metavar="N",
        show_default=False,
        help="Warm-up iterations per size (with --bench; default: 1 gloo, 5 NCCL).",
    ),
    expect_busbw: float = typer.Option(
        None, "--expect-busbw", metavar="GBPS", help="Fail when the peak busbw is below 90% of this."
    ),
    plot: str = typer.Option(None, "--plot", metavar="FILE.png", help="Draw busbw against message size."),
    pairs_plot: str = typer.Option(
        None,
        "--pairs-plot",
        metavar="FILE.png",
        help="Where --find-bad draws the pair bandwidths (default: find-bad-pairs.png in --log-dir, else here).",
    ),
    read_log: list[str] = typer.Option(
        [],
        "--read-log",
        metavar="FILE",
        help="Only summarise a saved NCCL_DEBUG=INFO log or torch error output (takes no other flag but --json, -v).",
    ),
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
) -> None:
    """Communication smoke test (init, all_reduce checked, barrier, memory) and bandwidth bench.

    Alone it starts the ranks itself (over several hosts through torch's elastic launcher); under torchrun,
    srun or mpirun it is one of the ranks.
    """
    if read_log:
        from torchdoctor.net.read_log import read_log_findings

        _reject_flags_beside_read_log(ctx)
        exit_with_findings(read_log_findings(*read_log), as_json, verbose)
    from torchdoctor import environment
    from torchdoctor.net.options import TORCHRUN_VARIABLES, net_options, torchrun_defaults
    from torchdoctor.net.smoke import run_net

    environment.require_valid(environment.RENDEZVOUS)  # MASTER_PORT=abc: one line, as `check` says it
    from torchdoctor.net.status import Status

    said = {name for name in TORCHRUN_VARIABLES if _given(ctx, name)}
    from_torchrun = torchrun_defaults(said, os.environ)  # what torchrun would take from PET_* variables
    nproc_per_node = from_torchrun.get("nproc_per_node", nproc_per_node)
    nnodes = from_torchrun.get("nnodes", nnodes)
    rdzv_endpoint = from_torchrun.get("rdzv_endpoint", rdzv_endpoint)
    rdzv_id = from_torchrun.get("rdzv_id", rdzv_id)

    options = net_options(
        timeout, backend, nproc_per_node, nnodes, rdzv_endpoint, rdzv_id, nccl_debug, log_dir, bench, ops, sizes,
        iters, warmup, expect_busbw, plot, find_bad=find_bad, pairs_plot=pairs_plot,
    )  # fmt: skip
    result = run_net(
        options,
        Status(),
        out=sys.stderr if as_json else sys.stdout,
        show_now=lambda findings: show_findings(findings, as_json, verbose),
    )
    if result.silent:
        raise typer.Exit(0)  # rank 0 speaks for the job; the others only when they saw a failure
    if not as_json:
        show_ranks(result)
    exit_with_findings(result.findings, as_json, verbose)


def _given(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


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


def show_ranks(result) -> None:
    """What the ranks printed, then the bandwidth table."""
    for line in result.lines:
        print(line)
    if result.pair_text:
        print(result.pair_text)
    if result.rows:
        from rich.console import Console

        from torchdoctor.net.bandwidth import table

        title = f"collective bandwidth, {result.rows[0]['ranks']} ranks, {result.backend}"
        Console().print(table(result.rows, title=title))
