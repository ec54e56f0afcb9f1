"""`torchdoctor launch`: torchrun with debug mode, a config file and a hang watchdog."""

from __future__ import annotations

from pathlib import Path

import typer

from torchdoctor.cli.app import app
from torchdoctor.distributed.launch import MAX_NNODES, MAX_NPROC_PER_NODE


@app.command(
    context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
)
def launch(
    script: str = typer.Argument(..., metavar="SCRIPT", help="The training script to run in every worker."),
    script_args: list[str] = typer.Argument(None, metavar="ARGS", help="Arguments for the script."),
    nproc_per_node: int = typer.Option(
        None, "--nproc-per-node", help=f"Workers on this node, 1 to {MAX_NPROC_PER_NODE} (default 1)."
    ),
    nnodes: int = typer.Option(None, "--nnodes", help=f"Number of nodes, 1 to {MAX_NNODES} (default 1)."),
    node_rank: int = typer.Option(None, "--node-rank", help="This node's rank, 0 to nnodes-1."),
    master_addr: str = typer.Option(None, "--master-addr", help="Address of node 0."),
    master_port: int = typer.Option(None, "--master-port", help="Port on node 0 (default 29500)."),
    debug: bool = typer.Option(False, "--debug", help="Check every collective's shapes across ranks first."),
    config: Path = typer.Option(None, "--config", help="YAML settings (accelerate's config keys)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print the torchrun command line first."),
    watchdog: float = typer.Option(
        None,
        "--watchdog",
        metavar="SECONDS",
        help="After SECONDS without progress: report where every rank waits, stop the run. On several "
        "nodes, also the longest wait for the other nodes to join (else torch's 600).",
    ),
) -> None:
    """Run SCRIPT under torch.distributed.run, with debug mode and a hang watchdog on request.

    Options after SCRIPT go to the script. The exit status is the run's: non-zero when a worker failed
    or the watchdog stopped a hung run.
    """
    from torchdoctor.distributed.config import load_config
    from torchdoctor.distributed.launch import LaunchOptions, merge
    from torchdoctor.distributed.launch import launch as run

    settings = load_config(config) if config is not None else {}
    given = LaunchOptions(
        nproc_per_node=nproc_per_node,
        nnodes=nnodes,
        node_rank=node_rank,
        master_addr=master_addr,
        master_port=master_port,
        debug=debug,
        watchdog=watchdog,
    )
    raise typer.Exit(run(merge(given, settings), script, list(script_args or []), verbose=verbose))
