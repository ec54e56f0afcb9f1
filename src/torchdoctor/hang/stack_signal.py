"""The signal that asks a worker for its stack stays answered, and is never sent where it would kill.

``faulthandler`` answers the signal from C (so a rank blocked in a collective answers too), but Python's own
``signal`` module does not know it: ``signal.getsignal`` says ``SIG_DFL``. A library that saves every
signal's handler and puts them back (Lightning's ``_SignalConnector`` does, at the end of each ``fit``,
``validate`` and ``test``) therefore sets it to ``SIG_DFL``, and the signal then ends the rank (exit
status -39 under torchrun) instead of dumping its stack: a hang reported as a failed job. The worker checks,
at each look at its progress, that the signal is still caught and registers it again when not
(`keep_caught`); the launcher sends it only to a process that catches it (`catches`).
"""

from __future__ import annotations

import faulthandler
from typing import IO


def catches(pid: int | str, signum: int) -> bool | None:
    """Whether process ``pid`` has a handler for ``signum`` (``/proc/PID/status``'s ``SigCgt``); None where
    that cannot be read (no /proc, the process is gone)."""
    found = _masks(pid)
    return None if found is None else bool(found.get("SigCgt", 0) >> (signum - 1) & 1)


def keep_caught(signum: int, file: IO) -> bool:
    """Register ``faulthandler`` for ``signum`` again (writing to ``file``) where something set it back to
    its default action since (not where it is ignored: the worker does that as its script ends); whether it
    had to."""
    found = _masks("self")
    if found is None or (found.get("SigCgt", 0) | found.get("SigIgn", 0)) >> (signum - 1) & 1:
        return False
    # faulthandler re-installs its handler only for a signal it no longer has registered
    faulthandler.unregister(signum)
    faulthandler.register(signum, file=file, all_threads=True, chain=False)
    return True


def _masks(pid: int | str) -> dict[str, int] | None:
    """``/proc/PID/status``'s signal masks (``SigCgt``, ``SigIgn``, ...) as numbers; None where unreadable."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return {
                line[:6]: int(line.split()[1], 16) for line in status if line.startswith(("SigCgt", "SigIgn"))
            }
    except (OSError, ValueError, IndexError):
        return None
