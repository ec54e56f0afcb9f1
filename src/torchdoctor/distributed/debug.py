"""Debug mode: the ranks compare what they call, so a mismatch or a missing rank is an error, not a hang.

Each rank keeps a running fingerprint of its collectives per process group (`torchdoctor.distributed.fingerprint`):
a call it has made before (same operation, shapes, dtypes, devices, source rank, reduce op and call site) costs
one number appended to a list, no store request and no waiting; a thread of its own compares the ranks'
fingerprints through the job's ``TCPStore`` twice a second and, when they differ, every rank raises the same
`DistributedOperationException`, naming the first call where they differ: at once if it runs Python, when its
collective returns or fails, or, blocked in one for good, by ending the process with the error on stderr.

A call new to a rank first checks in with the others (`torchdoctor.distributed.agreement`: two store requests
per rank), so that a mismatch is named before the collective can hang or abort. Nothing here is a collective:
it can hang neither on a mismatch nor on a missing rank. After ``TORCHDOCTOR_DEBUG_TIMEOUT`` seconds (default
300, under NCCL's own 10-minute watchdog so this message comes first) the error names the missing ranks, where
every other rank is waiting, and where the missing ones are (their Python stacks,
`torchdoctor.distributed.stacks`). While waiting longer than a few seconds, a rank says on stderr whom it is
waiting for.

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
import time
from collections.abc import Callable, Mapping
from typing import Any

from torchdoctor import environment
from torchdoctor.distributed import agreement, fingerprint, stacks
from torchdoctor.distributed import waiting as waiting_module
from torchdoctor.distributed.messages import divergence_message as _divergence_message
from torchdoctor.distributed.messages import group_words, mismatch_message, missing_message
from torchdoctor.hang.source import is_user_code_object, known_code
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
    _originals["destroy_process_group"] = dist.destroy_process_group
    dist.destroy_process_group = _forgetting_after(dist.destroy_process_group)
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
    """Record a collective in this rank's running fingerprint; raise `DistributedOperationException` on every
    rank when ranks disagree.

    ``signature`` maps the fields of ``FIELDS`` (``shape``, ``dtype``, …) to JSON-able values that must be
    equal on every rank of ``group``. Does nothing without an initialised process group of two or more ranks,
    or on a rank outside ``group``. A call this rank has made before (same operation, signature and call site)
    costs no store request: the ranks' fingerprints are compared by a thread of their own. A call new to this
    rank checks in with the others first (two store requests, `torchdoctor.distributed.agreement`), so that
    a mismatch is named before the collective can hang or abort; while it waits more than a few seconds it
    says for whom on stderr.
    """
    import torch.distributed as dist

    g = _group_state(dist, group)
    if g is None:
        return
    if g.verdict is not None:
        _raise(g.verdict)
    site = _site_key(sys._getframe(1))
    key = (operation, json.dumps(signature, sort_keys=True, default=str)), site
    code = g.known.get(key)
    if code is None:
        _first_time(dist, g, operation, dict(signature), site, key, group, timeout)
    else:
        g.log.append(code)


def _first_time(
    dist: Any,
    g: fingerprint.Group,
    operation: str,
    signature: dict[str, Any],
    site: Any,
    key: Any,
    group: Any,
    timeout: float | None,
) -> None:
    """Check in with the other ranks at a call new to this rank; record it; raise on every rank if they differ."""
    store = _job_store(dist)
    members, me, group_key = g.members, g.me, g.key
    seq = g.seq + 1
    entry = {"operation": operation, "site": _site_text(site), **signature}
    stacks.last_checked[group_key] = (seq, operation, entry["site"])
    prefix = f"{_KEY_PREFIX}/{group_key}"
    check_key = f"{prefix}/{seq}"
    wait = debug_timeout() if timeout is None else timeout
    agreed_on = _fingerprint(operation, {**signature, "site": entry["site"]})
    g.pending_entry = entry
    g.pending = (seq, fingerprint.digest_of(entry))

    def waiting_for(seconds: float) -> str:
        here = agreement.who_is_here(store, check_key)
        here.setdefault(me, agreed_on)
        late = [r for r in members if r not in here]
        return (
            f"{who(late)} at collective #{seq} `{operation}` ({len(here)} of "
            f"{len(members)} waiting; this is rank {me} at {entry['site']}; TORCHDOCTOR_DEBUG_TIMEOUT={wait:g})"
        )

    stale = [k for s, fp in g.agreed if s <= seq - 2 for k in (f"{prefix}/{s}/{fp}", f"{prefix}/{s}/ok")]
    g.agreed = [(s, fp) for s, fp in g.agreed if s > seq - 2]
    try:
        verdict = agreement.check_in(
            store,
            check_key,
            agreed_on,
            me,
            len(members),
            wait,
            waiting_for,
            stale,
            lambda: g.verdict is not None,
        )
    except BaseException:
        g.pending = None
        g.log.append(fingerprint.RAISED)
        raise
    if verdict == "ok":
        g.agreed.append((seq, agreed_on))
        code = g.known[key] = fingerprint.new_call(entry)
        g.pending = None
        g.log.append(code)
        problem = mismatch_message({me: entry}, backend=str(dist.get_backend(group)))
    else:
        g.pending = None
        g.log.append(fingerprint.RAISED)  # every rank raises here: the histories stay equal
        if verdict == "diverged":
            problem = g.verdict or "another rank found a divergence"
        elif verdict == "late":
            problem = (
                f"This process reached collective #{seq} `{operation}` at {entry['site']} after the others had "
                f"stopped waiting for it (TORCHDOCTOR_DEBUG_TIMEOUT={wait:g} s): they raised this error there, "
                "naming it."
            )
        else:
            entries = agreement.entries_of_those_here(store, check_key, members, me, agreed_on, entry)
            if verdict == "mismatch":
                problem = mismatch_message(entries, backend=str(dist.get_backend(group)))
            else:
                problem = missing_message(store, group_key, seq, members, entries, wait)
    if problem:
        _raise(problem)


def call_site() -> str:
    """``file:line in function`` of the innermost caller in the user's own code (`hang.source.is_user_code`,
    as the hang report decides): the user's line, not an installed library's or torchdoctor's."""
    return _site_text(_site_key(sys._getframe(1)))


def _site_key(frame: Any) -> tuple[int, int] | None:
    """(id of the code object, line) of the innermost frame from ``frame`` out that is the user's code: cheap to
    repeat (`hang.source.is_user_code_object` remembers its verdict per code object, by id)."""
    while frame is not None:
        code = frame.f_code
        if is_user_code_object(code):
            return id(code), frame.f_lineno
        frame = frame.f_back
    return None


def _site_text(site: tuple[int, int] | None) -> str:
    if site is None:
        return "<unknown>"
    code, line = known_code(site[0]), site[1]
    if code is None:
        return "<unknown>"
    name = _site_names.get(code.co_filename)
    if name is None:
        name = _site_names[code.co_filename] = _short_path(code.co_filename)
    return f"{name}:{line} in {code.co_name}"


def tensor_signature(data: Any) -> dict[str, Any]:
    """Shapes, dtypes and device types of a (nested list/tuple/dict of) tensor(s), in the same nesting."""
    return {
        "shape": _nested(data, shape_of),
        "dtype": _nested(data, lambda t: str(t.dtype)),
        "device": _nested(data, lambda t: t.device.type),
    }


# --- helpers ---------------------------------------------------------------------------------------------


def _checked(name: str, original: Callable) -> Callable:
    describe, quick = _DESCRIBE[name], _QUICK[name]
    operation = f"torch.distributed.{name}"
    import torch.distributed as dist

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        try:
            group, what = quick(*args, **kwargs)
            g = _groups.get(group)
            if g is None:
                g = _group_state(dist, group)
                if g is None:
                    return original(*args, **kwargs)
            if g.verdict is not None:
                _raise(g.verdict)
            site = _site_key(sys._getframe(1))
            code = g.known.get((what, site))
        except (TypeError, AttributeError, RuntimeError):  # arguments torch will reject: let torch say how
            return original(*args, **kwargs)
        if code is None:  # new to this rank: check in with the others before it can hang or abort
            try:
                signature = describe(*args, **kwargs)[1]
            except (TypeError, AttributeError, RuntimeError):
                return original(*args, **kwargs)
            _first_time(dist, g, operation, signature, site, (what, site), group, None)
        else:  # made before: one number on this rank's list, compared by the watcher thread
            g.log.append(code)
        _inside[0] = g.key, g.log_base + len(g.log)
        try:
            result = original(*args, **kwargs)
        except RuntimeError as error:
            if g.verdict is None and _peer_gone(error):  # a peer that found a divergence may have just left
                _wait_for_verdict(g)
            if g.verdict is not None:  # the peer ended its side: the divergence found is the reason
                _raise(g.verdict)
            raise
        finally:
            _inside[0] = None
        if g.verdict is not None:
            _raise(g.verdict)
        return result

    wrapper.__torchdoctor_original__ = original
    return wrapper


# --- the running fingerprints: groups, the watcher, raising what it finds ------------------------------------

_groups: dict[Any, fingerprint.Group] = {}  # process group object (None: the world) -> its fingerprint state
_by_key: dict[str, fingerprint.Group] = {}
_inside: list[tuple[str, int] | None] = [None]  # (group key, seq) of the collective the main thread is inside
_watcher: list[fingerprint.Watcher] = []
GRACE_SECONDS = 2.0  # a rank blocked in a collective after a divergence: time for the peer's exit to free it


def _group_state(dist: Any, group: Any) -> fingerprint.Group | None:
    """This rank's fingerprint state for ``group``; None where nothing is checked (no group, a rank outside
    it, one rank, no store)."""
    if not (dist.is_available() and dist.is_initialized()):
        return None
    world = group is None or group is dist.GroupMember.WORLD
    members = _members(dist, group)
    me = dist.get_rank()
    if len(members) < 2 or me not in members:
        return None
    store = _job_store(dist)
    if store is None:
        return None  # e.g. the MPI backend has no store: nothing to check in with
    key = "world" if world else _group_key(dist, group, members)
    g = _by_key.get(key)
    if g is None:
        g = _by_key[key] = fingerprint.Group(key, members, me)
    _groups[group] = g
    if me not in stacks._responders:
        stacks.start_responder(store, me)
    stacks.last_calls = _last_calls
    if not _watcher:
        watcher = fingerprint.Watcher(
            store,
            me,
            lambda: list(_by_key.values()),
            lambda: _inside[0],
            _diverged,
            divergence_message,
            _still_waiting,
            _late_message,
        )
        _watcher.append(watcher)
        watcher.start()
    return g


def _group_key(dist: Any, group: Any, members: list[int]) -> str:
    """``ranks@name``: two groups of the same ranks are told apart by the name torch gives each (the same on
    every rank, as ``new_group`` is called on every rank in the same order)."""
    try:
        name = dist.distributed_c10d._world.pg_names.get(group, "")
    except AttributeError:  # a torch that keeps the names elsewhere: the ranks alone
        name = ""
    ranks = "-".join(map(str, members))
    return f"{ranks}@{name}" if name else ranks


def _forget_groups() -> None:
    """The process group is going away: stop comparing (the store goes with it) and forget its groups."""
    for watcher in _watcher:
        watcher.stop()
    _watcher.clear()
    _groups.clear()
    _by_key.clear()


_said: dict[tuple[str, int], float] = {}  # (group, seq) -> when this rank last said whom it waits for


def _still_waiting(g: fingerprint.Group, seq: int, behind: list[int], waited: float) -> None:
    """From the watcher: this rank waits inside collective ``seq`` of ``g`` for the ranks ``behind``. Says so
    on stderr after a few seconds; at the debug-mode timeout, names them with their stacks and ends."""
    wait = debug_timeout()
    code = g.log[seq - g.log_base - 1] if seq > g.log_base else fingerprint.RAISED
    entry = fingerprint.calls[code][1]
    if waited >= wait:
        store = _watcher[0].store
        waiting = {r: dict(entry) for r in g.members if r not in behind}
        problem = missing_message(store, g.key, seq, g.members, waiting, wait)
        _watcher[0].give_up(g, seq)
        _diverged(g, problem)
        return
    last = _said.get((g.key, seq))
    if waited >= waiting_module.FIRST_LINE_SECONDS and (
        last is None or time.monotonic() - last >= waiting_module.LINE_EVERY_SECONDS
    ):
        _said[(g.key, seq)] = time.monotonic()
        waiting_module.say(
            f"waited {waited:.0f} s of {wait:g} for {who(behind)} at collective #{seq} `{entry['operation']}` "
            f"({len(g.members) - len(behind)} of {len(g.members)} waiting; this is rank {g.me} at "
            f"{entry.get('site', '<unknown>')}; TORCHDOCTOR_DEBUG_TIMEOUT={wait:g})"
        )


def _late_message(group_key: str, seq: int, rank: int) -> str:
    return (
        f"Rank {rank} and the others stopped waiting for this process at collective #{seq} of "
        f"{group_words(group_key)} after TORCHDOCTOR_DEBUG_TIMEOUT={debug_timeout():g} s (they raised there, "
        "naming it); this process had not reached it."
    )


def _last_calls() -> dict[str, list]:
    """Per group: [seq, operation, site] of this rank's last recorded collective (what a stack answer says)."""
    last = {}
    for key, g in list(_by_key.items()):
        seq = g.seq
        if seq > g.log_base:
            entry = fingerprint.calls[g.log[seq - g.log_base - 1]][1]
            last[key] = [seq, entry["operation"], entry.get("site", "<unknown>")]
    return last


def _peer_gone(error: RuntimeError) -> bool:
    text = str(error).lower()
    return any(word in text for word in ("connection", "closed", "reset", "broken pipe", "peer"))


def _wait_for_verdict(g: fingerprint.Group) -> None:
    """After a collective failed because a peer left: give the watcher the time to learn why (the peer
    published a divergence before it raised)."""
    deadline = time.monotonic() + 2 * fingerprint.PERIOD_SECONDS + fingerprint.ANSWER_SECONDS + 1
    while g.verdict is None and time.monotonic() < deadline:
        time.sleep(0.05)


def _raise(problem: str) -> None:
    """Raise the named error with a traceback that ends at the user's line, not in torchdoctor."""
    _install_trimming_hook()
    raise DistributedOperationException(problem).with_traceback(None) from None


def _diverged(g: fingerprint.Group, problem: str) -> None:
    """From the watcher thread: ``g``'s ranks diverged. The main thread raises ``problem``: now if it runs
    Python, when its collective returns or fails, or, blocked for good in one, the process ends saying it."""
    g.verdict = problem
    _install_trimming_hook()
    inside = _inside[0]
    if inside is None:
        _raise_in_main_thread(problem)
        return
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        if _inside[0] != inside:
            return  # it came out: the wrapper raised
        time.sleep(0.05)
    group_key, seq = inside
    stack = stacks.main_thread_stack(skip=_ours)
    sys.stderr.write(
        f"Traceback (most recent call last):\n{stack}\n"
        f"torchdoctor.distributed.DistributedOperationException: {problem}\n"
        f"torchdoctor: this rank is blocked inside collective #{seq} of {group_words(group_key)}, which "
        "nothing can call it back from: ending the process (exit code 1)\n"
    )
    sys.stderr.flush()
    os._exit(1)


def _raise_in_main_thread(problem: str) -> None:
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


def _ours(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_OUR_FOLDER + os.sep)


def _install_trimming_hook() -> None:
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
        if not _ours(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    result = None
    for item in reversed(frames):
        result = types.TracebackType(result, item.tb_frame, item.tb_lasti, item.tb_lineno)
    return result


def divergence_message(
    group_key: str, seq: int, entries: Mapping[int, Mapping[str, Any] | None], blocked: Mapping[int, Any]
) -> str:
    """The error for the first call at which the ranks' fingerprints differ (see `messages.divergence_message`)."""
    return _divergence_message(group_key, seq, entries, blocked)


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


def _forgetting_after(destroy_process_group: Callable) -> Callable:
    @functools.wraps(destroy_process_group)
    def wrapper(*args, **kwargs):
        _forget_groups()
        return destroy_process_group(*args, **kwargs)

    wrapper.__torchdoctor_original__ = destroy_process_group
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


# The hot path: a hashable key of what a call passes, without building the signature (done once per new key).
# This rank's own cache key, never compared across ranks: the device itself (``cuda:1``) costs a fifth of its
# ``.type``, and a tensor that moves to another device is only checked in once more.
def _quick_all_reduce(tensor, op=None, group=None, *args, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device, op)


def _quick_all_gather(tensor_list, tensor, group=None, *args, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device)


def _quick_pair(output, input, group=None, *args, **kwargs):
    return group, (
        output.shape,
        input.shape,
        output.dtype,
        input.dtype,
        output.device,
        input.device,
    )


def _quick_reduce_scatter_tensor(output, input, op=None, group=None, *args, **kwargs):
    return group, (*_quick_pair(output, input)[1], op)


def _quick_broadcast(tensor, src=None, group=None, *args, group_src=None, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device, src, group_src)


def _quick_reduce(tensor, dst=None, op=None, group=None, *args, group_dst=None, **kwargs):
    return group, (tensor.shape, tensor.dtype, tensor.device, dst, op, group_dst)


def _quick_barrier(group=None, *args, **kwargs):
    return group, ()


_QUICK = {
    "all_reduce": _quick_all_reduce,
    "all_gather": _quick_all_gather,
    "all_gather_into_tensor": _quick_pair,
    "reduce_scatter_tensor": _quick_reduce_scatter_tensor,
    "broadcast": _quick_broadcast,
    "reduce": _quick_reduce,
    "barrier": _quick_barrier,
}

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


def _short_path(filename: str) -> str:
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
