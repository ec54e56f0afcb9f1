"""The `torchdoctor` command: one module per command in this package, each adding itself to `app`.

`main` is the console-script entry point. It turns every usage error and `BadInput` into one line on stderr
and exit status 2, never a traceback.
"""

from __future__ import annotations

import importlib
import io
import os
import pkgutil
import signal
import sys
import threading

import typer

from torchdoctor import __version__
from torchdoctor.cli.app import app
from torchdoctor.errors import BadInput, no_such_option, wrong_value
from torchdoctor.findings import fall_back_to_ascii

# typer >= 0.22 vendors its own click; find its exception classes through a public one.
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _load_commands() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name != "app":
            importlib.import_module(f"{__name__}.{info.name}")


def _no_color(value: bool) -> None:
    if value:
        os.environ["NO_COLOR"] = "1"  # https://no-color.org: rich reads it for every console made after this


def _options_of_every_command() -> list:
    """The options every command takes (``--no-color``), built by typer as it builds each command's own."""
    shared = typer.Typer(add_completion=False)  # the completion options belong to `torchdoctor` alone

    @shared.command()
    def every_command(
        no_color: bool = typer.Option(
            False, "--no-color", callback=_no_color, is_eager=True, help="Print without colours."
        ),
    ) -> None:
        """Never run: it only holds the shared options."""

    params = typer.main.get_command(shared).params
    for param in params:
        param.expose_value = False  # handled by its callback; the commands' functions do not take it
    return params


def _command_line():
    """The click group of every command, each with the shared options added."""
    _load_commands()
    group = typer.main.get_command(app)
    shared = _options_of_every_command()
    for command in group.commands.values():
        command.params += [p for p in shared if p.name not in {q.name for q in command.params}]
        for param in command.params:
            if param.param_type_name == "argument" and param.nargs != 1:  # `PATH...`, not `PATH <list[str]>`
                shown = f"{param.metavar or param.name.upper()}..."
                param.display_type_rich = lambda ctx: None
                param._rich_display_name = lambda shown=shown: shown
    return group


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


# pydantic's error types, as the value checks of errors.py word them
_EXPECTED = {
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "int_type": "a whole number",
    "float_parsing": "a number",
    "float_type": "a number",
    "bool_parsing": "true or false",
}


def _usage_message(error) -> str:
    """Click's and pydantic's usage errors in our words: the flag, the value as typed, what it must be."""
    name = type(error).__name__
    if name == "NoSuchOption":
        return no_such_option(error.option_name, error.possibilities or ())
    cause = error.__cause__
    param = getattr(error, "param", None)
    if name == "BadParameter" and param is not None and callable(getattr(cause, "errors", None)):
        first = cause.errors()[0]
        expected = _EXPECTED.get(first.get("type", ""))
        if expected is None:
            said = str(first.get("msg", cause))
            expected = said.removeprefix("Input should be ") if said.startswith("Input should be ") else None
        if expected is not None:
            flag = param.opts[0] if param.param_type_name == "option" else param.human_readable_name
            return str(wrong_value(flag, first.get("input"), expected))
    return error.format_message()


class _UntilTheReaderLeaves:
    """Standard output that, once its reader is gone (``torchdoctor check | head -1``), drops what is
    written instead of raising, so the command finishes and exits with its own status."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._drop_the_rest()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop_the_rest()

    def _drop_the_rest(self) -> None:
        self.reader_gone = True
        try:  # the interpreter's own last flush goes nowhere instead of failing
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _Interrupts:
    """Ctrl-C while a command runs: remembered as well as raised, because a library that catches too much
    (a bare ``except:`` in an import) can swallow the KeyboardInterrupt, and the run must still end in 130."""

    def __init__(self) -> None:
        self.seen = False
        self.previous = None
        self.previous_unraisable = sys.unraisablehook

    def _on_sigint(self, signum, frame) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def _on_unraisable(self, unraisable) -> None:
        """Ctrl-C that landed where Python cannot raise it (a weakref callback during an import, a
        ``__del__``) is printed by Python as "Exception ignored in … Traceback": it is remembered instead,
        and said as the one line. Anything else goes to the hook there was."""
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            self.seen = True
            return
        self.previous_unraisable(unraisable)

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)
            self.previous_unraisable, sys.unraisablehook = sys.unraisablehook, self._on_unraisable
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is None:
            return
        # Interrupted: the verdict is given and the process is ending, so a second Ctrl-C must not turn the
        # exit into a traceback or a death by signal. Otherwise (main is also called in-process) put it back.
        signal.signal(signal.SIGINT, signal.SIG_IGN if self.seen else self.previous)
        if not self.seen:
            sys.unraisablehook = self.previous_unraisable


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return its exit status."""
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show ✓ gets + instead of a traceback
        fall_back_to_ascii(stream)
    stdout, sys.stdout = sys.stdout, _UntilTheReaderLeaves(sys.stdout)
    no_color = os.environ.get("NO_COLOR")
    try:
        with _Interrupts() as interrupts:
            try:
                status = _run(argv)
            except KeyboardInterrupt:  # Ctrl-C after the command returned, before its status was taken
                interrupts.seen, status = True, None
        if interrupts.seen and status != 130:  # the interrupt was swallowed on the way, or came late
            print("torchdoctor: interrupted", file=sys.stderr)
            status = 130
        return status
    finally:
        sys.stdout = stdout
        if no_color is None:  # --no-color lasts one run (main is also called in-process, by tests)
            os.environ.pop("NO_COLOR", None)


def _run(argv: list[str] | None) -> int:
    try:
        result = _command_line().main(args=argv, prog_name="torchdoctor", standalone_mode=False)
    except typer.Exit as done:
        return done.exit_code
    except _UsageError as error:
        if type(error).__name__ == "NoArgsIsHelpError":  # asked for nothing: the help is the answer
            print(error.format_message())
            return 0
        where = f" (see `{error.ctx.command_path} --help`)" if error.ctx is not None else ""
        print(f"torchdoctor: error: {_usage_message(error)}{where}", file=sys.stderr)
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


def run() -> None:
    """The console script: `main`, then exit with its status. The verdict is out by then, so a Ctrl-C while
    the interpreter shuts down (torch's exit handlers take a moment) is ignored rather than printed as a
    traceback from an exit handler."""
    try:
        status = main()
    except KeyboardInterrupt:  # Ctrl-C in the instant between main's handler and the line below
        print("torchdoctor: interrupted", file=sys.stderr)
        status = 130
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if status == 130:
        # Interrupted, and everything we started is stopped. CPython 3.11 remembers a KeyboardInterrupt that
        # passed through C code running Python during an import, even once caught, and would end the process
        # by SIGINT (status -2) instead of 130: leave without the interpreter's own exit.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)
    sys.exit(status)
