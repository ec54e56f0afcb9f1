"""The status line (`torchdoctor check`, `report` on a terminal): drawn while the block runs, erased at its end,
and never drawn again after it, even where Ctrl-C lands while it is being put away (the real Ctrl-C at every
stage of `check`: tests/test_cli_interrupt.py)."""

import threading
import time

import pytest

from torchdoctor import status_line as module
from torchdoctor.status_line import status_line


class Terminal:
    """A stream that says it is a terminal and keeps what was written to it."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.written: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def _drawing_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "torchdoctor-status-line"]


def test_the_line_says_what_is_done_and_is_erased_at_the_end():
    terminal = Terminal()
    with status_line("checking this machine", terminal) as say:
        time.sleep(3 * module.EVERY)
        say("checking sys.python…")
        time.sleep(3 * module.EVERY)
    shown = "".join(terminal.written)
    assert "⠋ checking this machine" in shown and "checking sys.python…" in shown
    assert terminal.written[-1] == "\r\x1b[2K" and not _drawing_threads()


def test_ctrl_c_while_the_line_is_put_away_still_stops_it_and_is_raised_after(monkeypatch):
    # the moment a command's last step returns: the interrupt lands inside the line's own stop
    stop, calls = module._Spinner.stop, []

    def interrupted_once(self):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        stop(self)

    monkeypatch.setattr(module._Spinner, "stop", interrupted_once)
    terminal = Terminal()
    with pytest.raises(KeyboardInterrupt):
        with status_line("checking gpu.balance…", terminal):
            time.sleep(2 * module.EVERY)
    said = len(terminal.written)
    time.sleep(3 * module.EVERY)
    assert len(terminal.written) == said and terminal.written[-1] == "\r\x1b[2K" and not _drawing_threads()


def test_nothing_is_drawn_where_the_stream_is_not_a_terminal():
    class Pipe(Terminal):
        def isatty(self) -> bool:
            return False

    pipe = Pipe()
    with status_line("checking", pipe) as say:
        say("checking more")
    assert pipe.written == [] and not _drawing_threads()


def test_a_terminal_that_cannot_show_braille_gets_ascii_frames():
    terminal = Terminal()
    terminal.encoding = "ascii"
    with status_line("checking", terminal):
        time.sleep(2 * module.EVERY)
    assert "| checking" in "".join(terminal.written)


def test_nets_status_line_counts_the_bench_and_stops_from_a_stages_timeout(monkeypatch):
    """`torchdoctor net` keeps the same line: its bench counted, and stopped once from another thread (a stage's
    timeout, which shows the verdict and ends the process) and again at the block's end, drawing nothing after."""
    from torchdoctor.net.status import Status

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with Status() as status:
        status.row({"op": "all_reduce", "size": 2**20, "busbw": 2.345}, total=4)
        time.sleep(2 * module.EVERY)
        stopper = threading.Thread(target=status.stop)
        stopper.start()
        stopper.join()
        drawn = len(terminal.written)
        status.say("waiting for rank 1 (starting), at most 30s a stage")
        time.sleep(2 * module.EVERY)
    assert "all_reduce 1 MiB: 2.345 GB/s busbw (1 of 4)" in "".join(terminal.written)
    assert len(terminal.written) == drawn and terminal.written[-1] == "\r\x1b[2K" and not _drawing_threads()


def test_nets_status_line_is_silent_when_off_or_off_a_terminal(monkeypatch):
    from torchdoctor.net.status import Status

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with Status(enabled=False) as status:
        status.say("starting 2 ranks")
    monkeypatch.setattr(Terminal, "isatty", lambda self: False)
    with Status() as status:
        status.say("starting 2 ranks")
    assert terminal.written == [] and not _drawing_threads()
