"""The call sites of a worker's collectives, kept where a dead or stuck rank cannot take them away.

torch's flight recorder knows each collective's Python stack, but it cannot always give it back: with a gloo
collective in flight, torch 2.13 holds the recorded stacks back (`watchdog.own_flight_record` then dumps
without them), and a rank that was killed or called ``os._exit`` leaves no dump at all. So under
``torchdoctor launch --watchdog`` each worker also notes, for the newest collectives it called through
``torch.distributed``: the process group, the sequence numbers the call used (torch's own count, the flight
recorder's ``collective_seq_id``), the operation, the tensor's shape and dtype, and the caller's frames, into
``rank<N>.calls``: a file mapped into memory, written as the call starts, so a rank that is aborted (gloo's
size check) or killed right after leaves it. The cost is a few microseconds per collective.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import inspect
import mmap
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from torchdoctor.hang.source import Frame

# The collectives a script calls by name; the ones built on others (``*_object``) count every call they make.
RECORDED = (
    "all_reduce all_gather all_gather_into_tensor all_gather_object all_to_all all_to_all_single barrier "
    "broadcast broadcast_object_list gather gather_object reduce reduce_scatter reduce_scatter_tensor "
    "scatter scatter_object_list monitored_barrier"
).split()
KEEP = 64  # calls kept: a hang or a failure is decided by the newest few
FRAMES = 8  # caller frames kept per call, innermost first
SLOT = 2048  # bytes per call in the file: 8 (last sequence number) + 4 (length) + the call (`_encode`)
_HEAD = 8  # the file starts with the number of calls noted so far

_ring: list = []  # [mmap, calls noted so far] once `open_ring` opened the file
_originals: dict[str, Callable] = {}


def open_ring(path: Path | str) -> None:
    """Note calls in ``path``, a file of `KEEP` slots mapped into memory: what a call writes there is in the
    file at once (the kernel keeps it), so a rank that aborts or is killed a microsecond later leaves it."""
    with open(path, "wb") as file:
        file.truncate(_HEAD + KEEP * SLOT)
    with open(path, "r+b") as file:
        _ring[:] = [mmap.mmap(file.fileno(), _HEAD + KEEP * SLOT), 0]


def record_calls_on_import() -> None:
    """Wrap ``torch.distributed``'s collectives as soon as it is imported (or now, if it is)."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and hasattr(dist, "all_reduce"):
        record_calls(dist)
        return
    sys.meta_path.insert(0, _WhenImported())


class _WhenImported(importlib.abc.MetaPathFinder):
    """Finds nothing itself; when ``torch.distributed`` is found by the others, wraps it once loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch.distributed":
            return None
        sys.meta_path.remove(self)  # once: the search below must not find this finder again
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            if hasattr(module, "all_reduce"):
                record_calls(module)

        spec.loader.exec_module = exec_module
        return spec


def record_calls(dist: Any) -> None:
    """Wrap ``dist``'s (``torch.distributed``'s) collectives so that each call notes its call site. Idempotent."""
    if _originals:
        return
    for name in RECORDED:
        original = getattr(dist, name, None)
        if original is None:
            continue
        try:
            group_at = list(inspect.signature(original).parameters).index("group")
        except ValueError:  # this torch's function takes no group: the default group is the one
            group_at = -1
        _originals[name] = original
        setattr(dist, name, _noting(dist, name, original, group_at))


def _noting(dist: Any, name: str, original: Callable, group_at: int) -> Callable:
    def wrapper(*args, **kwargs):
        if not _ring:
            return original(*args, **kwargs)
        group = kwargs.get("group", args[group_at] if 0 <= group_at < len(args) else None)
        try:
            pg = group if group is not None else dist.distributed_c10d._get_default_group()
            before = pg._get_sequence_number_for_group()
            tensor = _first_tensor(args)
            shape = list(tensor.shape) if tensor is not None else None
            dtype = str(tensor.dtype).replace("torch.", "") if tensor is not None else None
            slot = _note([pg.group_name, before, name, _caller_frames(), shape, dtype], before)
        except Exception:  # noqa: BLE001 - no group yet, or a torch without these: the call itself says why
            return original(*args, **kwargs)
        try:
            return original(*args, **kwargs)
        finally:
            try:
                _ring[0][slot : slot + 8] = pg._get_sequence_number_for_group().to_bytes(
                    8, "little", signed=True
                )
            except Exception:  # noqa: BLE001 - the group was destroyed meanwhile; the count stays open
                pass

    wrapper.__wrapped__ = original
    wrapper.__name__ = name
    return wrapper


def _encode(call: list) -> bytes:
    """One call as lines of tab-separated fields (a tenth of what JSON costs per collective): the group,
    the sequence number before it, the operation, the shape, the dtype; then one line per frame."""
    pg, before, op, frames, shape, dtype = call
    head = f"{pg}\t{before}\t{op}\t{'-' if shape is None else ','.join(map(str, shape))}\t{dtype or '-'}"
    return "\n".join([head, *[f"{f}\t{n}\t{c}" for f, n, c in frames]]).encode(errors="replace")


def _decode(data: bytes) -> tuple[str, int, str, list, list | None, str | None]:
    head, *lines = data.decode(errors="replace").split("\n")
    pg, before, op, shape, dtype = head.split("\t")
    frames = [(f, int(n), c) for f, n, c in (line.rsplit("\t", 2) for line in lines)]
    sizes = None if shape == "-" else [int(d) for d in shape.split(",") if d]
    return pg, int(before), op, frames, sizes, None if dtype == "-" else dtype


def _note(call: list, before: int) -> int:
    """Write one call into the next slot of the ring; the slot's offset."""
    ring, count = _ring
    data = _encode(call)
    while len(data) > SLOT - 12 and call[3]:  # a deep stack: keep the innermost frames that fit
        call[3] = call[3][: len(call[3]) // 2]
        data = _encode(call)
    slot = _HEAD + (count % KEEP) * SLOT
    ring[slot : slot + 12] = before.to_bytes(8, "little", signed=True) + len(data).to_bytes(4, "little")
    ring[slot + 12 : slot + 12 + len(data)] = data
    _ring[1] = count + 1
    ring[0:_HEAD] = (count + 1).to_bytes(8, "little")
    return slot


def _first_tensor(args: tuple):
    """The tensor a collective sends (its first tensor argument, or the first of a list), or None."""
    for arg in args[:2]:
        if hasattr(arg, "dtype") and hasattr(arg, "shape"):
            return arg
        if isinstance(arg, list) and arg and hasattr(arg[0], "dtype") and hasattr(arg[0], "shape"):
            return arg[0]
    return None


def _caller_frames() -> list:
    frame, frames = sys._getframe(2), []
    while frame is not None and len(frames) < FRAMES:
        frames.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return frames


class Call(NamedTuple):
    """One collective call as a worker noted it."""

    first: int  # the first sequence number it used in its group (torch's count, the flight recorder's)
    last: int  # the last one: more than one for the collectives built on others; ``first`` until it returns
    op: str
    frames: list[Frame]  # outermost first
    shape: list | None = None  # of the tensor it sends, when it sends one
    dtype: str | None = None  # ``float32``


def read_calls(path: Path) -> dict[str, list[Call]]:
    """Process group -> its calls, oldest first. Raises ``OSError`` or ``ValueError`` with what is wrong
    with the file."""
    data = path.read_bytes()
    if len(data) != _HEAD + KEEP * SLOT:
        raise ValueError(f"{len(data)} bytes, not the {_HEAD + KEEP * SLOT} of a ring of calls")
    count = int.from_bytes(data[:_HEAD], "little")
    groups: dict[str, list] = {}
    for index in range(max(0, count - KEEP), count):
        slot = _HEAD + (index % KEEP) * SLOT
        after = int.from_bytes(data[slot : slot + 8], "little", signed=True)
        size = int.from_bytes(data[slot + 8 : slot + 12], "little")
        try:
            pg, before, op, frames, shape, dtype = _decode(data[slot + 12 : slot + 12 + size])
            where = [Frame(f, n, c) for f, n, c in frames][::-1]
        except (ValueError, TypeError) as error:
            raise ValueError(f"call {index} does not read: {error}") from None
        last = max(after, before + 1)
        groups.setdefault(str(pg), []).append(Call(before + 1, last, str(op), where, shape, dtype))
    return groups
