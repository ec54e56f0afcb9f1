"""Read a pickle from a stranger without running anything in it.

A pickle is a small program: ``GLOBAL os system`` and ``REDUCE`` make ``pickle.load`` run any function.
`load` admits only what a flight-recorder dump is made of (dicts, lists, tuples, sets, strings, bytes,
numbers, booleans, ``None``): every opcode that would fetch a class or a function (``GLOBAL``,
``STACK_GLOBAL``, ``INST``, ``OBJ``, the extension registry, persistent ids) is refused before anything is
called, as are files and nestings too large to be a dump.

A file cut off in the middle (a rank killed while it wrote) is still read as far as it goes: `load` returns
what the intact part holds, and says it was truncated.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A dump of 20,000 entries with Python stacks is tens of MB; a file far past that is not one.
MAX_BYTES = 1 << 30
MAX_DEPTH = 64
MAX_OBJECTS = 20_000_000
_PLAIN = (dict, list, tuple, set, frozenset, str, bytes, bytearray, int, float, complex, bool, type(None))


class UnsafePickle(ValueError):
    """The file is not a plain-data pickle (or is too large or deep to be one); the message says why."""


@dataclass
class Loaded:
    """What `load` read: the data, and whether the file ended before the pickle did."""

    data: Any
    truncated: bool = False


class _PlainUnpickler(pickle._Unpickler):  # the pure-Python one: after a cut-off, its stacks are ours to read
    def find_class(self, module: str, name: str):
        raise UnsafePickle(f"it asks to load {module}.{name}, and only plain data is read")

    def persistent_load(self, pid):
        raise UnsafePickle("it refers to outside objects (a persistent id), and only plain data is read")


class _FastPlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        raise UnsafePickle(f"it asks to load {module}.{name}, and only plain data is read")

    def persistent_load(self, pid):
        raise UnsafePickle("it refers to outside objects (a persistent id), and only plain data is read")


def loads(data: bytes) -> Loaded:
    """Plain data from the pickle ``data``; `UnsafePickle` (one line, saying why) for anything else."""
    if len(data) > MAX_BYTES:
        raise UnsafePickle(f"{len(data):,} bytes, more than the {MAX_BYTES:,} a dump can be")
    try:
        value = _FastPlainUnpickler(io.BytesIO(data)).load()
        truncated = False
    except UnsafePickle:
        raise
    except RecursionError:
        raise UnsafePickle("nested too deeply to be plain data") from None
    except MemoryError:
        raise UnsafePickle("it asks for more memory than a dump takes") from None
    except Exception as error:  # noqa: BLE001 - a cut-off file, or opcodes that do not fit together
        value, truncated = _salvage(data, error)
    # Each object a reader meets costs the pickle at least a byte, unless it is shared (a 2-byte memo
    # reference): more visits than that is a pickle built to make readers walk forever.
    _check_plain(value, min(MAX_OBJECTS, 2 * len(data) + 10_000))
    return Loaded(value, truncated)


def load(path: Path) -> Loaded:
    """`loads` on the file at ``path``; `OSError` as open() raises it."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise UnsafePickle(f"{size:,} bytes, more than the {MAX_BYTES:,} a dump can be")
    return loads(path.read_bytes())


def _salvage(data: bytes, first_error: Exception) -> tuple[Any, bool]:
    """Run the pickle again with the pure-Python unpickler and, where it stops for want of input, close
    every container still open, the way the missing opcodes would have."""
    source = io.BytesIO(data)
    unpickler = _PlainUnpickler(source)
    try:
        return unpickler.load(), False
    except UnsafePickle:
        raise
    except (RecursionError, MemoryError):
        raise UnsafePickle("it asks for more memory or nesting than a dump takes") from None
    except Exception as error:  # noqa: BLE001 - anything else the opcodes do wrong is a broken file
        # A cut inside an opcode's argument surfaces as EOFError, struct.error or IndexError, depending on
        # the opcode: what tells a cut-off file from a broken one is that the reader ran out of bytes.
        if source.tell() < len(data):
            raise UnsafePickle(f"not a readable pickle ({type(error).__name__}: {_short(error)})") from None
    stack = list(getattr(unpickler, "stack", []))
    meta = [list(level) for level in getattr(unpickler, "metastack", [])]
    while meta:
        items, stack = stack, meta.pop()
        target = stack[-1] if stack else None
        if isinstance(target, list):
            target.extend(items)
        elif isinstance(target, dict):
            for key, value in zip(items[0::2], items[1::2], strict=False):
                if isinstance(key, (str, int, float, bool, bytes, tuple, type(None))):
                    target[key] = value
    if not stack:
        raise UnsafePickle(f"the file ends before any data ({first_error})")
    return stack[0], True


def _short(error: BaseException, limit: int = 120) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_plain(value: Any, most: int) -> None:
    """Refuse values that are not plain data, nest deeper than ``MAX_DEPTH`` or hold too many objects
    (a pickle can share one list many times over; counting visits bounds what a reader will walk)."""
    pending = [(value, 0)]
    seen = 0
    while pending:
        item, depth = pending.pop()
        seen += 1
        if seen > most:
            raise UnsafePickle(
                f"more than {most:,} objects to walk through, more than a dump of its size holds"
            )
        if depth > MAX_DEPTH:
            raise UnsafePickle(f"nested more than {MAX_DEPTH} levels deep, deeper than a dump")
        if not isinstance(item, _PLAIN):
            raise UnsafePickle(f"it holds a {type(item).__name__}, and only plain data is read")
        if isinstance(item, dict):
            pending.extend((part, depth + 1) for pair in item.items() for part in pair)
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending.extend((part, depth + 1) for part in item)
