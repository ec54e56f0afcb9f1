"""`torchdoctor launch`: torchrun's command line, with debug mode, a config file, checks before the start
and a hang watchdog."""

from __future__ import annotations

import typer

from torchdoctor.cli.app import app


@app.command(
    add_help_option=False,  # torch's parser, with ours added, prints the help: every torchrun flag
    context_settings={
        "allow_extra_args": True,
        "ignore_unknown_options": True,
        "allow_interspersed_args": False,
    },
)
def launch(ctx: typer.Context) -> None:
    """Run a script as torchrun does (its flags as it spells them) with debug mode, a watchdog, a config.

    See `torchdoctor launch --help` for every flag.
    """
    from torchdoctor import environment
    from torchdoctor.launch.config import load_config
    from torchdoctor.launch.options import merge, parse_command_line
    from torchdoctor.launch.run import launch as run

    try:
        given = parse_command_line(list(ctx.args))
    except SystemExit as done:  # --help
        raise typer.Exit(done.code or 0) from None
    settings = load_config(given.config) if given.config is not None else {}
    # torchrun's PET_* variables are read into the options below: a bad one is said as `check` says it
    environment.require_valid(environment.TORCHRUN + environment.DEBUG_MODE + environment.LOG_LEVEL)
    raise typer.Exit(run(merge(given, settings)))
