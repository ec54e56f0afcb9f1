"""`torchdoctor check`: every check that applies to this machine, in one report."""

from __future__ import annotations

import typer

from torchdoctor.cli.app import JSON, ROOT, VERBOSE, app, areas_to_skip, exit_with_findings


@app.command()
def check(
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
    skip: list[str] = typer.Option(
        [],
        "--skip",
        metavar="AREA",
        help="Leave out an area (sys, env, dist, net, gpu); several: --skip net,env.",
    ),
    root: str = ROOT,
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help="How long the communication test waits at each stage.  [default: 10]",
    ),
) -> None:
    """Run every check that applies to this machine and print one report."""
    from torchdoctor.checks import AREAS, discover, run_checks, select_areas
    from torchdoctor.errors import BadInput, require_folder
    from torchdoctor.findings import status_line
    from torchdoctor.net.options import require_stage_timeout

    require_folder("--root", root)
    require_stage_timeout("--timeout", timeout, maximum=3600)
    modules, broken = select_areas(areas_to_skip(skip))
    if not modules and not broken:
        raise BadInput(f"--skip {','.join(AREAS)}: every area is left out, so nothing would be checked")
    with status_line("checking this machine") as say:
        findings = run_checks(
            discover(modules, root=root, timeout=timeout), lambda name: say(f"checking {name}…")
        )
    exit_with_findings(broken + findings, as_json, verbose)
