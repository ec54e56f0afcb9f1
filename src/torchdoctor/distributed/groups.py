"""Debug mode's state per process group, and what the watcher thread does with what it finds.

Each rank keeps a running fingerprint per process group (`torchdoctor.distributed.fingerprint`), made on the
group's first checked collective, when the watcher thread that compares the ranks' fingerprints starts too.
The watcher calls back here: a rank waiting inside a collective says on stderr whom it waits for, and at the
debug-mode timeout names the missing ranks; a divergence is raised in the main thread, or, when that thread is
blocked for good inside a collective, ends the process saying it.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from torchdoctor.distributed import fingerprint, stacks
from torchdoctor.distributed import waiting as waiting_module
from torchdoctor.distributed.debug_settings import debug_timeout
from torchdoctor.distributed.messages import divergence_message, group_words, missing_message
from torchdoctor.distributed.raising import install_trimming_hook, is_ours, raise_in_main_thread
from torchdoctor.rank_list import who

by_process_group: dict[
    Any, fingerprint.Group
] = {}  # process group object (None: the world) -> its fingerprint state
by_key: dict[str, fingerprint.Group] = {}
main_thread_inside: list[tuple[str, int] | None] = [
    None
]  # (group key, seq) of the collective the main thread is inside
watchers: list[fingerprint.Watcher] = []
GRACE_SECONDS = 2.0  # a rank blocked in a collective after a divergence: time for the peer's exit to free it


def group_state(dist: Any, group: Any) -> fingerprint.Group | None:
    """This rank's fingerprint state for ``group``; None where nothing is checked (no group, a rank outside
    it, one rank, no store)."""
    if not (dist.is_available() and dist.is_initialized()):
        return None
    world = group is None or group is dist.GroupMember.WORLD
    members = members_of(dist, group)
    me = dist.get_rank()
    if len(members) < 2 or me not in members:
        return None
    store = job_store(dist)
    if store is None:
        return None  # e.g. the MPI backend has no store: nothing to check in with
    key = "world" if world else _group_key(dist, group, members)
    g = by_key.get(key)
    if g is None:
        g = by_key[key] = fingerprint.Group(key, members, me)
    by_process_group[group] = g
    if me not in stacks._responders:
        stacks.start_responder(store, me)
    stacks.last_calls = _last_calls
    if not watchers:
        watcher = fingerprint.Watcher(
            store,
            me,
            lambda: list(by_key.values()),
            lambda: main_thread_inside[0],
            diverged,
            divergence_message,
            _still_waiting,
            _late_message,
        )
        watchers.append(watcher)
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


def forget_groups() -> None:
    """The process group is going away: stop comparing (the store goes with it) and forget its groups."""
    for watcher in watchers:
        watcher.stop()
    watchers.clear()
    stacks.stop_responders()
    by_process_group.clear()
    by_key.clear()


_said: dict[tuple[str, int], float] = {}  # (group, seq) -> when this rank last said whom it waits for


def _still_waiting(g: fingerprint.Group, seq: int, behind: list[int], waited: float) -> None:
    """From the watcher: this rank waits inside collective ``seq`` of ``g`` for the ranks ``behind``. Says so
    on stderr after a few seconds; at the debug-mode timeout, names them with their stacks and ends."""
    wait = debug_timeout()
    code = g.log[seq - g.log_base - 1] if seq > g.log_base else fingerprint.RAISED
    entry = fingerprint.calls[code][1]
    if waited >= wait:
        store = watchers[0].store
        waiting = {r: dict(entry) for r in g.members if r not in behind}
        problem = missing_message(store, g.key, seq, g.members, waiting, wait)
        watchers[0].give_up(g, seq)
        diverged(g, problem)
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
    for key, g in list(by_key.items()):
        seq = g.seq
        if seq > g.log_base:
            entry = fingerprint.calls[g.log[seq - g.log_base - 1]][1]
            last[key] = [seq, entry["operation"], entry.get("site", "<unknown>")]
    return last


def diverged(g: fingerprint.Group, problem: str) -> None:
    """From the watcher thread: ``g``'s ranks diverged. The main thread raises ``problem``: now if it runs
    Python, when its collective returns or fails, or, blocked for good in one, the process ends saying it."""
    g.verdict = problem
    install_trimming_hook()
    inside = main_thread_inside[0]
    if inside is None:
        raise_in_main_thread(problem)
        return
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        if main_thread_inside[0] != inside:
            return  # it came out: the wrapper raised
        time.sleep(0.05)
    group_key, seq = inside
    stack = stacks.main_thread_stack(skip=is_ours)
    sys.stderr.write(
        f"Traceback (most recent call last):\n{stack}\n"
        f"torchdoctor.distributed.DistributedOperationException: {problem}\n"
        f"torchdoctor: this rank is blocked inside collective #{seq} of {group_words(group_key)}, which "
        "nothing can call it back from: ending the process (exit code 1)\n"
    )
    sys.stderr.flush()
    os._exit(1)


def members_of(dist: Any, group: Any) -> list[int]:
    """The ranks of ``group`` (None or WORLD: every rank); none for a rank outside it."""
    if group is None or group is dist.GroupMember.WORLD:
        return list(range(dist.get_world_size()))
    if group is dist.GroupMember.NON_GROUP_MEMBER:
        return []
    return sorted(dist.get_process_group_ranks(group))


def job_store(dist: Any) -> Any:
    """The store of the default process group (torchrun's or ``init_process_group``'s), or None."""
    try:
        return dist.distributed_c10d._get_default_store()
    except (RuntimeError, ValueError, AttributeError):
        return None
