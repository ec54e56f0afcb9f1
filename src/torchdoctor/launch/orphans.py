"""No orphans: every process we start dies with the process that started it, however that one dies.

A launcher killed with SIGKILL (the OOM killer, ``kill -9``) runs no clean-up of its own, so the kernel has to
do it: Linux's ``PR_SET_PDEATHSIG`` sends a chosen signal to a process when its parent ends. It is asked for in
the child (`die_with_parent`), and it holds across ``exec``, so it can be asked for between fork and exec of a
command (`dying_with_us`, for `subprocess.Popen`'s ``preexec_fn``) or by a Python child at its start, given
its parent's pid (a process can only check that the parent it was started by is still its parent).

Elsewhere (macOS, Windows) there is no such request: the parent's own clean-up on a signal it can catch is
all there is, and these functions do nothing.

Nor does a killed launcher remove its temporary folder: `temporary_folder` marks each one with its launcher
(pid and start time), and removes, as it makes a new one, those whose launcher is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

from torchdoctor.process_state import is_running, started_at

OWNER_FILE = "launcher"  # in each temporary folder: "<pid> <start time>" of the launch that made it

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _find_prctl():
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux (no prctl in the C library): nothing to ask the kernel
        return None


# Found once, in the parent: a child between fork and exec must not load a library (the loader's lock may be
# held by another thread of the parent at the fork).
_prctl = _find_prctl()


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> bool:
    """In a child of process ``parent``: have the kernel send it ``signum`` when ``parent`` ends.

    Returns False, having asked nothing, when ``parent`` is no longer this process's parent (it has ended
    already, or never was: the caller decides what that means) or where the kernel offers no such request.

    >>> die_with_parent(os.getppid(), signal.SIGTERM)  # doctest: +SKIP
    True
    """
    if _prctl is None or os.getppid() != parent:
        return False
    _prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    if os.getppid() != parent:  # it ended between the check and the request: the signal will never come
        os.kill(os.getpid(), signum)
    return True


def dying_with_us(signum: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for `subprocess.Popen` that makes the command end with this process: it gets
    ``signum`` when we end, SIGKILL included. None where the kernel offers no such request (Popen then runs
    nothing between fork and exec).

    The kernel ties the request to the thread that starts the command: start it from a thread that lives as
    long as the command should (the one that waits for it)."""
    if _prctl is None:
        return None
    parent = os.getpid()

    def in_the_child() -> None:
        die_with_parent(parent, signum)

    return in_the_child


def is_orphaned(parent: int) -> bool:
    """Whether ``parent`` (the pid the caller was started by) has ended, so that this process would run on
    without it: it is no longer this process's parent and no process with that pid is left."""
    if os.getppid() == parent:
        return False
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # the pid belongs to another user now: not our parent any more
        return True
    return False  # alive, and not our parent: we were not started by it (or its pid was reused)


def temporary_folder(prefix: str, root: str | os.PathLike | None = None) -> Path:
    """A new temporary folder named ``prefix...`` under ``root`` (default: the system's), marked with this
    process; first the folders of that prefix a launcher left behind when it was killed are removed (marked
    by a process that is no longer running: SIGKILL gave it no chance). Folders without a mark, or of a
    launcher still running, are left alone."""
    root = Path(root if root is not None else tempfile.gettempdir())
    for folder in root.glob(f"{prefix}*"):
        try:
            pid, started = (folder / OWNER_FILE).read_text().split()
            alive = is_running(int(pid), None if started == "None" else int(started))
        except (OSError, ValueError):  # no mark (not ours, or still being made), or unreadable: left alone
            continue
        if not alive:
            shutil.rmtree(folder, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    with contextlib.suppress(OSError):  # unmarked, it is only never cleaned up after a kill
        (folder / OWNER_FILE).write_text(f"{os.getpid()} {started_at()}")
    return folder
