"""The status line ``torchdoctor net`` keeps on stderr while it works: what it waits for, and the bench's progress.

Shown only when stderr is a terminal, so that logs, pipes and ``--json`` output never carry it. It is the
commands' one status line (`torchdoctor.status_line`), whose drawing thread stops for good however the command
ends, a Ctrl-C included (rich's progress bar, used here before, shares the risk that status line was written to
remove: a frame drawn after "torchdoctor: interrupted").
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping

from torchdoctor.net.rank_state import RankState
from torchdoctor.rank_list import who


def _quiet(_text: str) -> None:
    pass


class Status:
    """``net``'s status line on stderr; every method does nothing when stderr is not a terminal or when not
    ``enabled``. ``stop`` may come from another thread (a stage's timeout) and again from the block's end."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lines = contextlib.ExitStack()
        self._lock = threading.Lock()
        self._say = _quiet
        self._rows = 0

    def __enter__(self) -> Status:
        if self.enabled:
            from torchdoctor.status_line import status_line

            with self._lock:
                self._say = self._lines.enter_context(status_line("starting"))
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        with self._lock:
            self._say = _quiet
            self._lines.close()

    def say(self, text: str) -> None:
        self._say(text)

    def row(self, row: Mapping, total: int) -> None:
        """One more bandwidth measurement done (of ``total``)."""
        self._rows += 1
        self.say(f"{describe(row)} ({self._rows} of {total})")

    def ranks(
        self, states: Mapping[int, RankState], world_size: int, timeout: float, rendezvous: str | None = None
    ) -> None:
        """Whom the run waits for, from the ranks' states read so far; ranks at one stage are one group
        (``ranks 0-7 (starting)``). Over several hosts (``rendezvous`` given) no rank starts before every host
        has reached the rendezvous, so until one reports, it is the hosts that are waited for, there."""
        rows = next((s.bench for _, s in sorted(states.items()) if s.bench), [])
        if rows:
            total = next(s.bench_total for s in states.values() if s.bench)
            self.say(f"{describe(rows[-1])} ({len(rows)} of {total})")
            return
        absent = [r for r in range(world_size) if r not in states]
        behind = {r: s.stage for r, s in sorted(states.items()) if s.stage not in ("done", "bench")}
        if not absent and not behind:
            self.say(f"{world_size} ranks done")
            return
        if rendezvous and not states:
            self.say(f"waiting at the rendezvous {rendezvous} for every host to join, at most {timeout:g}s")
            return
        stages = {**behind, **dict.fromkeys(absent, "starting")}
        waiting = [
            f"{who(r for r, s in stages.items() if s == stage)} ({stage})"
            for stage in dict.fromkeys(stages[r] for r in sorted(stages))
        ]
        self.say(f"waiting for {', '.join(waiting)}, at most {timeout:g}s a stage")


def describe(row: Mapping) -> str:
    """``all_reduce 1 MiB: 2.345 GB/s busbw``."""
    from torchdoctor.net.bandwidth import human_size

    return f"{row['op']} {human_size(row['size'])}: {row['busbw']:.3f} GB/s busbw"
