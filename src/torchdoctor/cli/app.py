"""The typer application every command module adds itself to, and the options they share."""

from __future__ import annotations

import math

import typer

app = typer.Typer(
    name="torchdoctor",
    help="Finds out why a PyTorch training run is broken, and says how to fix it.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

JSON = typer.Option(False, "--json", help="Print the findings as JSON instead of text.")
VERBOSE = typer.Option(False, "--verbose", "-v", help="Show the facts behind each verdict.")


def report(findings, as_json: bool, verbose: bool) -> None:
    """Render ``findings`` (human or JSON) and exit 0, or 1 when a check failed."""
    from torchdoctor.findings import exit_code, render_human, to_json

    if as_json:
        print(to_json(findings))
    else:
        render_human(findings, verbose=verbose)
    raise typer.Exit(exit_code(findings))


def require_seconds(flag: str, value: float | None, maximum: float = 7 * 24 * 3600) -> None:
    """Raise `BadInput` unless ``value`` (when given) is a finite number of seconds in (0, ``maximum``].

    >>> require_seconds("--timeout", float("nan"))
    Traceback (most recent call last):
    torchdoctor.errors.BadInput: --timeout nan: must be a number of seconds above 0 and at most 604800
    """
    from torchdoctor.errors import BadInput

    if value is not None and not (math.isfinite(value) and 0 < value <= maximum):
        raise BadInput(f"{flag} {value:.15g}: must be a number of seconds above 0 and at most {maximum:g}")


def require_count(flag: str, value: int | None, minimum: int = 1, maximum: int = 1_000_000) -> None:
    """Raise `BadInput` unless ``value`` (when given) is a whole number in [``minimum``, ``maximum``]."""
    from torchdoctor.errors import BadInput

    if value is not None and not minimum <= value <= maximum:
        raise BadInput(f"{flag} {value}: must be between {minimum} and {maximum}")
