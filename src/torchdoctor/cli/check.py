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
    only: list[str] = typer.Option(
        [],
        "--only",
        metavar="ID",
        help="Run only this check or area (repeatable, or comma-separated: --only dist,net.smoke); --list shows the ids.",
    ),
    listing: bool = typer.Option(False, "--list", help="List the checks, one id a line, and run none."),
    root: str = ROOT,
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help="How long the communication test waits at each stage.  [default: 10]",
    ),
) -> None:
    """Run every check that applies to this machine and print one report."""
    from torchdoctor.checks import AREAS, discover, only_names, pick, run_checks, select_areas
    from torchdoctor.errors import BadInput, require_folder
    from torchdoctor.net.options import require_stage_timeout
    from torchdoctor.status_line import status_line

    require_folder("--root", root)
    require_stage_timeout("--timeout", timeout, maximum=3600)
    skipped = areas_to_skip(skip)
    modules, broken = select_areas(skipped)
    if not modules and not broken:
        raise BadInput(f"--skip {','.join(AREAS)}: every area is left out, so nothing would be checked")
    checks = pick(discover(modules, root=root, timeout=timeout), only, skipped)
    if listing:
        _list(checks, broken, as_json)
        raise typer.Exit(0)
    if only:  # an area that cannot be imported has no checks to pick from; its warning stays
        broken = [
            f for f in broken if any(name.split(".")[0] == f.id.split(".")[0] for name in only_names(only))
        ]
    with status_line("checking this machine") as say:
        findings = run_checks(checks, lambda name: say(f"checking {name}…"))
    exit_with_findings(broken + findings, as_json, verbose)


def _list(checks, broken, as_json: bool) -> None:
    """One line per check, its id and what it looks at; an area that cannot be imported, with the error."""
    import json

    from torchdoctor.checks import check_id, looks_at

    rows = [(check_id(c), looks_at(c)) for c in checks] + [(f.id, f.summary) for f in broken]
    if as_json:
        print(json.dumps([{"id": name, "looks_at": text} for name, text in rows], indent=2))
        return
    width = max((len(name) for name, _ in rows), default=0)
    for name, text in rows:
        print(f"{name:{width}}  {text}")
