"""Finding a literal in a buffer as fast as the C library can: ``memmem`` where it has one, ``bytes.find`` else.

The reader looks for a few short literals through every byte of a long log, one pass each, and those passes
are most of `explain`'s time. glibc's ``memmem`` (a shift table on pairs of bytes) runs about twice as fast as
CPython's ``bytes.find`` for them (measured on 200 MB of the log ``benchmarks/explain_throughput.py`` writes:
0.40 s against 0.76 s for seven literals of 4 to 17 bytes). It is called through ctypes, which costs about a
microsecond a call: worth it for a literal that is rare, not for one found on every line (use ``bytes.find``
there). Where there is no ``memmem`` (Windows), `finder` gives ``bytes.find`` itself: the same answers.

    >>> find = finder(b"step 1 loss=2.1\\nRuntimeError: boom\\n")
    >>> find(b"rror", 0, 36), find(b"rror", 0, 10), find(b"Killed", 0, 36)
    (24, -1, -1)
    >>> finder(bytearray(b"step 1 loss=nan\\n"))(b"nan", 0, 16)
    12
"""

from __future__ import annotations

from collections.abc import Callable

try:
    import ctypes
except ImportError:  # a Python built without ctypes: bytes.find, the same answers
    ctypes = None


def _load_memmem():
    """The C library's ``memmem``, typed, or None where the process has none."""
    if ctypes is None:
        return None
    try:
        memmem = ctypes.CDLL(None).memmem  # the symbols the interpreter is linked with: libc's on Linux/macOS
    except (OSError, AttributeError, TypeError):  # Windows: CDLL(None) is refused; no memmem in some libcs
        return None
    memmem.restype = ctypes.c_void_p
    memmem.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
    return memmem


_MEMMEM = _load_memmem()


def finder(buf: bytes | bytearray) -> Callable[[bytes, int, int], int]:
    """A ``find(literal, start, end)`` over ``buf``: the offset of the first ``literal`` wholly inside
    ``buf[start:end]``, or -1 — what ``buf.find(literal, start, end)`` returns for offsets from 0 on, faster
    for a rare literal.

    The function returned holds ``buf`` (a bytearray cannot change size until it is dropped), so the address
    handed to C stays valid.
    """
    memmem = _MEMMEM
    if memmem is None or type(buf) not in (bytes, bytearray):
        return buf.find
    if type(buf) is bytes:
        held = buf
        base = ctypes.cast(buf, ctypes.c_void_p).value or 0
    else:
        if not buf:
            return buf.find
        held = ctypes.c_char.from_buffer(buf)  # its first byte, in place: an export of buf's memory
        base = ctypes.addressof(held)
    size = len(buf)

    def find(literal: bytes, start: int, end: int, held: object = held) -> int:
        start, end = max(0, start), min(end, size)
        if end - start < len(literal) or not literal:
            return buf.find(literal, start, end)  # the edge cases, answered as bytes.find does
        at = memmem(base + start, end - start, literal, len(literal))
        return -1 if at is None else at - base

    return find
