"""How the ranks of a job agree on a batch size after each try, without a collective that could hang.

Each rank writes, in the process group's own store (the ``TCPStore`` that ``torchrun`` or
``init_process_group`` already run), that it is starting a try, then how the try ended, and waits, with a
timeout, for every other rank's ending. A store key needs no partner, so a rank that ran out of memory is
never stuck in an all-reduce that the others never join; and it can see who is still inside the function. That
is the case a whole decorated training loop gets into: one rank runs out of memory in its forward pass while
the others, which fit, wait for it in DDP's gradient all-reduce. Nobody can come out of that on their own; we
say so while waiting, and end with an error naming every rank's failure and the fix.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from torchdoctor.rank_list import ranks_text

FITS, OUT_OF_MEMORY, OTHER_ERROR = "fits", "out of memory", "error"
DEFAULT_TIMEOUT = 1800.0  # torch's default for a gloo process group, when the group does not say
_KEY_PREFIX = "torchdoctor/batch_size"
FIX = (
    "decorate a short probe (one training step that returns the batch size) instead of the whole training "
    "loop, and run its backward under `model.no_sync()`, so that no rank waits for another inside the "
    "function; then train at the size it returns"
)

_searches = 0  # searches started by this process: the same count on every rank names the same search


class Agreement:
    """One search's agreement between the ranks of the default process group."""

    def __init__(self, name: str, timeout: float | None, log: Any) -> None:
        import torch.distributed as dist

        global _searches
        _searches += 1
        self.name, self.log = name, log
        self.store = dist.distributed_c10d._get_default_store()
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.timeout = _group_timeout(dist) if timeout is None else timeout
        self.prefix = f"{_KEY_PREFIX}/{_searches}"
        self.attempts = 0  # the last try this rank started: every rank makes the same tries
        self._seen_blocked: dict[int, str] = {}
        self._watch: _BlockedWatch | None = None

    def starting(self, attempt: int, size: int) -> None:
        """Tell the others this rank is inside the function for try ``attempt`` at ``size``, and, while it
        is, whether it sits blocked in a collective (`_BlockedWatch`)."""
        self.attempts = max(self.attempts, attempt)
        self.store.set(f"{self.prefix}/{attempt}/inside/{self.rank}", str(size))
        self._watch = _BlockedWatch(self.store, self._blocked(attempt, self.rank)).start()

    def _blocked(self, attempt: int, rank: int) -> str:
        return f"{self.prefix}/{attempt}/blocked/{rank}"

    def _deadlocked(self, attempt: int, size: int, mine: dict, missing: list[int]) -> str:
        """The error to end on when a rank still inside the function is blocked in a collective: this rank
        has left the function and calls no collective before every rank's outcome is in, so that
        collective never completes. Empty while no missing rank is blocked."""
        blocked = {}
        for rank in missing:
            key = self._blocked(attempt, rank)
            if self.store.check([key]):
                blocked[rank] = self.store.get(key).decode(errors="replace")
        # the same wait at two looks a second apart (not one the rank has just come out of)
        lasting = {r: w for r, w in blocked.items() if self._seen_blocked.get(r) == w}
        self._seen_blocked = blocked
        if not lasting:
            return ""
        where = "; ".join(
            f"rank {rank} waits in {what.rsplit(' (wait ', 1)[0]}" for rank, what in sorted(lasting.items())
        )
        text = (
            f"find_executable_batch_size: deadlock at batch size {size} (try {attempt}): {where} inside "
            f"`{self.name}`, for rank {self.rank}, which has left it"
        )
        if mine["outcome"] == OUT_OF_MEMORY:
            text += f" on its out-of-memory error ({mine['error']})"
        return text + f". Nobody can go on, so stopping now rather than at the timeout. Fix: {FIX}"

    def leave(self) -> None:
        """This rank is done with the search (settled or failed): the last rank to leave, when every other
        has read what it needed, deletes the search's keys from the store, which outlives the search."""
        try:
            if self.store.add(f"{self.prefix}/left", 1) < self.world:
                return
            for attempt in range(1, self.attempts + 1):
                for rank in range(self.world):
                    self.store.delete_key(f"{self.prefix}/{attempt}/inside/{rank}")
                    self.store.delete_key(self._done(attempt, rank))
                    self.store.delete_key(self._blocked(attempt, rank))
            self.store.delete_key(f"{self.prefix}/left")
        except (RuntimeError, NotImplementedError, AttributeError):  # the store went away, or cannot delete
            pass

    def outcomes(self, attempt: int, size: int, outcome: str, message: str) -> dict[int, dict]:
        """Publish this rank's outcome of try ``attempt`` and return every rank's, once all have one.

        Raises ``RuntimeError`` naming the ranks that did not finish after the timeout.
        """
        mine = self.publish(attempt, size, outcome, message)
        others = [rank for rank in range(self.world) if rank != self.rank]
        start = time.monotonic()
        next_notice, pause, next_look = 10.0, 0.02, 1.0
        while not self.store.check([self._done(attempt, rank) for rank in others]):
            waited = time.monotonic() - start
            if waited >= next_look:  # once a second: is a rank still inside blocked in a collective?
                next_look = waited + 1.0
                deadlock = self._deadlocked(attempt, size, mine, self._missing(attempt, others)[0])
                if deadlock:
                    raise RuntimeError(deadlock)
            if waited >= next_notice or waited >= self.timeout:
                missing, seen = self._missing(attempt, others)
                if waited >= self.timeout:
                    raise RuntimeError(self._gave_up(attempt, size, mine, missing, seen, waited))
                self.log.warning(self._waiting(attempt, size, mine, missing, waited), main_process_only=False)
                next_notice = min(next_notice * 2, waited + 300)
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        return {rank: self._read(attempt, rank) for rank in range(self.world)}

    def publish(self, attempt: int, size: int, outcome: str, message: str) -> dict:
        """Tell the others how try ``attempt`` ended here."""
        if self._watch is not None:
            self._watch.stop()
        mine = {"outcome": outcome, "size": size, "error": message, "function": self.name}
        self.store.set(self._done(attempt, self.rank), json.dumps(mine))
        return mine

    def posted(self, attempt: int) -> dict[int, dict]:
        """The outcomes of try ``attempt`` published so far, without waiting for the rest."""
        done = [rank for rank in range(self.world) if self.store.check([self._done(attempt, rank)])]
        return {rank: self._read(attempt, rank) for rank in done}

    def _done(self, attempt: int, rank: int) -> str:
        return f"{self.prefix}/{attempt}/done/{rank}"

    def _read(self, attempt: int, rank: int) -> dict:
        try:
            entry = json.loads(self.store.get(self._done(attempt, rank)))
        except (ValueError, TypeError):
            entry = None
        if not isinstance(entry, dict) or entry.get("outcome") not in (FITS, OUT_OF_MEMORY, OTHER_ERROR):
            return {"outcome": OTHER_ERROR, "error": "unreadable entry in the store", "function": "?"}
        return entry

    def _missing(self, attempt: int, others: list[int]) -> tuple[list[int], dict[int, dict]]:
        """The ranks without an outcome yet, and the outcomes of those that have one."""
        missing, seen = [], {}
        for rank in others:
            if self.store.check([self._done(attempt, rank)]):
                seen[rank] = self._read(attempt, rank)
            else:
                missing.append(rank)
        return missing, seen

    def _where(self, attempt: int, rank: int, size: int) -> str:
        if self.store.check([f"{self.prefix}/{attempt}/inside/{rank}"]):
            return f"rank {rank} (still inside `{self.name}` at batch size {size})"
        return f"rank {rank} (has not started `{self.name}` at batch size {size} yet)"

    def _waiting(self, attempt: int, size: int, mine: dict, missing: list[int], waited: float) -> str:
        whom = ", ".join(self._where(attempt, rank, size) for rank in missing)
        line = (
            f"find_executable_batch_size: rank {self.rank} waits for {whom} to finish try {attempt} "
            f"({waited:.0f} s of {self.timeout:.0f} s)"
        )
        if mine["outcome"] == OUT_OF_MEMORY:
            line += (
                f"; rank {self.rank} ran out of memory there ({mine['error']}). If `{self.name}` runs a "
                f"collective (DDP's backward), the ranks still inside wait for rank {self.rank}, which left on "
                f"its out-of-memory error: nobody can go on. Fix: {FIX}"
            )
        return line

    def _gave_up(
        self, attempt: int, size: int, mine: dict, missing: list[int], seen: dict[int, dict], waited: float
    ) -> str:
        failures = [(self.rank, mine), *seen.items()]
        out_of_memory = sorted(rank for rank, entry in failures if entry["outcome"] == OUT_OF_MEMORY)
        whom = ", ".join(self._where(attempt, rank, size) for rank in missing)
        text = f"find_executable_batch_size: {whom} did not finish try {attempt} within {waited:.0f} s"
        if not out_of_memory:
            return (
                text
                + f"; rank(s) {ranks_text(sorted(r for r, _ in failures))} finished it and waited for them"
            )
        return (
            f"{text}, while rank(s) {ranks_text(out_of_memory)} ran out of memory at batch size {size}"
            f" ({describe(failures)}). The ranks still inside `{self.name}` are most likely waiting in a "
            f"collective (DDP's gradient all-reduce) for ranks that left on their out-of-memory error. Fix: {FIX}"
        )


class _BlockedWatch:
    """While this rank runs a try: a thread that looks at the main thread's stack every half second and,
    once it has sat in the same collective for a second, says so in the store (``key``), so that a rank
    that has left the function knows at once that the collective will never complete."""

    def __init__(self, store: Any, key: str, every: float = 0.5) -> None:
        self.store, self.key, self.every = store, key, every
        self._stop = threading.Event()
        self._main = threading.main_thread().ident

    def start(self) -> _BlockedWatch:
        threading.Thread(target=self._run, name="torchdoctor-batch-size-watch", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        from torchdoctor.hang.places import collective_of
        from torchdoctor.hang.stacks import frames_of

        seen, said, episodes = None, False, 0
        while not self._stop.wait(self.every):
            frame = sys._current_frames().get(self._main)
            where = collective_of(frames_of(frame)) if frame is not None else None
            signature = (
                where,
                id(frame.f_code) if frame is not None else None,
                frame.f_lineno if frame else 0,
            )
            del frame
            try:
                if where and signature == seen and not said:
                    episodes += (
                        1  # a new value each time: a rank that reads it twice knows it is the same wait
                    )
                    self.store.set(self.key, f"{where} (wait {episodes})")
                    said = True
                elif said and signature != seen:  # it moved on: no longer blocked
                    self.store.delete_key(self.key)
                    said = False
            except Exception:  # noqa: BLE001 - the store went with another rank: its error says why
                return
            seen = signature
        if said:
            try:
                self.store.delete_key(self.key)
            except Exception:  # noqa: BLE001 - the store went with another rank: nothing left to tidy
                pass


def failure_message(name: str, size: int, statuses: dict[int, dict], crashed: list[int]) -> str:
    """The error of a rank whose try went fine (or ran out of memory) while another rank's failed otherwise."""
    out_of_memory = [rank for rank, entry in statuses.items() if entry["outcome"] == OUT_OF_MEMORY]
    text = (
        f"`{name}` failed on rank(s) {ranks_text(crashed)} at batch size {size} with an error that is not "
        f"out-of-memory ({describe([(r, statuses[r]) for r in crashed])})"
    )
    if out_of_memory:
        text += (
            f", while rank(s) {ranks_text(out_of_memory)} ran out of memory at that size "
            f"({describe([(r, statuses[r]) for r in out_of_memory])}). A rank that fits waits for one that "
            f"left on its out-of-memory error in the next collective until that collective times out. Fix: {FIX}"
        )
    else:
        text += "; stopping here too rather than waiting for them forever"
    return text


def describe(failures: list[tuple[int, dict]]) -> str:
    """``rank 1: CUDA out of memory...; rank 3: ...`` for the ranks whose try did not fit."""
    return "; ".join(
        f"rank {rank}: {entry['error']}" for rank, entry in sorted(failures) if entry["outcome"] != FITS
    )


def _group_timeout(dist: Any) -> float:
    """The default process group's timeout (what torch waits for one collective) in seconds, plus a margin
    so that a rank stuck in a collective times out there, and tells us so, before we give up on it."""
    seconds = None
    try:
        import torch

        group = dist.distributed_c10d._get_default_group()
        for device in ("cuda", "cpu"):
            try:
                seconds = group._get_backend(torch.device(device)).options._timeout.total_seconds()
                break
            except (RuntimeError, AttributeError):
                continue
    except (RuntimeError, AttributeError, ValueError):
        pass
    if not seconds or seconds <= 0:
        seconds = DEFAULT_TIMEOUT
    return seconds * 1.1 + 5


def has_store() -> bool:
    """Whether the default process group has a store (the MPI backend has none)."""
    import torch.distributed as dist

    try:
        dist.distributed_c10d._get_default_store()
    except (RuntimeError, ValueError, AttributeError):  # the MPI backend has no store
        return False
    return True
