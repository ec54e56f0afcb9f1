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
``all_gather_into_tensor``, ``reduce_scatter_tensor``, ``broadcast``, ``reduce``, ``barrier``, and torch 2.13's
``all_gather_single`` and ``reduce_scatter_single``, which FSDP2 calls) so existing DDP and FSDP2 scripts get the
checks without code changes, and torch's functional collectives (`torchdoctor.distributed.functional`), which
tensor parallelism and DTensor call, on the mesh dimension's process group: checked at the call, which returns
at once; the rank waits for its peers in ``wait_tensor``, inside the latest one it started. What torch runs in
C++ (DDP's gradient all-reduce), through ``distributed_c10d`` directly (``all_gather_object``), or in code
``torch.compile`` traced is left alone.

Debug mode is on with ``TORCHDOCTOR_DEBUG_MODE=1`` or accelerate's ``ACCELERATE_DEBUG_MODE=1`` (what
``accelerate launch --debug`` sets); when both are set, ours decides.

The pieces: `debug_settings` (on or off, the timeout), `signature` and `call_site` (what a call passes and
where it is made), `groups` (the state per process group and the watcher's callbacks), `raising` (how the
error reaches the user). This module turns debug mode on and off and checks each call.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

# `groups.job_store` is called through its module, never imported by name: the benchmarks replace it there
from torchdoctor.distributed import (
    agreement,
    debug_settings,
    fingerprint,
    functional,
    groups,
    joining,
    stacks,
)
from torchdoctor.distributed.call_site import site_key, site_text
from torchdoctor.distributed.debug_settings import debug_timeout
from torchdoctor.distributed.groups import by_process_group, group_state, main_thread_inside
from torchdoctor.distributed.messages import mismatch_message, missing_message
from torchdoctor.distributed.raising import raise_problem
from torchdoctor.distributed.signature import DESCRIBE, QUICK
from torchdoctor.rank_list import who

CHECKED_CALLS = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",  # torch 2.13's names for the two above, which FSDP2 calls
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "broadcast",
    "reduce",
    "barrier",
)
_KEY_PREFIX = "torchdoctor/debug"


# what enable() installed: name -> the original torch.distributed function
_originals: dict[str, Callable] = {}
# and name -> the original functional collective (`torchdoctor.distributed.functional`)
_functional_originals: dict[str, Callable] = {}
# (group key, seq) of the latest functional collective started
last_functional: list[tuple[str, int] | None] = [None]


def enable(timeout: float | None = None) -> None:
    """Check every direct ``torch.distributed`` collective of this process before it runs.

    Idempotent; ``timeout`` (seconds) overrides ``TORCHDOCTOR_DEBUG_TIMEOUT``. ``disable()`` undoes it.

    Example::

        import torchdoctor.distributed.debug as debug
        debug.enable(timeout=60)   # then run the unchanged training script
    """
    if timeout is not None:
        if not timeout > 0:
            raise ValueError(f"timeout={timeout!r}: must be a positive number of seconds")
        debug_settings.set_timeout(float(timeout))
    import torch.distributed as dist

    if _originals or not dist.is_available():
        return
    for name in CHECKED_CALLS:
        if not hasattr(dist, name):  # a name of a newer torch
            continue
        original = getattr(dist, name)
        _originals[name] = original
        setattr(dist, name, _checked(name, original))
    _check_functional_collectives()
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
    import torch.distributed as dist

    for name, original in _originals.items():
        setattr(dist, name, original)
    _originals.clear()
    funcol = functional.module()
    for name, original in _functional_originals.items():
        setattr(funcol, name, original)
    _functional_originals.clear()
    last_functional[0] = None
    debug_settings.set_timeout(None)


def _check_functional_collectives() -> None:
    """Wrap torch's functional collectives, which tensor parallelism and DTensor call, and ``wait_tensor``."""
    funcol = functional.module()
    if funcol is None:
        return
    for name in functional.collectives(funcol):
        _functional_originals[name] = getattr(funcol, name)
        setattr(funcol, name, _checked_functional(name, _functional_originals[name]))
    if callable(getattr(funcol, "wait_tensor", None)):
        _functional_originals["wait_tensor"] = funcol.wait_tensor
        funcol.wait_tensor = _waiting_inside(funcol.wait_tensor)


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

    g = group_state(dist, group)
    if g is None:
        return
    if g.verdict is not None:
        raise_problem(g.verdict)
    site = site_key(sys._getframe(1))
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
    store = groups.job_store(dist)
    members, me, group_key = g.members, g.me, g.key
    seq = g.seq + 1
    entry = {"operation": operation, "site": site_text(site), **signature}
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
        raise_problem(problem)


def _checked(name: str, original: Callable) -> Callable:
    return _checked_call(f"torch.distributed.{name}", original, QUICK[name], DESCRIBE[name])


def _checked_functional(name: str, original: Callable) -> Callable:
    """A functional collective (tensor parallelism's, DTensor's), checked as the ``torch.distributed`` ones
    are; its group is the process group of the mesh dimension (or group name, or ranks) it is given."""
    names = functional.parameters(original)

    def quick(*args, **kwargs):
        given = functional.arguments(names, args, kwargs)
        group = functional.process_group(given.get("group"), given.get("tag", ""))
        return group, (name, functional.quick(given, names))

    def describe(*args, **kwargs):
        given = functional.arguments(names, args, kwargs)
        return None, functional.describe(given, names)

    wrapper = _checked_call(f"{functional.MODULE}.{name}", original, quick, describe)
    return functional.unless_compiling(original, wrapper)


def _waiting_inside(original: Callable) -> Callable:
    """``wait_tensor``, where a rank waits for its peers in a functional collective it started before: while
    it waits, the rank is inside the latest one it started (what the watcher says it waits at and, blocked
    there for good after a divergence, ends the process saying it)."""

    @functools.wraps(original)
    def wait_tensor(*args, **kwargs):
        inside = main_thread_inside[0] = last_functional[0]
        try:
            result = original(*args, **kwargs)
        finally:
            main_thread_inside[0] = None
        g = groups.by_key.get(inside[0]) if inside is not None else None
        if g is not None and g.verdict is not None:  # found while this rank waited: said here, as it returns
            raise_problem(g.verdict)
        return result

    return functional.unless_compiling(original, wait_tensor)


def _checked_call(operation: str, original: Callable, quick: Callable, describe: Callable) -> Callable:
    import torch.distributed as dist

    functional_call = operation.startswith(functional.MODULE)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        try:
            group, what = quick(*args, **kwargs)
            g = by_process_group.get(group)
            if g is None:
                g = group_state(dist, group)
                if g is None:
                    return original(*args, **kwargs)
            if g.verdict is not None:
                raise_problem(g.verdict)
            site = site_key(sys._getframe(1))
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
        main_thread_inside[0] = g.key, g.log_base + len(g.log)
        try:
            result = original(*args, **kwargs)
        except RuntimeError as error:
            if g.verdict is None and _peer_gone(error):  # a peer that found a divergence may have just left
                _wait_for_verdict(g)
            if g.verdict is not None:  # the peer ended its side: the divergence found is the reason
                raise_problem(g.verdict)
            raise
        finally:
            if functional_call:  # started: the rank waits for its peers in wait_tensor, later
                last_functional[0] = main_thread_inside[0]
            main_thread_inside[0] = None
        if g.verdict is not None:
            raise_problem(g.verdict)
        return result

    wrapper.__torchdoctor_original__ = original
    return wrapper


def _peer_gone(error: RuntimeError) -> bool:
    text = str(error).lower()
    return any(word in text for word in ("connection", "closed", "reset", "broken pipe", "peer"))


def _wait_for_verdict(g: fingerprint.Group) -> None:
    """After a collective failed because a peer left: give the watcher the time to learn why (the peer
    published a divergence before it raised)."""
    deadline = time.monotonic() + 2 * fingerprint.PERIOD_SECONDS + fingerprint.ANSWER_SECONDS + 1
    while g.verdict is None and time.monotonic() < deadline:
        time.sleep(0.05)


def _answer_where_i_am(dist: Any) -> None:
    store = groups.job_store(dist)
    if store is not None:
        stacks.start_responder(store, dist.get_rank())


def _answering_after(init_process_group: Callable) -> Callable:
    @functools.wraps(init_process_group)
    def wrapper(*args, **kwargs):
        if joining.started_by_hand(kwargs, args, os.environ):  # no launcher gathered the ranks: wait aloud
            result = joining.init_waiting_aloud(init_process_group, args, kwargs, debug_timeout(), os.environ)
        else:
            result = init_process_group(*args, **kwargs)
        import torch.distributed as dist

        _answer_where_i_am(dist)
        return result

    wrapper.__torchdoctor_original__ = init_process_group
    return wrapper


def _forgetting_after(destroy_process_group: Callable) -> Callable:
    @functools.wraps(destroy_process_group)
    def wrapper(*args, **kwargs):
        groups.forget_groups()
        functional.forget_meshes()
        return destroy_process_group(*args, **kwargs)

    wrapper.__torchdoctor_original__ = destroy_process_group
    return wrapper


def _fingerprint(operation: str, signature: Mapping[str, Any]) -> str:
    text = json.dumps([operation, signature], sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
