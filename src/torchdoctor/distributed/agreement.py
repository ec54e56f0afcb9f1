"""The ranks agree on a collective through the job's store in two requests per rank.

Per checked collective, under a key of its own (``<group>/<seq>``), each rank ``add``s 1 to a counter named
after its fingerprint (a hash of the operation and the signature): ``<key>/<fingerprint>``. The rank that brings
that counter to the group's size knows that every rank has arrived with the same fingerprint: it ``set``s
``<key>/ok``, which every other rank is ``wait``ing for. Two requests per rank, whatever the number of ranks;
2 N for the job, where every rank reading every other rank's entry cost N (N + 1) keys. The first rank to arrive,
which would only be waiting, also hands the deletion of the keys of the collective two before this one to a
thread of its own (every rank is past them by then).

When something is wrong, nobody sets ``ok``; after a quiet couple of seconds each waiting rank adds
``rank:fingerprint`` to the list ``<key>/here`` and looks at it about once a second:

- two different fingerprints on the list: a mismatch. ``compare_set`` writes ``mismatch`` into ``<key>/bad``;
- its own wait reaches the timeout: it adds ``TIMED_OUT`` to its fingerprint's counter. Below the group's size,
  no later rank can complete that counter (each sees the mark), so it is safe to ``compare_set`` ``timeout``
  into ``<key>/bad``; at the size, the last rank has just arrived and ``ok`` is on its way.

The first verdict written in ``bad`` stands; every rank reads it, writes its details (``entry/<rank>``) and
reads those of the ranks on the list. Nothing here is a collective, so nothing here can hang on a mismatch.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from torchdoctor.distributed.waiting import QUIET_SECONDS, clone_store, wait_for_keys

TIMED_OUT = 1 << 32
POLL_SECONDS = 1.0  # how often a slow rank looks for a verdict or a second fingerprint
GRACE_SECONDS = QUIET_SECONDS + 2 * POLL_SECONDS  # for every waiting rank to put itself on the list


def check_in(
    store: Any,
    key: str,
    fingerprint: str,
    me: int,
    size: int,
    timeout: float,
    waiting_for: Callable[[float], str] | None = None,
    stale_keys: Sequence[str] = (),
    diverged: Callable[[], bool] | None = None,
) -> str:
    """Arrive at the collective ``key`` of a group of ``size`` ranks: ``ok``, ``mismatch``, ``timeout``,
    ``late`` when the others had already given up waiting for this rank, or ``diverged`` when ``diverged()``
    (asked while waiting: the ranks' running fingerprints differ) says the others will never come.

    ``stale_keys`` (of a collective every rank is past) are deleted off this rank's path if it arrives first.
    """
    counter, ok, bad = f"{key}/{fingerprint}", f"{key}/ok", f"{key}/bad"
    arrived = store.add(counter, 1)
    if arrived == size:
        store.set(ok, "1")
        return "ok"
    if arrived >= TIMED_OUT:  # the others gave up on this collective before this rank came
        return "late"
    if arrived == 1 and stale_keys:
        _delete_later(store, stale_keys)
    listed: list[bool] = []

    def on_slow() -> None:  # from now on the others can tell this rank is here, and with what
        store.append(f"{key}/here", f"{me}:{fingerprint},")
        listed.append(True)

    last_look = [0.0]

    def stop_waiting() -> bool:
        if diverged is not None and diverged():
            return True
        if time.monotonic() - last_look[0] < POLL_SECONDS:
            return False
        last_look[0] = time.monotonic()
        if store.check([bad]):
            return True
        if len(set(who_is_here(store, key).values())) > 1:
            store.compare_set(bad, "", "mismatch")
            return True
        return False

    if wait_for_keys(store, [ok], timeout, waiting_for, on_slow, stop_waiting):
        return "ok"
    if diverged is not None and diverged() and not store.check([bad]):
        return "diverged"
    if not store.check([bad]):  # our own timeout
        if store.add(counter, TIMED_OUT) % TIMED_OUT >= size:  # the last rank came just now
            return "ok" if wait_for_keys(store, [ok], timeout) else _verdict(store, bad, timeout)
        store.compare_set(bad, "", "timeout")
    return _verdict(store, bad, timeout)


def who_is_here(store: Any, key: str) -> dict[int, str]:
    """The ranks that said they wait at ``key`` (after a quiet couple of seconds), with their fingerprints."""
    if not store.check([f"{key}/here"]):
        return {}
    here = {}
    for item in store.get(f"{key}/here").decode().split(","):
        if item:
            rank, _, fingerprint = item.partition(":")
            here[int(rank)] = fingerprint
    return here


def entries_of_those_here(
    store: Any, key: str, members: Sequence[int], me: int, fingerprint: str, entry: Mapping[str, Any]
) -> dict[int, dict]:
    """After a verdict other than ``ok``: the details of every rank waiting at ``key`` (this one included).

    Ranks that arrived within the last seconds join the list within ``GRACE_SECONDS``; those still absent then
    are the missing ones.
    """
    store.set(f"{key}/entry/{me}", json.dumps(entry, default=str))
    if me not in who_is_here(store, key):
        store.append(f"{key}/here", f"{me}:{fingerprint},")
    deadline = time.monotonic() + GRACE_SECONDS
    while True:
        here = who_is_here(store, key)
        if len(here) >= len(members) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    ranks = [r for r in members if r in here and r != me]
    keys = [f"{key}/entry/{r}" for r in ranks]
    found = {me: dict(entry)}
    if keys and wait_for_keys(store, keys, GRACE_SECONDS):  # each writes its entry before it lists itself
        found.update({r: json.loads(v) for r, v in zip(ranks, store.multi_get(keys), strict=True)})
    return dict(sorted(found.items()))


def _verdict(store: Any, bad: str, timeout: float) -> str:
    if not wait_for_keys(store, [bad], timeout):
        return "timeout"
    return store.get(bad).decode()


_deletions: queue.SimpleQueue = queue.SimpleQueue()
_deleter: list[threading.Thread] = []


def _delete_later(store: Any, keys: Sequence[str]) -> None:
    """Delete ``keys`` from a thread of its own, on its own connection: off this rank's path to the collective."""
    if not _deleter or not _deleter[0].is_alive():
        clone = clone_store(store)
        if clone is None:  # no second connection: delete here and now
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
        except Exception:  # noqa: BLE001 - the store went away: the job is over
            return
