"""The call sites of a worker's collectives, kept where a dead or stuck rank cannot take them away.

torch's flight recorder knows each collective's Python stack, but it cannot always give it back: with a gloo
collective in flight, torch 2.13 holds the recorded stacks back (`watchdog.own_flight_record` then dumps
without them), and a rank that was killed or called ``os._exit`` leaves no dump at all. So under
``torchdoctor launch --watchdog`` each worker also notes, for the newest collectives it called through
``torch.distributed``: the process group, the sequence numbers the call used (torch's own count, the flight
recorder's ``collective_seq_id``), the operation, the tensor's shape and dtype, and the caller's frames (the
direct caller, then the user's own code up the chain), into ``rank<N>.calls``: a file mapped into memory,
written as the call starts, so a rank that is aborted (gloo's size check) or killed right after leaves it.

A call writes numbers only, in one fixed-size slot: each name (a code object's file and function, a group, a
dtype) is written once, when first met, and its number is what the slots hold; whether a code object is the
user's and the line of each instruction offset are looked up once and remembered. The reader turns the
numbers back into names. What it costs a collective is in ``benchmarks/watchdog_overhead.py``.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import inspect
import json
import mmap
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from torchdoctor.distributed import functional
from torchdoctor.hang.source import Frame, is_user_code_object

# The collectives a script calls by name; the ones built on others (``*_object``) count every call they make.
RECORDED = (
    "all_reduce all_gather all_gather_into_tensor all_gather_object all_to_all all_to_all_single barrier "
    "broadcast broadcast_object_list gather gather_object reduce reduce_scatter reduce_scatter_tensor "
    "scatter scatter_object_list monitored_barrier"
).split()
# torch's functional collectives (tensor parallelism's and DTensor's; `functional_calls`) by the names their
# functions have, after those: an operation is its place in `OPS`
OPS = RECORDED + [name for names in functional.COLLECTIVES for name in names if name not in RECORDED]
KEEP = 64  # calls kept: a hang or a failure is decided by the newest few
FRAMES = 8  # caller frames kept per call, innermost first: the direct caller, then the user's own frames
WALK = 64  # frames looked at per call, at most, for the user's (a deep library stack hides them otherwise)
DIMS = 8  # dimensions of a shape kept; a tensor of more is noted without its shape

# The file: a header, `KEEP` fixed slots, then the names the slots refer to by number (file and function of
# a code object, group names, dtypes), each written once, when first met, so that a call writes only numbers.
_COUNT = struct.Struct("<q")  # calls noted so far; also the "after" field of a slot
_USED = struct.Struct("<ii")  # names written, bytes of the names area used
_HEAD = _COUNT.size + _USED.size
# a slot: sequence number after the call, before it, group, operation, dtype, number of dimensions,
# number of frames; then the dimensions (8 bytes each), then (name, line) per frame (4 + 4 bytes)
_SLOT_HEAD = struct.Struct("<qqiBibB")
SLOT = _SLOT_HEAD.size + DIMS * 8 + FRAMES * 8
_DIMS_AT = [struct.Struct(f"<{n}q") for n in range(DIMS + 1)]
_FRAMES_AT = [struct.Struct(f"<{2 * n}i") for n in range(FRAMES + 1)]
# the whole slot in one write, for each number of dimensions and of frames
_SLOT_AT = [
    [struct.Struct(f"<qqiBibB{d}q{(DIMS - d) * 8}x{2 * n}i") for n in range(FRAMES + 1)]
    for d in range(DIMS + 1)
]
_NAMES = 256 * 1024  # bytes for names: thousands of call sites
_SIZE = _HEAD + KEEP * SLOT + _NAMES
_UNKNOWN = -1  # a name that no longer fits in the file

_ring: list = []  # [mmap, calls noted so far] once `open_ring` opened the file
_originals: dict[str, Callable] = {}
_names: dict[Any, int] = {}  # name (str), dtype or code object -> its number in the file
# id(code object) -> (its name's number * 2 + 1 if it is the user's code, {instruction offset: line}). By
# id: a code object's own hash reads its whole bytecode, each time; and a frame's line (``f_lineno``) is
# worked out from the code's line table, each time, ten times what its instruction offset costs. The code
# objects are kept in `_pinned`, so that no id is reused.
_codes: dict[int, tuple[int, dict[int, int]]] = {}
_pinned: list = []
_PIN_AT_MOST = 100_000  # code objects made on the fly (exec in a loop) are looked up afresh past this
_names_used = [0, 0]  # names written, bytes used
# the straggler watch's timing wrappers (`torchdoctor.stragglers`), which stand between the user's call and this
# one's: the caller noted is the frame above them
_TIMING = frozenset(
    os.path.join(os.path.dirname(os.path.dirname(__file__)), "stragglers", name)
    for name in ("hooks.py", "functional.py")
)


def open_ring(path: Path | str) -> None:
    """Note calls in ``path``, a file mapped into memory: what a call writes there is in the file at once
    (the kernel keeps it), so a rank that aborts or is killed a microsecond later leaves it."""
    with open(path, "wb") as file:
        file.truncate(_SIZE)
    with open(path, "r+b") as file:
        _ring[:] = [mmap.mmap(file.fileno(), _SIZE), 0]
    _names.clear()
    _codes.clear()
    _pinned.clear()
    _names_used[:] = [0, 0]


def write_counts(path: Path | str) -> None:
    """Write how many collectives this rank has started so far in each group it noted a call in (torch's
    count, JSON: group name -> count) to ``path``: with it, a rank whose newest noted call is its newest
    collective is known not to have entered the next one, where its calls are all there is to compare."""
    counts = {}
    try:  # torch's own list of the live groups: one kept here would outlive destroy_process_group, which
        # shuts a group down as its last reference goes (gloo waits there for collectives still in flight)
        live = list(sys.modules["torch.distributed"].distributed_c10d._world.pg_names.items())
    except (KeyError, AttributeError):  # torch.distributed never loaded, or a torch without that list
        live = []
    for pg, name in live:
        if name not in _names:  # no call noted in it
            continue
        try:
            counts[name] = int(pg._get_sequence_number_for_group())
        except Exception:  # noqa: BLE001 - destroyed meanwhile: its count is not known
            continue
    del live
    try:
        Path(f"{path}.tmp").write_text(json.dumps(counts))
        os.replace(f"{path}.tmp", path)
    except OSError:  # the launcher removed its folder: the run is over anyway
        pass


def read_counts(path: Path) -> dict[str, int]:
    """What `write_counts` wrote; empty where it is not there or does not read."""
    try:
        said = json.loads(path.read_text())
        return {str(name): int(count) for name, count in said.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def record_calls_on_import() -> None:
    """Wrap ``torch.distributed``'s collectives as soon as it is imported (or now, if it is)."""
    when_imported(record_calls)


def when_imported(then: Callable[[Any], None], module: str = "torch.distributed") -> None:
    """Call ``then(module)`` as soon as ``module`` (``torch.distributed``, or another with an ``all_reduce``)
    is imported (or now, if it is), before the script can take a name from it."""
    found = sys.modules.get(module)
    if found is not None and hasattr(found, "all_reduce"):
        then(found)
        return
    sys.meta_path.insert(0, _WhenImported(then, module))


class _WhenImported(importlib.abc.MetaPathFinder):
    """Finds nothing itself; when ``module`` is found by the others, hands it to ``then`` once loaded."""

    def __init__(self, then: Callable[[Any], None], module: str) -> None:
        self.then, self.module = then, module

    def find_spec(self, name, path=None, target=None):
        if name != self.module:
            return None
        sys.meta_path.remove(self)  # once: the search below must not find this finder again
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            if hasattr(module, "all_reduce"):
                self.then(module)

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
    world = dist.distributed_c10d._world  # its default_pg: _get_default_group() costs a microsecond more
    op = OPS.index(name)
    tensor_type = sys.modules["torch"].Tensor

    def wrapper(*args, **kwargs):
        if not _ring:
            return original(*args, **kwargs)
        group = kwargs.get("group") if kwargs else None
        if group is None and 0 <= group_at < len(args):
            group = args[group_at]
        pg = group if group is not None else world.default_pg
        return call_noted(original, args, kwargs, pg, op, _first_tensor(args, tensor_type), sys._getframe(1))

    wrapper.__wrapped__ = original
    wrapper.__name__ = name
    return wrapper


def call_noted(
    original: Callable, args: tuple, kwargs: dict, pg: Any, op: int, tensor: Any, frame: Any
) -> Any:
    """``original(*args, **kwargs)``, a collective on ``pg``, noted in the ring with ``pg``'s count before and
    after it (operation ``op``, ``tensor``, the caller's ``frame``): what every wrapper of the call log does."""
    try:
        while frame is not None and frame.f_code.co_filename in _TIMING:
            frame = frame.f_back
        before = pg._get_sequence_number_for_group()
        slot = _note(pg, before, op, tensor, frame)
    except Exception:  # noqa: BLE001 - no group yet, or a torch without these: the call itself says why
        return original(*args, **kwargs)
    try:
        return original(*args, **kwargs)
    finally:
        try:
            _COUNT.pack_into(_ring[0], slot, pg._get_sequence_number_for_group())
        except Exception:  # noqa: BLE001 - the group was destroyed meanwhile; the count stays open
            pass


def _note(pg: Any, before: int, op: int, tensor: Any, frame: Any) -> int:
    """Write one call into the next slot of the ring, in numbers only; the slot's offset."""
    ring, count = _ring
    slot = _HEAD + (count % KEEP) * SLOT
    group = pg.group_name
    number = _names.get(group)
    if number is None:
        number = _name(group, group)
    if tensor is None:
        dtype, shape = _UNKNOWN, ()
        dims = -1
    else:
        dtype = _names.get(tensor.dtype)
        if dtype is None:
            dtype = _name(tensor.dtype, str(tensor.dtype).replace("torch.", ""))
        shape = tensor.shape
        dims = len(shape)
        if dims > DIMS:  # noted without its shape
            shape, dims = (), -1
    where = _frames(frame)
    _SLOT_AT[len(shape)][len(where) // 2].pack_into(
        ring, slot, before, before, number, op, dtype, dims, len(where) // 2, *shape, *where
    )
    _ring[1] = count + 1
    _COUNT.pack_into(ring, 0, count + 1)
    return slot


def _frames(frame: Any) -> list[int]:
    """(name number, line) of the caller's frames, flat, innermost first: the direct caller whatever it is,
    then only the user's own code (a library's frames between them tell nothing about the culprit)."""
    found: list[int] = []
    codes = _codes
    for _ in range(WALK):
        if frame is None:
            break
        known = codes.get(id(frame.f_code))
        if known is None:
            known = _learn(frame.f_code)
        if known[0] & 1 or not found:
            line = known[1].get(frame.f_lasti)
            if line is None:
                line = known[1][frame.f_lasti] = frame.f_lineno or 0
            found += (known[0] >> 1, line)
            if len(found) == 2 * FRAMES:
                break
        frame = frame.f_back
    return found


def _learn(code: Any) -> tuple[int, dict[int, int]]:
    """A code object's name number * 2, + 1 when it is the user's code, and an empty map of its lines;
    remembered for the next call. A name that did not fit is -1 (-2 or -1 here, which ``>> 1`` gives back
    as -1)."""
    text = f"{code.co_filename}\t{code.co_name}"
    number = _names.get(text)
    number = _name(text, text) if number is None else number
    known = (number * 2 + int(is_user_code_object(code)), {})
    if len(_pinned) < _PIN_AT_MOST:
        _pinned.append(code)
        _codes[id(code)] = known
    return known


def _name(key: Any, text: str) -> int:
    """Write ``text`` into the names area once; its number (`_UNKNOWN` when the area is full)."""
    data = text.encode(errors="replace")
    count, used = _names_used
    if used + 4 + len(data) > _NAMES:
        return _UNKNOWN  # not remembered: a later, shorter name may still fit
    ring = _ring[0]
    at = _HEAD + KEEP * SLOT + used
    ring[at : at + 4] = len(data).to_bytes(4, "little")
    ring[at + 4 : at + 4 + len(data)] = data
    _names_used[:] = [count + 1, used + 4 + len(data)]
    _USED.pack_into(ring, _COUNT.size, count + 1, used + 4 + len(data))  # after the name: never half read
    _names[key] = count
    return count


def _first_tensor(args: tuple, tensor_type: type) -> Any:
    """The tensor a collective sends (its first tensor argument, or the first of a list), or None."""
    for arg in args[:2]:
        if isinstance(arg, tensor_type):
            return arg
        if isinstance(arg, list) and arg and isinstance(arg[0], tensor_type):
            return arg[0]
    return None


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
    if len(data) != _SIZE:
        raise ValueError(f"{len(data)} bytes, not the {_SIZE} of a ring of calls")
    (count,) = _COUNT.unpack_from(data, 0)
    names = _read_names(data)
    groups: dict[str, list] = {}
    for index in range(max(0, count - KEEP), count):
        slot = _HEAD + (index % KEEP) * SLOT
        after, before, group, op, dtype, dims, depth = _SLOT_HEAD.unpack_from(data, slot)
        if not (-1 <= group < len(names) and op < len(OPS) and dims <= DIMS and depth <= FRAMES):
            raise ValueError(f"call {index} does not read: it names group {group}, operation {op}")
        shape = list(_DIMS_AT[dims].unpack_from(data, slot + _SLOT_HEAD.size)) if dims >= 0 else None
        flat = _FRAMES_AT[depth].unpack_from(data, slot + _SLOT_HEAD.size + DIMS * 8)
        frames = [_frame(names, flat[i], flat[i + 1]) for i in range(0, len(flat), 2)][::-1]
        last = max(after, before + 1)
        kind = names[dtype] if 0 <= dtype < len(names) else None
        pg = names[group] if group >= 0 else "?"  # its name no longer fitted in the file
        groups.setdefault(pg, []).append(Call(before + 1, last, OPS[op], frames, shape, kind))
    return groups


def _read_names(data: bytes) -> list[str]:
    count, used = _USED.unpack_from(data, _COUNT.size)
    if not (0 <= used <= _NAMES):
        raise ValueError(f"its names area says {used} bytes used, of {_NAMES}")
    names, at, end = [], _HEAD + KEEP * SLOT, _HEAD + KEEP * SLOT + used
    while at < end and len(names) < count:
        size = int.from_bytes(data[at : at + 4], "little")
        names.append(data[at + 4 : at + 4 + size].decode(errors="replace"))
        at += 4 + size
    return names


def _frame(names: list[str], number: int, line: int) -> Frame:
    file, _, function = (names[number] if 0 <= number < len(names) else "?\t?").rpartition("\t")
    return Frame(file, line, function)
