"""How debug mode's errors reach the user: the same `DistributedOperationException` on every rank, raised with
a traceback that ends at the user's line rather than in torchdoctor, from the watcher thread into the main one.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any


class DistributedOperationException(Exception):
    """A collective cannot run: ranks passed different shapes/dtypes/devices, or a rank never arrived."""

    __module__ = "torchdoctor.distributed"  # where users import it from, and how tracebacks name it


def raise_problem(problem: str) -> None:
    """Raise the named error with a traceback that ends at the user's line, not in torchdoctor."""
    install_trimming_hook()
    raise DistributedOperationException(problem).with_traceback(None) from None


def raise_in_main_thread(problem: str) -> None:
    """Raise ``problem`` in the main thread at its next Python instruction (``PyThreadState_SetAsyncExc``)."""
    import ctypes

    class Divergence(DistributedOperationException):
        __module__ = "torchdoctor.distributed"
        __qualname__ = __name__ = "DistributedOperationException"

        def __init__(self, *args: Any) -> None:
            super().__init__(problem)

    main = threading.main_thread().ident
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main), ctypes.py_object(Divergence))


_OUR_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_ours(filename: str) -> bool:
    """Whether ``filename`` is one of torchdoctor's own files."""
    return os.path.abspath(filename).startswith(_OUR_FOLDER + os.sep)


def install_trimming_hook() -> None:
    """Print our errors' tracebacks without torchdoctor's frames, inside whatever hook is there (torch's adds
    the ``[rankN]:`` prefix)."""
    if getattr(sys.excepthook, "__torchdoctor_trims__", False):
        return
    previous = sys.excepthook

    def hook(kind, error, tb):
        if isinstance(error, DistributedOperationException):
            tb = _trimmed(tb)
            error.__traceback__ = tb  # what Python's own printing reads
            error.__suppress_context__ = True  # a store wait it interrupted is no part of the user's story
        previous(kind, error, tb)

    hook.__torchdoctor_trims__ = True
    sys.excepthook = hook


def _trimmed(tb: Any) -> Any:
    import types

    frames = []
    while tb is not None:
        if not is_ours(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    result = None
    for item in reversed(frames):
        result = types.TracebackType(result, item.tb_frame, item.tb_lasti, item.tb_lineno)
    return result
