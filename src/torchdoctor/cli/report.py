"""`torchdoctor report`: Markdown to paste into a GitHub issue (versions, GPUs, packages, findings, env vars)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from torchdoctor.cli.app import app
from torchdoctor.errors import BadInput, require_writable_file


def _findings_for_report(skip: list[str]) -> list:
    """The `check` findings, minus the skipped areas; a check module that cannot be imported becomes a warning,
    because a broken install is exactly when people ask for help."""
    from torchdoctor.checks import CHECK_MODULES, area_of, discover, run_checks
    from torchdoctor.findings import Finding

    areas, broken = {}, []
    for module in CHECK_MODULES:
        try:
            areas[area_of(module)] = module
        except Exception as error:  # reported in the page, not raised
            name = module.split(".")[1]
            broken.append(
                Finding(
                    f"{name}.import", "warn", f"{module} cannot be imported: {type(error).__name__}: {error}"
                )
            )
    unknown = sorted(set(skip) - set(areas))
    if unknown:
        raise BadInput(f"--skip {', '.join(unknown)}: unknown area; choose from {', '.join(areas)}")
    return broken + run_checks(discover([module for area, module in areas.items() if area not in skip]))


@app.command("report")
def report_command(
    output: str | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write the Markdown to FILE instead of stdout."
    ),
    skip: list[str] = typer.Option(
        [], "--skip", metavar="AREA", help="Leave out a slow area's checks (sys, env, dist, net, gpu)."
    ),
) -> None:
    """Print a Markdown report to paste into a GitHub issue: versions, GPUs, packages, findings, env vars."""
    from torchdoctor.findings import exit_code
    from torchdoctor.report import make_report

    if output is not None:
        require_writable_file("-o", output)  # now, not after every check has run
        output = Path(output)
    findings = _findings_for_report(skip)
    text = make_report(findings)
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text)
        except OSError as error:
            raise BadInput(f"-o {output}: cannot write it: {error.strerror or error}") from None
        print(f"wrote {output} ({len(text.splitlines())} lines): paste it into the issue", file=sys.stderr)
    raise typer.Exit(exit_code(findings))
