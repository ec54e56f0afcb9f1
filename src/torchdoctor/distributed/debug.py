"""Debug mode: every rank checks in before a collective, so a mismatch or a missing rank is an error, not a hang.

At each checked collective a rank checks in through the process group's own store (the ``TCPStore`` that
``torchrun``/``init_process_group`` already run) with a fingerprint of what it is about to do: the operation,
the shapes, dtypes and devices of its tensors, the source/destination rank. When every rank agrees that costs
each rank a constant number of store requests (`torchdoctor.distributed.agreement`); only on a mismatch does
every rank write its details (and its call site) and read the others', and every rank raises the same
`DistributedOperationException`. The store needs no collective, so this can neither hang on a shape mismatch
nor wait forever for a rank that never arrives: after ``TORCHDOCTOR_DEBUG_TIMEOUT`` seconds (default 300, under
NCCL's own 10-minute watchdog so this message comes first) the error names the missing ranks, where every
other rank is waiting, and where the missing ones are (their Python stacks, `torchdoctor.distributed.stacks`).
While waiting longer than a few seconds, a rank says on stderr whom it is waiting for.

``enable()`` also wraps the user's direct ``torch.distributed`` calls (``all_reduce``, ``all_gather``,
``all_gather_into_tensor``, ``reduce_scatter_tensor``, ``broadcast``, ``reduce``, ``barrier``) so existing DDP
scripts get the checks without code changes. What torch runs in C++ (DDP's gradient all-reduce) or through
``distributed_c10d`` directly (``all_gather_object``) is left alone.

Debug mode is on with ``TORCHDOCTOR_DEBUG_MODE=1`` or accelerate's ``ACCELERATE_DEBUG_MODE=1`` (what
``accelerate launch --debug`` sets); when both are set, ours decides.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from torchdoctor import environment
from torchdoctor.distributed import agreement, stacks
from torchdoctor.distributed.messages import mismatch_message, missing_message
from torchdoctor.hang.source import is_user_code
from torchdoctor.rank_list import who

DEFAULT_TIMEOUT = 300.0
TRUE_VALUES = environment.ON_VALUES
ACCELERATE_TRUE_VALUES = environment.ACCELERATE_ON_VALUES  # accelerate's str_to_bool
CHECKED_CALLS = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "broadcast",
    "reduce",
    "barrier",
)
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
    """Whether ``TORCHDOCTOR_DEBUG_MODE`` (else ``ACCELERATE_DEBUG_MODE``) asks for debug mode (``1``, ``true``,
    ``yes``, ``on``)."""
    return debug_mode_source(environ) is not None


def debug_mode_source(environ: Mapping[str, str] | None = None) -> str | None:
    """The variable that turns debug mode on, or None when it is off.

    ``TORCHDOCTOR_DEBUG_MODE`` decides when it is set (``0`` turns debug mode off even under
    ``ACCELERATE_DEBUG_MODE=1``); else ``ACCELERATE_DEBUG_MODE``, read as accelerate reads it.

    >>> debug_mode_source({"ACCELERATE_DEBUG_MODE": "yes"})
    'ACCELERATE_DEBUG_MODE'
    """
    environ = os.environ if environ is None else environ
    ours = environment.is_on("TORCHDOCTOR_DEBUG_MODE", environ)  # BadEnvironment for a value such as 'banana'
    if ours is not None:
        return "TORCHDOCTOR_DEBUG_MODE" if ours else None
    if environment.is_on("ACCELERATE_DEBUG_MODE", environ):
        return "ACCELERATE_DEBUG_MODE"
    return None


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
    environment.require_valid(["TORCHDOCTOR_DEBUG_TIMEOUT"], environ)
    return float(value)


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
    # A rank must be able to say where it is even if it never reaches a checked collective.
    if dist.is_initialized():
        _answer_where_i_am(dist)
    else:
        _originals["init_process_group"] = dist.init_process_group
        dist.init_process_group = _answering_after(dist.init_process_group)


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
    or on a rank outside ``group``. Costs a constant number of store requests per rank (see
    `torchdoctor.distributed.agreement`); while it waits more than a few seconds it says for whom on stderr.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    members = _members(dist, group)
    me = dist.get_rank()
    if len(members) < 2 or me not in members:
        return
    store = _job_store(dist)
    if store is None:
        return  # e.g. the MPI backend has no store: nothing to check in with
    group_key = "world" if len(members) == dist.get_world_size() else "-".join(map(str, members))
    with _sequence_lock:  # threads may run collectives on groups of their own
        seq = _sequence.get(group_key, 0) + 1
        _sequence[group_key] = seq
    entry = {"operation": operation, "site": call_site(), **signature}
    stacks.last_checked[group_key] = (seq, operation, entry["site"])
    if me not in stacks._responders:
        stacks.start_responder(store, me)
    prefix = f"{_KEY_PREFIX}/{group_key}"
    key = f"{prefix}/{seq}"
    wait = debug_timeout() if timeout is None else timeout
    fingerprint = _fingerprint(operation, signature)

    def waiting_for(seconds: float) -> str:
        here = agreement.who_is_here(store, key)
        here.setdefault(me, fingerprint)
        late = [r for r in members if r not in here]
        return (
            f"{who(late)} at collective #{seq} `{operation}` ({len(here)} of "
            f"{len(members)} waiting; this is rank {me} at {entry['site']}; TORCHDOCTOR_DEBUG_TIMEOUT={wait:g})"
        )

    agreed = _agreed.setdefault(group_key, {})
    before = agreed.pop(seq - 2, None)  # every rank is past collective seq - 2 once one rank is here
    stale = (f"{prefix}/{seq - 2}/{before}", f"{prefix}/{seq - 2}/ok") if before else ()
    verdict = agreement.check_in(store, key, fingerprint, me, len(members), wait, waiting_for, stale)
    if verdict == "ok":
        agreed[seq] = fingerprint
        problem = mismatch_message({me: entry}, backend=str(dist.get_backend(group)))
    elif verdict == "late":
        problem = (
            f"This process reached collective #{seq} `{operation}` at {entry['site']} after the others had "
            f"stopped waiting for it (TORCHDOCTOR_DEBUG_TIMEOUT={wait:g} s): they raised this error there, "
            "naming it."
        )
    else:
        entries = agreement.entries_of_those_here(store, key, members, me, fingerprint, entry)
        if verdict == "mismatch":
            problem = mismatch_message(entries, backend=str(dist.get_backend(group)))
        else:
            problem = missing_message(store, group_key, seq, members, entries, wait)
    if problem:
        raise DistributedOperationException(problem)


def call_site() -> str:
    """``file:line in function`` of the innermost caller in the user's own code (`hang.source.is_user_code`,
    as the hang report decides): the user's line, not an installed library's or torchdoctor's."""
    frame = sys._getframe(1)
    while frame is not None and not _is_user_file(frame.f_code.co_filename):
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
        "shape": _nested(data, shape_of),
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
        except (TypeError, AttributeError, RuntimeError):  # arguments torch will reject: let torch say how
            return original(*args, **kwargs)
        check_collective(f"torch.distributed.{name}", signature, group)
        return original(*args, **kwargs)

    wrapper.__torchdoctor_original__ = original
    return wrapper


def _answer_where_i_am(dist: Any) -> None:
    store = _job_store(dist)
    if store is not None:
        stacks.start_responder(store, dist.get_rank())


def _answering_after(init_process_group: Callable) -> Callable:
    @functools.wraps(init_process_group)
    def wrapper(*args, **kwargs):
        result = init_process_group(*args, **kwargs)
        import torch.distributed as dist

        _answer_where_i_am(dist)
        return result

    wrapper.__torchdoctor_original__ = init_process_group
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


_agreed: dict[str, dict[int, str]] = {}  # group key -> {seq: fingerprint} of recent collectives all agreed on


def _job_store(dist: Any) -> Any:
    """The store of the default process group (torchrun's or ``init_process_group``'s), or None."""
    try:
        return dist.distributed_c10d._get_default_store()
    except (RuntimeError, ValueError, AttributeError):
        return None


def _fingerprint(operation: str, signature: Mapping[str, Any]) -> str:
    text = json.dumps([operation, signature], sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _nested(data: Any, leaf: Callable[[Any], Any]) -> Any:
    if isinstance(data, (list, tuple)):
        return [_nested(item, leaf) for item in data]
    if isinstance(data, Mapping):
        return {str(key): _nested(value, leaf) for key, value in data.items()}
    if is_tensor(data):
        return leaf(data)
    return type(data).__name__


def is_tensor(data: Any) -> bool:
    """Whether ``data`` is a ``torch.Tensor`` (nested tensors included), without importing torch."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(data, torch.Tensor)


def shape_of(tensor: Any) -> Any:
    """``list(tensor.shape)``; for a nested tensor, which has no single shape, its components' shapes."""
    if getattr(tensor, "is_nested", False):
        return {"nested": [list(part.shape) for part in tensor.unbind()]}
    return list(tensor.shape)


_user_files: dict[str, bool] = {}  # file -> is_user_code(file): asked at every checked collective


def _is_user_file(filename: str) -> bool:
    found = _user_files.get(filename)
    if found is None:
        found = _user_files[filename] = is_user_code(filename)
    return found


def _short_path(filename: str) -> str:
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
