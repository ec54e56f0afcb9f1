"""The ranks agree on a collective through the job's store in a constant number of requests per rank.

Per checked collective, under a key of its own (``<group>/<seq>``), each rank

1. ``compare_set``s its fingerprint (a hash of the operation and the signature) into ``fp``: the first rank's
   sticks, and every later one learns whether it matches — a mismatch is seen by at least one rank;
2. ``add``s to the counter ``n``: 1 when it matched, ``MISMATCH`` (1 plus one in the high bits) when not, and
   gets back how many ranks have arrived and whether any of them saw a mismatch;
3. the last to arrive writes the verdict (``ok`` or ``mismatch``); the others ``wait`` for it and read it.

That is 4 requests for most ranks, 3 for the last, and 7 for the first, which, having to wait anyway, deletes
the keys of the collectives before that nobody will read again; whatever the number of ranks, the store serves
4 N + 2 requests per collective, where every rank reading every other's entry cost N (N + 1) keys. Only when something is wrong does each rank write its details (``entry/<rank>``) and read the others'.
A rank that waits longer than the debug timeout writes ``timeout`` as the verdict with ``compare_set`` (so it
races cleanly with a late last arrival): every waiting rank then reports, and a straggler that comes later reads
``timeout`` and raises too. Nothing here is a collective, so nothing here can hang on a mismatch.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from torchdoctor.distributed.waiting import wait_for_keys

MISMATCH = 1 + (1 << 32)
_ARRIVED = (1 << 32) - 1
_READ = "\x00"  # compare_set with this never matches a verdict: it only reads the value
GRACE_SECONDS = 3.0  # after a timeout, how long the waiting ranks take to say who they are


def check_in(
    store: Any,
    key: str,
    fingerprint: str,
    size: int,
    timeout: float,
    waiting_for: Callable[[float], str] | None = None,
    previous: tuple[str | None, str | None] | None = None,
    on_slow: Callable[[], None] | None = None,
) -> str:
    """Arrive at the collective ``key`` of a group of ``size`` ranks: ``ok``, ``mismatch`` or ``timeout``.

    ``previous`` holds the keys of the group's two collectives before this one, the latest first: the first rank
    to arrive here deletes the fingerprint and counter of the one and the verdict of the other (every rank is
    done with them once one rank is here). Only keys of a collective the ranks agreed on are deleted: after a
    mismatch or a timeout the details stay for everyone to read.
    """
    first = store.compare_set(f"{key}/fp", "", fingerprint)
    count = store.add(f"{key}/n", 1 if first == fingerprint.encode() else MISMATCH)
    verdict_key = f"{key}/verdict"
    if count & _ARRIVED >= size:
        return store.compare_set(verdict_key, "", "mismatch" if count >> 32 else "ok").decode()
    if count & _ARRIVED == 1 and previous:  # this rank would only be waiting
        if previous[0]:
            _delete_later(store, f"{previous[0]}/fp", f"{previous[0]}/n")
        if previous[1]:
            _delete_later(store, f"{previous[1]}/verdict")
    if wait_for_keys(store, [verdict_key], timeout, waiting_for, on_slow):
        return store.compare_set(verdict_key, _READ, _READ).decode()
    return store.compare_set(verdict_key, "", "timeout").decode()


def who_is_missing(store: Any, key: str, members: Sequence[int]) -> tuple[int, list[int], list[int]]:
    """While waiting at ``key``: (ranks arrived, ranks known to be waiting, ranks known not to be).

    Each rank adds itself to the ``waiting`` list the first time it is asked: one request, then one to read.
    """
    arrived = store.add(f"{key}/n", 0) & _ARRIVED
    waiting = _listed(store, f"{key}/waiting")
    not_waiting = [r for r in members if r not in waiting]
    return arrived, sorted(waiting), not_waiting


def add_me(store: Any, key: str, me: int) -> None:
    """Put this rank on the list of ranks waiting at ``key``."""
    store.append(f"{key}/waiting", f"{me},")


def entries_after_mismatch(
    store: Any, key: str, members: Sequence[int], me: int, entry: Mapping[str, Any], timeout: float
) -> dict[int, dict]:
    """Every rank's entry, once all ranks arrived and one of them saw a mismatch."""
    store.set(f"{key}/entry/{me}", json.dumps(entry, default=str))
    keys = [f"{key}/entry/{r}" for r in members]
    if not wait_for_keys(store, keys, timeout):
        raise TimeoutError(f"not every rank wrote its details within {timeout:g} s")
    return {r: json.loads(value) for r, value in zip(members, store.multi_get(keys), strict=True)}


def entries_after_timeout(
    store: Any, key: str, members: Sequence[int], me: int, entry: Mapping[str, Any]
) -> dict[int, dict]:
    """The entries of the ranks waiting at ``key`` after a timeout; ranks absent from it are the missing ones."""
    store.set(f"{key}/entry/{me}", json.dumps(entry, default=str))
    listed = _listed(store, f"{key}/waiting")
    if me not in listed:
        add_me(store, key, me)
    deadline = time.monotonic() + GRACE_SECONDS
    while True:  # the other waiting ranks learn of the timeout within one request: give them a moment
        arrived = store.add(f"{key}/n", 0) & _ARRIVED
        listed = _listed(store, f"{key}/waiting")
        if len(listed) >= arrived or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    ranks = [r for r in members if r in listed]
    keys = [f"{key}/entry/{r}" for r in ranks]
    found = {r: json.loads(v) for r, v in zip(ranks, store.multi_get(keys), strict=True)} if keys else {}
    found[me] = dict(entry)
    return found


def grouped(values: Mapping[int, str]) -> list[str]:
    """``Process r: value`` per rank, three or more consecutive ranks with the same value on one line.

    >>> grouped({0: "a", 1: "a", 2: "a", 3: "b"})
    ['Processes 0-2: a', 'Process 3: b']
    """
    ranks = sorted(values)
    lines, start = [], 0
    while start < len(ranks):
        end = start
        while (
            end + 1 < len(ranks)
            and ranks[end + 1] == ranks[end] + 1
            and values[ranks[end + 1]] == values[ranks[start]]
        ):
            end += 1
        if end - start >= 2:
            lines.append(f"Processes {ranks[start]}-{ranks[end]}: {values[ranks[start]]}")
        else:
            lines += [f"Process {r}: {values[r]}" for r in ranks[start : end + 1]]
        start = end + 1
    return lines


def ranks_text(ranks: Sequence[int]) -> str:
    """``2``, ``2, 5`` or ``0-511, 513`` (runs of three or more as ranges)."""
    return ", ".join(line.split(":")[0].split(" ", 1)[1] for line in grouped(dict.fromkeys(ranks, "")))


_deletions: queue.SimpleQueue = queue.SimpleQueue()
_deleter: list[threading.Thread] = []


def _delete_later(store: Any, *keys: str) -> None:
    """Delete ``keys`` from a thread of its own, on its own connection: off this rank's path to the collective."""
    if not _deleter or not _deleter[0].is_alive():
        try:
            clone = store.clone()
        except (AttributeError, RuntimeError):  # cannot clone: delete here and now
            for key in keys:
                store.delete_key(key)
            return
        _deleter[:] = [threading.Thread(target=_delete_forever, args=(clone,), daemon=True)]
        _deleter[0].start()
    for key in keys:
        _deletions.put(key)


def _delete_forever(store: Any) -> None:
    while True:
        key = _deletions.get()
        try:
            store.delete_key(key)
        except Exception:  # the store went away: the job is over
            return


def _listed(store: Any, key: str) -> set[int]:
    if not store.check([key]):
        return set()
    return {int(r) for r in store.get(key).decode().split(",") if r}
