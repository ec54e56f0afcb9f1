"""`torchdoctor check`: every check that applies to this machine, in one report."""

from __future__ import annotations

import typer

from torchdoctor.cli.app import JSON, ROOT, VERBOSE, app, report


@app.command()
def check(
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
    skip: list[str] = typer.Option(
        [], "--skip", metavar="AREA", help="Leave out an area (sys, env, dist, net, gpu)."
    ),
    root: str = ROOT,
) -> None:
    """Run every check that applies to this machine and print one report."""
    from torchdoctor.checks import discover, run_checks, select_areas
    from torchdoctor.errors import require_folder

    require_folder("--root", root)
    modules, broken = select_areas(skip)
    report(broken + run_checks(discover(modules, root=root)), as_json, verbose)
