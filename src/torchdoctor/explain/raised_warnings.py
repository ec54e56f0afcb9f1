"""A warning raised as the exception that stopped the run, not printed as the run went on.

Under ``PYTHONWARNINGS=error`` (``-W error``, ``warnings.simplefilter("error")``) ``warnings.warn`` raises the
warning's class: Python prints a traceback ending in ``UserWarning: <message>`` at the start of a line, the
``warnings.warn(`` call its last frame. A warning only shown is printed as ``path.py:618: UserWarning: <message>``
with no traceback above it. ``raised(line, above)`` tells the first from the second; verdict.py reads a kind's
warning so raised as the run's error, with the filter that keeps errors for the script's own warnings.
"""

from __future__ import annotations

import re

# the exception line of a raised warning: the class (a module's prefix allowed) at the line's start
_RAISED = re.compile(r"(?:[A-Za-z_]\w*\.)*(?P<type>[A-Z]\w*Warning): ")
_HEADER = "Traceback (most recent call last):"
# lines a traceback holds between its header and its exception: frames and their indented source lines, carets
_FRAME_LINE = re.compile(r"\s|File \"|$")


def raised(line: str, above: list[str]) -> str:
    """The warning's class where ``line`` is a warning raised at the end of the traceback ``above`` it (its
    lines just above, nearest last); "" for a warning only printed."""
    found = _RAISED.match(line)
    if found is None or not above:
        return ""
    for text in reversed(above):
        if text.startswith(_HEADER) or text.endswith(_HEADER):
            return found["type"]
        if not _FRAME_LINE.match(text):
            return ""
    return ""


def summary(text: str, warning: str) -> str:
    """A kind's summary of a warning, said of one raised as the run's error."""
    text = re.sub(r" ?\(a warning, the run went on[^)]*\)", "", text)
    return (
        f"{text} — a {warning} raised as an error (warnings are turned into exceptions: PYTHONWARNINGS=error, "
        "-W error or warnings.simplefilter('error')), which stopped the run"
    )


def fix(text: str, warning: str) -> str:
    """A kind's fix of a warning, after the filter that raised it: what lets the run go on."""
    return (
        f"The run stopped on this {warning} only because warnings are errors in it. Keep them errors for the "
        f"script's own code only: export PYTHONWARNINGS=error:::__main__ (or warnings.filterwarnings('error', "
        "module='__main__')), or drop the error filter; `torchdoctor check` says so (sys.python_warnings). "
        f"Or act on what it warns of: {text}"
    )
