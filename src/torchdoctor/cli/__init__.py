"""The `torchdoctor` command: one module per command in this package, each adding itself to `app`.

`main` is the console-script entry point. It turns every usage error and `BadInput` into one line on stderr
and exit status 2, never a traceback.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from torchdoctor import __version__
from torchdoctor.cli.app import app
from torchdoctor.errors import BadInput

# typer >= 0.22 vendors its own click; find its exception classes through a public one.
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _load_commands() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name != "app":
            importlib.import_module(f"{__name__}.{info.name}")


def _version(value: bool) -> None:
    if value:
        print(f"torchdoctor {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Finds out why a PyTorch training run is broken, and says how to fix it."""


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return its exit status."""
    _load_commands()
    try:
        result = app(args=argv, prog_name="torchdoctor", standalone_mode=False)
    except typer.Exit as done:
        return done.exit_code
    except _UsageError as error:
        if type(error).__name__ == "NoArgsIsHelpError":
            print(error.format_message())
            return 2
        where = f" (see `{error.ctx.command_path} --help`)" if error.ctx is not None else ""
        print(f"torchdoctor: error: {error.format_message()}{where}", file=sys.stderr)
        return 2
    except (BadInput, _ClickException) as error:
        message = error.format_message() if isinstance(error, _ClickException) else str(error)
        print(f"torchdoctor: error: {message}", file=sys.stderr)
        return 2
    except (typer.Abort, KeyboardInterrupt):
        print("torchdoctor: interrupted", file=sys.stderr)
        return 130
    if result == 130:  # Ctrl-C: typer turns it into exit status 130 without a word
        print("torchdoctor: interrupted", file=sys.stderr)
    return result if isinstance(result, int) else 0
