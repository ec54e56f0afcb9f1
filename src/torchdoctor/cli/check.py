"""`torchdoctor check`: every check that applies to this machine, in one report."""

from __future__ import annotations

import typer

from torchdoctor.cli.app import JSON, VERBOSE, app, report
from torchdoctor.errors import BadInput


@app.command()
def check(
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
    skip: list[str] = typer.Option(
        [], "--skip", metavar="AREA", help="Leave out an area (sys, env, dist, net, gpu)."
    ),
) -> None:
    """Run every check that applies to this machine and print one report."""
    from torchdoctor.checks import CHECK_MODULES, area_of, discover, run_checks

    areas = {area_of(module): module for module in CHECK_MODULES}
    unknown = sorted(set(skip) - set(areas))
    if unknown:
        raise BadInput(f"--skip {', '.join(unknown)}: unknown area; choose from {', '.join(areas)}")
    modules = [module for area, module in areas.items() if area not in skip]
    report(run_checks(discover(modules)), as_json, verbose)
