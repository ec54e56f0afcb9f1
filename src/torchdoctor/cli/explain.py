"""`torchdoctor explain`: why the run that already failed failed, from the logs it left behind."""

from __future__ import annotations

import sys

import typer

from torchdoctor.cli.app import JSON, VERBOSE, app, exit_with_findings


@app.command()
def explain(
    paths: list[str] = typer.Argument(
        None,
        metavar="PATH",
        help="Log files (.gz too) or folders of per-rank logs and flight-recorder dumps; none or - : stdin.",
        show_default=False,
    ),
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
) -> None:
    """Diagnose a failed run from its logs: the root cause first, with the fix for what the log shows.

    Exit status 1 when a failure was recognised or the input shows one (a traceback, torchrun's failure
    summary), 0 when it does not (an empty or binary file is said to be one), 2 for a path that is missing or
    unreadable, an empty path (an unset variable) or a folder with no file in it.
    """
    from torchdoctor.explain.diagnose import explain as diagnose

    exit_with_findings(diagnose(paths or [], stdin=sys.stdin), as_json, verbose)
