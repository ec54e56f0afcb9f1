"""`python -m torchdoctor` and the `torchdoctor` console script."""

import os
import sys


def run() -> None:
    """Load the command line and run it. Ctrl-C while it loads (typer, rich: a few tenths of a second) is
    the same one line and exit status 130 as Ctrl-C while a command runs."""
    try:
        from torchdoctor.cli import run as run_command_line
    except KeyboardInterrupt:
        print("torchdoctor: interrupted", file=sys.stderr)
        os._exit(130)
    run_command_line()


if __name__ == "__main__":
    run()
