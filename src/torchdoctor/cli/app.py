"""The typer application every command module adds itself to, and the options they share."""

from __future__ import annotations

import typer

# "\b" keeps click from rewrapping the table
EXIT_STATUSES = """\b
Exit status of every command:
  0    nothing failed (warnings allowed)
  1    a check failed
  2    bad usage or bad input (one line on stderr naming the value)
  130  interrupted (Ctrl-C)"""

app = typer.Typer(
    name="torchdoctor",
    help="Finds out why a PyTorch training run is broken, and says how to fix it.",
    epilog=EXIT_STATUSES,
    add_completion=True,  # --install-completion / --show-completion
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},  # every command inherits both
)

JSON = typer.Option(False, "--json", help="Print the findings as JSON instead of text.")
VERBOSE = typer.Option(False, "--verbose", "-v", help="Show the facts behind each verdict.")
ROOT = typer.Option(
    "/", "--root", metavar="DIR", help="Look for /usr/local/cuda*, /opt/cuda* and headers under DIR."
)


def areas_to_skip(given: list[str]) -> list[str]:
    """``--skip`` as typed, in the words of the areas: ``--skip net,env`` and ``--skip NET`` as ``net``, ``env``;
    an unknown one is refused by `torchdoctor.checks.select_areas`, naming the choices, and an empty one
    (``--skip "$AREA"`` with AREA unset) here: left out, it would quietly skip nothing."""
    from torchdoctor.checks import AREAS
    from torchdoctor.errors import BadInput

    for value in given:
        if not value.replace(",", "").strip():
            raise BadInput(f"--skip {value!r}: no area in it; choose from {', '.join(AREAS)}")
    return [part.strip().lower() for value in given for part in value.split(",") if part.strip()]


def show_findings(findings, as_json: bool, verbose: bool) -> None:
    """Render ``findings``: JSON, or one line per finding with the fix under it (``-v``: the facts too)."""
    from torchdoctor.findings import render_human, to_json

    print(to_json(findings)) if as_json else render_human(findings, verbose=verbose)


def exit_with_findings(findings, as_json: bool, verbose: bool) -> None:
    """Render ``findings`` and exit 0, or 1 when a check failed."""
    from torchdoctor.findings import exit_code

    show_findings(findings, as_json, verbose)
    raise typer.Exit(exit_code(findings))
