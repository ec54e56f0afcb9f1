"""Timing torch's functional collectives (`torchdoctor.distributed.functional`): tensor parallelism's and
DTensor's all-reduces, all-gathers and reduce-scatters, on the mesh dimension's process group.

A functional collective returns at once: the rank arrived when it called it, and it waits for its peers in
``wait_tensor`` (the result's first use), which is time in collectives, and left when that returned. The call
itself (the start of the collective) is time in collectives too. A result is known at its wait by its memory
(a view of it, which ``AsyncCollectiveTensor`` makes below autograd, has no ``_base``, but the same storage);
a wait nobody started here (a second wait, a result of code torch.compile traced) still counts its time, with
no arrival to close. Nothing here calls a collective of its own, and nothing keeps a result alive.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from torchdoctor.distributed import functional
from torchdoctor.stragglers.record import StepRecord

STARTED = 1024  # results not yet waited on kept at most: a script that never waits on one does not grow it
# where a result's memory starts -> its arrival entry: started, not yet waited on
_started: dict[int, list | None] = {}


def hook(
    record: StepRecord, wrap: Callable[[Any, str, Callable], None], group_key: Callable[[Any], str]
) -> None:
    """Time every functional collective and ``wait_tensor`` into ``record``; ``wrap(owner, name, wrapper)``
    replaces an attribute and notes how to put it back; ``group_key(process_group)`` names a group as the
    other collectives' arrivals do (`hooks.group_key`)."""
    funcol = functional.module()
    if funcol is None:
        return
    for name in functional.collectives(funcol):
        wrap(funcol, name, _timed(getattr(funcol, name), record, group_key))
    if callable(getattr(funcol, "wait_tensor", None)):
        wrap(funcol, "wait_tensor", _timed_wait(funcol.wait_tensor, record))


# a functional collective's group argument (`functional.cache_key`) -> its group's key (`hooks.group_key`)
_keys: dict[Any, str] = {}


def forget() -> None:
    """Drop the results started and not waited on, and the groups found (the hooks are coming off)."""
    _started.clear()
    _keys.clear()


def _timed(original: Callable, record: StepRecord, group_key: Callable[[Any], str]) -> Callable:
    position = functional.parameters(original).index("group")

    @functools.wraps(original)
    def timed(*args, **kwargs):
        group = kwargs["group"] if "group" in kwargs else args[position] if len(args) > position else None
        key = _keys.get(functional.cache_key(group))
        if key is None:
            try:
                key = group_key(functional.process_group(group, kwargs.get("tag", "")))
            except (TypeError, ValueError, AttributeError, RuntimeError):  # torch will say what is wrong
                key = "?"
            else:
                _keys[functional.cache_key(group)] = key
        entry = record.arrived(key, time.time())
        start, cpu = time.perf_counter(), time.thread_time()
        result = None
        try:
            result = original(*args, **kwargs)
            return result
        finally:
            record.add_comm(time.perf_counter() - start, time.thread_time() - cpu)
            _note_started(result, entry)

    return functional.unless_compiling(
        original, timed
    )  # torch.compile tracing it: nothing of ours in its graph


def _note_started(result: Any, entry: list | None) -> None:
    """Keep the result (each of a list of them) to time its wait; one that is no ``AsyncCollectiveTensor``
    was waited on already (torch waits at once while tracing): the rank left the collective now."""
    results = result if isinstance(result, list) else [result]
    for one in results:
        inner = getattr(one, "elem", None)
        if inner is None:
            StepRecord.left(entry, time.time())
            continue
        if len(_started) >= STARTED:
            _started.pop(next(iter(_started)))
        _started[_memory(inner)] = entry


def _timed_wait(original: Callable, record: StepRecord) -> Callable:
    @functools.wraps(original)
    def wait_tensor(tensor, *args, **kwargs):
        clock = (
            record.device
        )  # on CUDA the stream waits for the peers here (NCCL): bracketed, not device work
        if clock is not None:
            clock.mark("b")
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(tensor, *args, **kwargs)
        finally:
            record.add_comm(time.perf_counter() - start, time.thread_time() - cpu)
            entry = _waited(tensor)
            if entry is not None:
                StepRecord.left(entry, time.time())
            if clock is not None:
                clock.mark("a")

    return functional.unless_compiling(original, wait_tensor)


def _waited(tensor: Any) -> list | None:
    """The arrival entry of the collective whose result ``tensor`` is (or a view of), forgotten once found."""
    try:
        return _started.pop(_memory(tensor), None)
    except (AttributeError, RuntimeError):  # not a tensor with memory of its own: nothing started here
        return None


def _memory(tensor: Any) -> int:
    return tensor.untyped_storage().data_ptr()
