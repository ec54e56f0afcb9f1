"""Running fingerprints of each rank's collectives, compared between the ranks by a thread, off the hot path.

Per process group, a rank appends one small number per collective to a list (``Group.log``): the index of what
it called (operation, shapes, dtypes, call site) in this process's table of calls seen so far. That is the whole
cost of a collective it has made before. A thread of its own (`Watcher`), twice a second, folds the new numbers
into a chain of hashes (one per sequence number, the hash of every call so far), writes this rank's position
(``n`` calls, the hash at ``n``, the digest of the last call, the call it is checking in with, the collective
it is inside) to one key of the job's store, and reads every other rank's in one request. A rank at or ahead
of another compares its own hash at the other's position: equal hashes mean equal histories; different ones,
a divergence. Ranks that each wait inside a collective another one has not reached, while that one waits
inside another group's collective, are an order swap: a deadlock that no call will end.

On either, the ranks swap the digests of their recent calls and the details of each kind of call, and every
rank builds the same error from them, naming the first call where they differ. This module finds and words the
divergence; `torchdoctor.distributed.groups` decides how each rank raises it.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import threading
import time
from array import array
from collections.abc import Callable, Sequence
from typing import Any

from torchdoctor.distributed.waiting import clone_store

PERIOD_SECONDS = 0.5  # how often a rank publishes its position and reads the others'
KEEP = 1 << 17  # calls per group whose hash a rank keeps (ranks of one group cannot drift far apart)
SHOWN = 4096  # calls per group a rank hands over when a divergence is found
ANSWER_SECONDS = 3.0  # how long a rank waits for the others' recent calls, once a divergence is found
STABLE_READS = 2  # an order swap must be seen this many reads in a row (a fast collective is inside briefly)
_PREFIX = "torchdoctor/fingerprint"
_MASK = (1 << 64) - 1

# code -> (digest, entry): every distinct call this process has made (entry: operation, site, signature)
calls: list[tuple[int, dict]] = []
RAISED = 0  # the code of a call that every rank raised at, in agreement: it never ran
RAISED_DIGEST = 0


def digest_of(entry: dict) -> int:
    """A 64-bit digest of a call's ``entry``, the same on every rank for the same call."""
    text = json.dumps(entry, sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def new_call(entry: dict) -> int:
    """The code of a new kind of call: ``entry`` (JSON-able: operation, site, shapes…) joins the table."""
    calls.append((digest_of(entry), entry))
    return len(calls) - 1


calls.append((0, {"operation": "(raised on every rank: it never ran)"}))


class Group:
    """What one rank knows of its own calls in one process group."""

    __slots__ = (
        "key",
        "members",
        "me",
        "known",
        "log",
        "log_base",
        "hashes",
        "hash_base",
        "folded",
        "pending",
        "pending_entry",
        "verdict",
        "agreed",
    )

    def __init__(self, key: str, members: list[int], me: int) -> None:
        self.key, self.members, self.me = key, members, me
        self.known: dict[Any, int] = {}  # (what, site) -> code: the calls made before (repeats are free)
        self.log: list[int] = []  # codes of the calls after log_base, in order; appended by the main thread
        self.log_base = 0
        self.hashes = array("Q")  # chained hash at seq hash_base + 1 + i
        self.hash_base = 0
        self.folded = 0  # calls folded into hashes so far
        self.pending: tuple[int, int] | None = None  # (seq, digest) of a call still being checked in
        self.pending_entry: dict | None = None  # and its details
        self.verdict: str | None = None  # the divergence found, once found
        self.agreed: list[tuple[int, str]] = []  # (seq, fingerprint) of check-ins that agreed (store keys)

    @property
    def seq(self) -> int:
        """Calls recorded so far in this group (the sequence number of the last)."""
        return self.log_base + len(self.log)

    def hash_at(self, seq: int) -> int | None:
        """The chained hash of the first ``seq`` calls, or None when not kept (or not folded yet)."""
        if seq == 0:
            return 0
        i = seq - self.hash_base - 1
        return self.hashes[i] if 0 <= i < len(self.hashes) else None

    def digest_at(self, seq: int) -> int | None:
        """The digest of call ``seq``, or None when no longer kept."""
        i = seq - self.log_base - 1
        return calls[self.log[i]][0] if 0 <= i < len(self.log) else None

    def fold(self) -> None:
        """Hash the calls recorded since the last fold; forget the oldest beyond ``KEEP``."""
        end = self.seq
        h = self.hash_at(self.folded) or 0
        for seq in range(self.folded + 1, end + 1):
            h = (h * 0x100000001B3 ^ calls[self.log[seq - self.log_base - 1]][0]) & _MASK
            self.hashes.append(h)
        self.folded = end
        extra = len(self.hashes) - KEEP
        if extra > 0:
            del self.hashes[:extra]
            self.hash_base += extra
        extra = len(self.log) - KEEP
        if extra > 0:  # the main thread only appends: deleting the front is safe under the GIL
            del self.log[:extra]
            self.log_base += extra

    def position(self, inside: tuple[str, int] | None) -> list:
        """What this rank publishes for this group: n, hash, last digest, pending call, inside-collective seq."""
        n = self.folded
        last = self.digest_at(n) if n else 0
        inside_seq = inside[1] if inside and inside[0] == self.key else None
        return [n, self.hash_at(n), last, list(self.pending) if self.pending else None, inside_seq]

    def recent(self) -> dict:
        """The digests of this rank's last calls and the details of each kind: what it hands over on a
        divergence."""
        start = max(self.log_base, self.folded - SHOWN)
        codes = self.log[start - self.log_base : self.folded - self.log_base]
        entries = {f"{calls[c][0]:x}": calls[c][1] for c in set(codes)}
        pending = None
        if self.pending:
            pending = f"{self.pending[1]:x}"
            entries.setdefault(pending, self.pending_entry or {"operation": "<unknown>"})
        return {
            "from": start,
            "digests": [f"{calls[c][0]:x}" for c in codes],
            "pending": pending,
            "entries": entries,
        }


def first_difference(
    recents: dict[int, dict], inside_of: dict[int, Any]
) -> tuple[int, dict[int, dict | None]] | None:
    """``(seq, {rank: entry, or None where the rank has not reached seq})`` at the first call on which the ranks'
    ``recent()`` lists differ, or None when they agree as far as each has gone."""
    start = max(r["from"] for r in recents.values())
    end = max(r["from"] + len(r["digests"]) + (1 if r["pending"] else 0) for r in recents.values())
    for seq in range(start + 1, end + 1):
        at: dict[int, str | None] = {}
        for rank, recent in recents.items():
            i = seq - recent["from"] - 1
            if i < len(recent["digests"]):
                at[rank] = recent["digests"][i]
            elif i == len(recent["digests"]) and recent["pending"]:
                at[rank] = recent["pending"]
            else:
                at[rank] = None
        seen = {d for d in at.values() if d is not None}
        if len(seen) > 1 or (seen and None in at.values() and _all_stuck(at, inside_of)):
            return seq, {
                rank: (recents[rank]["entries"].get(d) if d is not None else None) for rank, d in at.items()
            }
    return None


def _all_stuck(at: dict[int, str | None], inside_of: dict[int, Any]) -> bool:
    return all(inside_of.get(rank) is not None for rank, d in at.items() if d is None)


class Watcher:
    """The thread that publishes this rank's positions, reads the others' and finds divergences."""

    def __init__(
        self,
        store: Any,
        rank: int,
        groups: Callable[[], Sequence[Group]],
        inside: Callable[[], tuple[str, int] | None],
        on_divergence: Callable[[Group, str], None],
        describe: Callable[[str, int, dict[int, dict | None], dict[int, Any]], str],
        on_waiting: Callable[[Group, int, list[int], float], None],
        late: Callable[[str, int, int], str],
    ) -> None:
        self.store = clone_store(store) or store  # its own connection where torch can make one
        self.rank, self.groups, self.inside = rank, groups, inside
        self.on_divergence, self.describe = on_divergence, describe
        self.on_waiting, self.late = on_waiting, late
        self.gave_up: dict[str, int] = {}  # group key -> the collective at which this rank stopped waiting
        self.inside_since: tuple[Any, float] | None = None
        self.requests = 0  # store requests made by this thread
        self.published: str | None = None
        self.known_ranks: set[int] = set()
        self.swaps: dict[str, tuple[Any, int]] = {}  # group key -> (the swap seen, reads in a row)
        self.flagged: set[str] = set()  # groups in which this rank knows of a divergence
        self.handed: set[str] = set()  # groups whose recent calls this rank has handed over
        self.last_positions: dict[int, dict] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="torchdoctor-fingerprints", daemon=True)

    def start(self) -> None:
        """Start watching, from a daemon thread, until `stop` (at the latest when the interpreter exits)."""
        self.thread.start()
        atexit.register(self.stop)

    def stop(self, seconds: float = 2.0) -> None:
        """Stop watching and wait up to ``seconds`` for the thread to end: a daemon thread caught inside a store
        request while the interpreter shuts down can hang the exit."""
        self.stopped.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(seconds)

    def _run(self) -> None:
        while not self.stopped.wait(PERIOD_SECONDS):
            try:
                self.look_once()
            except Exception:  # noqa: BLE001 - the store went away (the job ended): nothing left to compare
                return

    def look_once(self) -> None:
        """Publish this rank's positions if they changed, read the others', act on a divergence."""
        groups = [g for g in self.groups() if g.verdict is None]
        if not groups:
            return
        inside = self.inside()
        mine: dict[str, Any] = {}
        for g in groups:
            g.fold()
            mine[g.key] = g.position(inside)
        diverged = [g.key for g in groups if g.key in self.flagged]
        text = json.dumps({"groups": mine, "diverged": diverged, "gave_up": self.gave_up})
        if text != self.published:
            self.store.set(f"{_PREFIX}/{self.rank}", text)
            self.requests += 1
            self.published = text
        others = sorted({r for g in groups for r in g.members if r != self.rank})
        positions = self._read(others)
        for g in groups:
            self._compare(g, positions)
        for g in groups:
            if g.verdict is None:
                self._left_behind(g, positions)
        self._waiting(inside, positions)

    def _left_behind(self, g: Group, positions: dict[int, dict]) -> None:
        """Another rank stopped waiting for this one at a collective of ``g`` this rank had not passed."""
        for r, position in positions.items():
            at = position.get("gave_up", {}).get(g.key)
            if at is not None and g.folded < at:
                self.on_divergence(g, self.late(g.key, at, r))
                return

    def _waiting(self, inside: tuple[str, int] | None, positions: dict[int, dict]) -> None:
        """While this rank waits inside a collective that members have not reached: tell ``on_waiting``."""
        if inside is None:
            self.inside_since = None
            return
        now = time.monotonic()
        if self.inside_since is None or self.inside_since[0] != inside:
            self.inside_since = (inside, now)
            return
        g = next((x for x in self.groups() if x.key == inside[0]), None)
        if g is None or g.verdict is not None:
            return
        seq = inside[1]
        behind = []
        for r in g.members:
            if r == self.rank:
                continue
            theirs = positions.get(r, {}).get("groups", {}).get(g.key)
            if theirs is None or (theirs[0] < seq and not (theirs[3] and theirs[3][0] == seq)):
                behind.append(r)
        if behind:
            self.on_waiting(g, seq, behind, now - self.inside_since[1])

    def give_up(self, g: Group, seq: int) -> None:
        """Say to the others that this rank stopped waiting at collective ``seq`` of ``g``."""
        self.gave_up[g.key] = seq
        self.published = None
        text = {
            "groups": {g.key: g.position(self.inside())},
            "diverged": sorted(self.flagged),
            "gave_up": self.gave_up,
        }
        self.store.set(f"{_PREFIX}/{self.rank}", json.dumps(text))
        self.requests += 1

    def _read(self, ranks: list[int]) -> dict[int, dict]:
        missing = [r for r in ranks if r not in self.known_ranks]
        for r in missing:  # each rank's key exists from its first look on: found once, then multi_get
            self.requests += 1
            if self.store.check([f"{_PREFIX}/{r}"]):
                self.known_ranks.add(r)
        ready = [r for r in ranks if r in self.known_ranks]
        if not ready:
            return {}
        values = self.store.multi_get([f"{_PREFIX}/{r}" for r in ready])
        self.requests += 1
        self.last_positions = {r: json.loads(v) for r, v in zip(ready, values, strict=True)}
        return self.last_positions

    def _compare(self, g: Group, positions: dict[int, dict]) -> None:
        reason = None
        for r in g.members:
            if r == self.rank or r not in positions:
                continue
            if g.key in positions[r].get("diverged", []):
                reason = f"rank {r} found it"
                break
            theirs = positions[r]["groups"].get(g.key)
            if theirs is None:
                continue
            n, h, _last, pending, _inside = theirs
            if n <= g.folded:
                mine = g.hash_at(n)
                if mine is not None and mine != h:
                    reason = f"histories differ at or before #{n}"
                    break
            # a call checked in on one side: compared with the other's call there, unless that one raised at
            # the same check-in (it found the mismatch first; the other is about to)
            if pending and pending[0] <= g.folded:
                mine = g.digest_at(pending[0])
                if mine is not None and mine not in (pending[1], RAISED_DIGEST):
                    reason = f"rank {r} checks in at #{pending[0]} with another call"
                    break
            if g.pending and n == g.pending[0] and _last not in (g.pending[1], RAISED_DIGEST):
                reason = f"rank {r} made another call at #{n}"
                break
        if reason is None and self._order_swap(g, positions):
            reason = "order swap"
        if reason is not None:
            self.resolve(g, positions)

    def _order_swap(self, g: Group, positions: dict[int, dict]) -> bool:
        """This rank waits inside (or checking in at) collective #k of ``g``, a member has not reached it and is
        itself inside another group's collective, which this rank has not reached: seen twice in a row."""
        inside = self.inside()
        waiting = inside[1] if inside and inside[0] == g.key else (g.pending[0] if g.pending else None)
        swapped = None
        if waiting is not None:
            for r in g.members:
                theirs = positions.get(r, {}).get("groups", {})
                if r == self.rank or g.key not in theirs:
                    continue
                n_r = theirs[g.key][0]
                pending_r = theirs[g.key][3]
                if n_r >= waiting or (pending_r and pending_r[0] == waiting):
                    continue
                for other_key, (_n_o, _h, _l, pend_o, inside_o) in theirs.items():
                    blocked_at = inside_o or (pend_o[0] if pend_o else None)
                    if other_key == g.key or blocked_at is None:
                        continue
                    me_there = next((x for x in self.groups() if x.key == other_key), None)
                    if me_there is not None and me_there.folded < blocked_at:
                        swapped = (waiting, r, other_key, blocked_at)
        if swapped is None:
            self.swaps.pop(g.key, None)
            return False
        before, times = self.swaps.get(g.key, (None, 0))
        times = times + 1 if before == swapped else 1
        self.swaps[g.key] = (swapped, times)
        return times >= STABLE_READS

    def resolve(self, g: Group, positions: dict[int, dict]) -> None:
        """Hand over this rank's recent calls, read the others', and pass the worded divergence on."""
        self.flagged.add(g.key)
        self.published = None
        g.fold()
        self.store.set(
            f"{_PREFIX}/{self.rank}",
            json.dumps({"groups": {g.key: g.position(self.inside())}, "diverged": sorted(self.flagged)}),
        )
        for group in self.groups():  # all of them: another rank may be resolving another of its groups
            if group.key not in self.handed:
                group.fold()
                self.store.set(f"{_PREFIX}/{group.key}/recent/{self.rank}", json.dumps(group.recent()))
                self.handed.add(group.key)
                self.requests += 1
        self.requests += 1
        keys = {r: f"{_PREFIX}/{g.key}/recent/{r}" for r in g.members}
        deadline = time.monotonic() + ANSWER_SECONDS
        while time.monotonic() < deadline and not self.store.check(list(keys.values())):
            time.sleep(0.05)
        present = [r for r in g.members if self.store.check([keys[r]])]
        recents = {
            r: json.loads(v)
            for r, v in zip(present, self.store.multi_get([keys[r] for r in present]), strict=True)
        }
        inside_of = {}
        for r in g.members:
            if r == self.rank:  # inside another group's collective, or checking in at one
                inside = self.inside()
                checking = [[x.key, x.pending[0]] for x in self.groups() if x.pending and x.key != g.key]
                inside_of[r] = list(inside) if inside and inside[0] != g.key else (checking or [None])[0]
            else:
                inside_of[r] = _blocked_elsewhere(positions.get(r), g.key)
        found = first_difference(recents, inside_of)
        if found is None:
            return  # a false alarm cannot be worded: keep watching
        seq, entries = found
        silent = [r for r in g.members if r not in recents]
        for r in silent:
            entries[r] = None
        self.on_divergence(g, self.describe(g.key, seq, entries, inside_of))


def _blocked_elsewhere(position: dict | None, key: str) -> Any:
    if not position:
        return None
    for other_key, (_n, _h, _l, pending, inside) in position.get("groups", {}).items():
        if other_key == key:
            continue
        at = inside or (pending[0] if pending else None)
        if at is not None:
            return [other_key, at]
    return None
