"""The status line: a spinner on stderr saying what a command is doing, on a terminal only.

Its drawing thread stops for good however the command ends: a Ctrl-C that lands while the line is being put
away (the moment a command's last step returns) still stops it, so nothing is drawn after the command's last
word ("torchdoctor: interrupted"). rich's status line left its thread drawing when the interrupt came inside
its own stop, while torch's exit handlers kept the process alive.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
ASCII_FRAMES = "|/-\\"
EVERY = 0.08  # seconds between frames
_CLEAR = "\r\x1b[2K"  # to the line's start, and erase it


class _Spinner:
    def __init__(self, stream, text: str, frames: str) -> None:
        self.stream, self.text, self.frames = stream, text, frames
        self.done = threading.Event()
        self.lock = threading.Lock()  # a frame is drawn whole, and never after `stop`
        self.thread = threading.Thread(target=self._draw, name="torchdoctor-status-line", daemon=True)
        self.shown = 0  # frames drawn

    def _draw(self) -> None:
        while not self.done.is_set():
            self.show(self.text)
            self.done.wait(EVERY)

    def show(self, text: str) -> None:
        """Draw the next frame with ``text`` (at once: the line names what is being done now)."""
        with self.lock:
            if self.done.is_set():
                return
            self.text = text
            self._write(f"{_CLEAR}{self.frames[self.shown % len(self.frames)]} {text}")
            self.shown += 1

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: nothing to show it on
            self.done.set()

    def stop(self) -> None:
        """Stop drawing and erase the line; harmless when called again."""
        self.done.set()
        if self.thread.ident is None:  # never started
            return
        with self.lock:
            self._write(_CLEAR)
        self.thread.join(1.0)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def status_line(text: str, stream=None) -> Iterator[Callable[[str], None]]:
    """A spinner on ``stream`` (stderr) saying ``text`` while the block runs; it yields a function that
    changes the text. Nothing is shown when the stream is not a terminal (logs, pipes, CI)."""
    from torchdoctor.findings import shows_marks

    stream = sys.stderr if stream is None else stream
    if not _is_terminal(stream):
        yield lambda _text: None
        return
    spinner = _Spinner(stream, text, FRAMES if shows_marks(stream) else ASCII_FRAMES)
    try:
        spinner.thread.start()
        yield spinner.show
    finally:
        interrupted = False
        while True:  # a Ctrl-C inside `stop` is kept for after it: the thread must not outlive the block
            try:
                spinner.stop()
                break
            except KeyboardInterrupt:
                interrupted = True
        if interrupted:
            raise KeyboardInterrupt
