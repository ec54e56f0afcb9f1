"""Debug mode: every rank checks in before a collective, so a mismatch or a missing rank is an error, not a hang.

At each checked collective a rank writes what it is about to do (the operation, the shapes, dtypes and devices
of its tensors, the source/destination rank, its call site) under a per-call key in the process group's own
store (the ``TCPStore`` that ``torchrun``/``init_process_group`` already run), then waits, with a timeout, for
the other ranks' keys. Every rank then sees the same set of entries and raises the same
`DistributedOperationException` on a mismatch. The store needs no collective, so this can neither hang on a
shape mismatch nor wait forever for a rank that never arrives: after ``TORCHDOCTOR_DEBUG_TIMEOUT`` seconds
(default 300, under NCCL's own 10-minute watchdog so this message comes first) the error names the missing
ranks and where every other rank is waiting.

``enable()`` also wraps the user's direct ``torch.distributed`` calls (``all_reduce``, ``all_gather``,
``all_gather_into_tensor``, ``reduce_scatter_tensor``, ``broadcast``, ``reduce``, ``barrier``) so existing DDP
scripts get the checks without code changes. What torch runs in C++ (DDP's gradient all-reduce) or through
``distributed_c10d`` directly (``all_gather_object``) is left alone.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

DEFAULT_TIMEOUT = 300.0
TRUE_VALUES = ("1", "true", "yes", "on")
CHECKED_CALLS = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "broadcast",
    "reduce",
    "barrier",
)
# signature field -> how the error names its values (plural), compared in this order
FIELDS = {
    "shape": "shapes",
    "dtype": "dtypes",
    "device": "devices",
    "src": "source ranks",
    "dst": "destination ranks",
    "reduce op": "reduce ops",
}
_KEY_PREFIX = "torchdoctor/debug"


class DistributedOperationException(Exception):
    """A collective cannot run: ranks passed different shapes/dtypes/devices, or a rank never arrived."""

    __module__ = "torchdoctor.distributed"  # where users import it from, and how tracebacks name it


# what enable() installed: name -> the original torch.distributed function
_originals: dict[str, Callable] = {}
_timeout_override: float | None = None
_sequence: dict[str, int] = {}  # process group key -> number of checked collectives so far
_sequence_lock = threading.Lock()
_site_names: dict[str, str] = {}  # code filename -> how errors show it


def debug_mode_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``TORCHDOCTOR_DEBUG_MODE`` asks for debug mode (``1``, ``true``, ``yes`` or ``on``)."""
    environ = os.environ if environ is None else environ
    return environ.get("TORCHDOCTOR_DEBUG_MODE", "").strip().lower() in TRUE_VALUES


def debug_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a rank waits for the others at a checked collective: ``enable(timeout)``, else
    ``TORCHDOCTOR_DEBUG_TIMEOUT``, else 300.

    >>> debug_timeout({"TORCHDOCTOR_DEBUG_TIMEOUT": "30"})
    30.0
    """
    if _timeout_override is not None and environ is None:
        return _timeout_override
    environ = os.environ if environ is None else environ
    value = environ.get("TORCHDOCTOR_DEBUG_TIMEOUT", "").strip()
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"TORCHDOCTOR_DEBUG_TIMEOUT={value!r} is not a positive number of seconds")
    return seconds


def enable(timeout: float | None = None) -> None:
    """Check every direct ``torch.distributed`` collective of this process before it runs.

    Idempotent; ``timeout`` (seconds) overrides ``TORCHDOCTOR_DEBUG_TIMEOUT``. ``disable()`` undoes it.

    Example::

        import torchdoctor.distributed.debug as debug
        debug.enable(timeout=60)   # then run the unchanged training script
    """
    global _timeout_override
    if timeout is not None:
        if not timeout > 0:
            raise ValueError(f"timeout={timeout!r}: must be a positive number of seconds")
        _timeout_override = float(timeout)
    import torch.distributed as dist

    if _originals or not dist.is_available():
        return
    for name in CHECKED_CALLS:
        original = getattr(dist, name)
        _originals[name] = original
        setattr(dist, name, _checked(name, original))


def disable() -> None:
    """Put the original ``torch.distributed`` functions back and forget ``enable``'s timeout."""
    global _timeout_override
    import torch.distributed as dist

    for name, original in _originals.items():
        setattr(dist, name, original)
    _originals.clear()
    _timeout_override = None


def is_enabled() -> bool:
    """Whether ``enable()`` has wrapped the ``torch.distributed`` collectives."""
    return bool(_originals)


def check_collective(
    operation: str, signature: Mapping[str, Any], group: Any = None, timeout: float | None = None
) -> None:
    """Check in at a collective; raise `DistributedOperationException` on every rank when ranks disagree.

    ``signature`` maps the fields of ``FIELDS`` (``shape``, ``dtype``, …) to JSON-able values that must be
    equal on every rank of ``group``. Does nothing without an initialised process group of two or more ranks,
    or on a rank outside ``group``.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    members = _members(dist, group)
    me = dist.get_rank()
    if len(members) < 2 or me not in members:
        return
    try:
        store = dist.distributed_c10d._get_default_store()
    except (RuntimeError, ValueError, AttributeError):
        return  # e.g. the MPI backend has no store: nothing to check in with
    group_key = "world" if len(members) == dist.get_world_size() else "-".join(map(str, members))
    with _sequence_lock:  # threads may run collectives on groups of their own
        seq = _sequence.get(group_key, 0) + 1
        _sequence[group_key] = seq
    prefix = f"{_KEY_PREFIX}/{group_key}"
    entry = {"operation": operation, "site": call_site(), **signature}
    others = [r for r in members if r != me]
    keys = [f"{prefix}/{seq}/{r}" for r in others]
    wait = debug_timeout() if timeout is None else timeout
    checkin = _checkin_store(store, wait)
    checkin.set(f"{prefix}/{seq}/{me}", json.dumps(entry, default=str))
    try:
        values = _get_all(checkin, keys, wait)
    except RuntimeError:  # DistStoreError: some rank did not check in within the timeout
        _checkin["store"] = None  # a client that timed out mid-request is not to be trusted again
        if not all(store.check([key]) for key in keys):
            raise DistributedOperationException(
                _missing_message(store, prefix, seq, members, me, entry, wait)
            ) from None
        values = [store.get(key) for key in keys]  # the last one arrived just as we gave up: carry on
    entries = {me: entry}
    for rank, value in zip(others, values, strict=True):
        entries[rank] = json.loads(value)
    # everyone has finished the previous call (they all wrote this one), so its key is nobody's to read
    if seq > 1:
        checkin.delete_key(f"{prefix}/{seq - 1}/{me}")
    problem = mismatch_message(entries, backend=str(dist.get_backend(group)))
    if problem:
        raise DistributedOperationException(problem)


def mismatch_message(entries: Mapping[int, Mapping[str, Any]], backend: str = "") -> str:
    """The error text for the first field on which the ranks' ``entries`` differ, or ``""`` when they agree.

    With ``backend="nccl"``, CPU tensors are an error too (NCCL only moves GPU memory).

    >>> print(mismatch_message({0: {"operation": "op", "shape": [1, 5]}, 1: {"operation": "op", "shape": [1, 2, 5]}}))
    Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.
    <BLANKLINE>
    Operation: `op`
    Input shapes:
      - Process 0: [1, 5]
      - Process 1: [1, 2, 5]
    """
    ranks = sorted(entries)
    first = entries[ranks[0]]
    sites = _sites_block(entries)
    operations = [entries[r]["operation"] for r in ranks]
    if len(set(operations)) > 1:
        lines = "\n  - ".join(f"Process {r}: `{entries[r]['operation']}`" for r in ranks)
        return (
            "Cannot apply desired operation because the processes called different operations at the same "
            f"point. All processes must call the same collectives in the same order.\n\nOperations:\n  - {lines}"
            + sites
        )
    for field, plural in FIELDS.items():
        values = [entries[r].get(field) for r in ranks]
        if any(v != values[0] for v in values):
            lines = "\n  - ".join(f"Process {r}: {_show(entries[r].get(field))}" for r in ranks)
            return (
                f"Cannot apply desired operation due to {field} mismatches. "
                f"All {plural} across devices must be valid."
                f"\n\nOperation: `{first['operation']}`\nInput {plural}:\n  - {lines}" + sites
            )
    if backend == "nccl" and any("cpu" in json.dumps(entries[r].get("device")) for r in ranks):
        lines = "\n  - ".join(f"Process {r}: {_show(entries[r].get('device'))}" for r in ranks)
        return (
            "Cannot apply desired operation: the NCCL backend only communicates CUDA tensors; move the CPU "
            f"tensors with `.cuda()` first.\n\nOperation: `{first['operation']}`\nInput devices:\n  - {lines}"
            + sites
        )
    return ""


def call_site() -> str:
    """``file:line in function`` of the first caller outside torchdoctor and torch: the user's collective."""
    skip = _library_dirs()
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(skip):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    code = frame.f_code
    name = _site_names.get(code.co_filename)
    if name is None:
        name = _site_names[code.co_filename] = _short_path(code.co_filename)
    return f"{name}:{frame.f_lineno} in {code.co_name}"


def tensor_signature(data: Any) -> dict[str, Any]:
    """Shapes, dtypes and device types of a (nested list/tuple/dict of) tensor(s), in the same nesting."""
    return {
        "shape": _nested(data, lambda t: list(t.shape)),
        "dtype": _nested(data, lambda t: str(t.dtype)),
        "device": _nested(data, lambda t: t.device.type),
    }


# --- helpers ---------------------------------------------------------------------------------------------


def _checked(name: str, original: Callable) -> Callable:
    describe = _DESCRIBE[name]

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        try:
            group, signature = describe(*args, **kwargs)
        except (TypeError, AttributeError):  # arguments torch itself will reject: let torch say how
            return original(*args, **kwargs)
        check_collective(f"torch.distributed.{name}", signature, group)
        return original(*args, **kwargs)

    wrapper.__torchdoctor_original__ = original
    return wrapper


def _op(op: Any) -> str:
    return "SUM" if op is None else str(op).rsplit(".", 1)[-1]


def _one(tensor: Any) -> dict[str, Any]:
    return {"shape": list(tensor.shape), "dtype": str(tensor.dtype), "device": tensor.device.type}


def _pair(output: Any, input: Any) -> dict[str, Any]:
    return {
        "shape": f"output {list(output.shape)}, input {list(input.shape)}",
        "dtype": f"output {output.dtype}, input {input.dtype}",
        "device": f"output {output.device.type}, input {input.device.type}",
    }


def _describe_all_reduce(tensor, op=None, group=None, *args, **kwargs):
    return group, {**_one(tensor), "reduce op": _op(op)}


def _describe_all_gather(tensor_list, tensor, group=None, *args, **kwargs):
    return group, _one(tensor)


def _describe_all_gather_into_tensor(output_tensor, input_tensor, group=None, *args, **kwargs):
    return group, _pair(output_tensor, input_tensor)


def _describe_reduce_scatter_tensor(output, input, op=None, group=None, *args, **kwargs):
    return group, {**_pair(output, input), "reduce op": _op(op)}


def _describe_broadcast(tensor, src=None, group=None, *args, group_src=None, **kwargs):
    return group, {**_one(tensor), "src": src if group_src is None else f"group rank {group_src}"}


def _describe_reduce(tensor, dst=None, op=None, group=None, *args, group_dst=None, **kwargs):
    dst = dst if group_dst is None else f"group rank {group_dst}"
    return group, {**_one(tensor), "dst": dst, "reduce op": _op(op)}


def _describe_barrier(group=None, *args, **kwargs):
    return group, {}


_DESCRIBE = {
    "all_reduce": _describe_all_reduce,
    "all_gather": _describe_all_gather,
    "all_gather_into_tensor": _describe_all_gather_into_tensor,
    "reduce_scatter_tensor": _describe_reduce_scatter_tensor,
    "broadcast": _describe_broadcast,
    "reduce": _describe_reduce,
    "barrier": _describe_barrier,
}


def _members(dist: Any, group: Any) -> list[int]:
    if group is None or group is dist.GroupMember.WORLD:
        return list(range(dist.get_world_size()))
    if group is dist.GroupMember.NON_GROUP_MEMBER:
        return []
    return sorted(dist.get_process_group_ranks(group))


# our own client of the job's store, whose read timeout is the debug timeout
_checkin: dict[str, Any] = {"store": None, "base": None, "timeout": None}


def _checkin_store(store: Any, timeout: float) -> Any:
    """A clone of ``store`` that gives up reading after ``timeout`` (``store`` itself when it cannot clone)."""
    if _checkin["base"] is store and _checkin["timeout"] == timeout and _checkin["store"] is not None:
        return _checkin["store"]
    try:
        clone = store.clone()
        clone.set_timeout(timedelta(seconds=timeout))
    except (AttributeError, RuntimeError):  # torch < 2.5, or a store that cannot be cloned
        clone = store
    _checkin.update(store=clone, base=store, timeout=timeout)
    return clone


def _get_all(store: Any, keys: list[str], timeout: float) -> list[bytes]:
    if _checkin["store"] is not _checkin["base"]:
        return store.multi_get(keys)  # waits for the keys, up to the clone's timeout: one round trip
    store.wait(keys, timedelta(seconds=timeout))
    return [store.get(key) for key in keys]


def _missing_message(
    store: Any, prefix: str, seq: int, members: list[int], me: int, entry: dict, wait: float
) -> str:
    waiting = {me: entry}
    missing = []
    for rank in members:
        if rank == me:
            continue
        key = f"{prefix}/{seq}/{rank}"
        if store.check([key]):
            waiting[rank] = json.loads(store.get(key))
        else:
            missing.append(rank)
    lines = [
        f"{'Process' if len(missing) == 1 else 'Processes'} {', '.join(map(str, missing))} "
        f"did not reach collective #{seq} within {wait:g} s "
        "(TORCHDOCTOR_DEBUG_TIMEOUT); the others are waiting for them.",
        "",
        f"Operation: `{entry['operation']}`",
        "Waiting at it:",
    ]
    lines += [f"  - Process {r}: {waiting[r]['site']}" for r in sorted(waiting)]
    lines.append("Missing:")
    for rank in missing:
        previous = f"{prefix}/{seq - 1}/{rank}"
        if seq > 1 and store.check([previous]):
            last = json.loads(store.get(previous))
            lines.append(
                f"  - Process {rank}: last seen at collective #{seq - 1} `{last['operation']}` at {last['site']}"
            )
        else:
            lines.append(f"  - Process {rank}: never reached a checked collective")
    return "\n".join(lines)


def _sites_block(entries: Mapping[int, Mapping[str, Any]]) -> str:
    if not any("site" in entry for entry in entries.values()):
        return ""
    lines = "\n  - ".join(f"Process {r}: {entries[r].get('site', '<unknown>')}" for r in sorted(entries))
    return f"\nCalled from:\n  - {lines}"


def _show(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _nested(data: Any, leaf: Callable[[Any], Any]) -> Any:
    if isinstance(data, (list, tuple)):
        return [_nested(item, leaf) for item in data]
    if isinstance(data, Mapping):
        return {str(key): _nested(value, leaf) for key, value in data.items()}
    if hasattr(data, "shape") and hasattr(data, "dtype"):
        return leaf(data)
    return type(data).__name__


@functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    import torch

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (here + os.sep, os.path.dirname(os.path.abspath(torch.__file__)) + os.sep)


def _short_path(filename: str) -> str:
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
