"""`torchdoctor report`: Markdown to paste into a GitHub issue (versions, GPUs, packages, findings, env vars)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from torchdoctor.cli.app import app, areas_to_skip
from torchdoctor.errors import BadInput, require_writable_file


@app.command("report")
def report_command(
    output: str | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write the Markdown to FILE instead of stdout."
    ),
    skip: list[str] = typer.Option(
        [], "--skip", metavar="AREA", help="Leave out a slow area's checks (sys, env, dist, net, gpu)."
    ),
    as_json: bool = typer.Option(False, "--json", help="The same facts as JSON instead of Markdown."),
) -> None:
    """Print a Markdown report to paste into a GitHub issue: versions, GPUs, packages, findings, env vars."""
    from torchdoctor.checks import discover, run_checks, select_areas
    from torchdoctor.findings import exit_code
    from torchdoctor.report import make_report, make_report_json
    from torchdoctor.status_line import status_line

    if output is not None:
        require_writable_file("-o", output)  # now, not after every check has run
        output = Path(output)
    modules, broken = select_areas(areas_to_skip(skip))
    with status_line("gathering the report") as say:
        findings = broken + run_checks(discover(modules), lambda name: say(f"checking {name}…"))
        text = make_report_json(findings) if as_json else make_report(findings)
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text)
        except OSError as error:
            raise BadInput(
                f"-o {output}: cannot write it: {type(error).__name__}: {error.strerror or error}"
            ) from None
        print(f"wrote {output} ({len(text.splitlines())} lines): paste it into the issue", file=sys.stderr)
    raise typer.Exit(exit_code(findings))
