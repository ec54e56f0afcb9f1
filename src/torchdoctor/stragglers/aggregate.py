"""Rank 0's reader: every rank's windows, read from the store and judged, in a thread of its own (in rank 0's
judge process, `torchdoctor.stragglers.judge`, or in rank 0 itself where there is none).

Each rank sets one key per window (`torchdoctor.stragglers.record.window_key`); rank 0 checks for the next
window's keys twice a second, reads them when every rank has set its own, judges the window
(`torchdoctor.stragglers.verdict`) and deletes the keys. A rank that stops publishing (fewer steps, or no
optimizer) holds nothing up: once rank 0 has published `LAG` windows further, the window is judged with the ranks there.
Given a ``kept`` path, every window read is written there as it is judged, one JSON line each (``{"window":
N, "ranks": {rank: what it published}}``): the run's raw figures, to judge it again later
(``benchmarks/straggler_replay.py``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from torchdoctor.stragglers.record import end_key, window_key
from torchdoctor.stragglers.verdict import Tracker
from torchdoctor.stragglers.window import WindowVerdict, judge_window

POLL_SECONDS = 0.5
LAG = 3  # windows a missing rank may lag before the window is judged without it
END_TIMEOUT = 15.0  # seconds rank 0 waits at the end for the other ranks' last windows


class Aggregator:
    """Rank 0's reader: `start` the thread, `finish` at the end of the run."""

    def __init__(self, store: Any, world_size: int, stream=None, kept: Path | None = None) -> None:
        self.store = store
        self.kept = kept
        self._kept_file = None
        self.world_size = world_size
        self.stream = stream
        self.tracker = Tracker()
        self.verdicts: list[WindowVerdict] = []
        self.next_window = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.problem: str | None = None

    def start(self) -> None:
        """Read and judge windows in a daemon thread until `finish`."""
        self._thread = threading.Thread(target=self._run, name="torchdoctor-stragglers", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                while self.poll():
                    pass
            except Exception as error:  # noqa: BLE001 - the store went away (the job ends): stop reading, say so at the end
                self.problem = f"stopped reading the ranks' windows: {error}"
                return

    def poll(self, final: bool = False) -> bool:
        """Judge the next window if it is there; whether one was judged. ``final``: at the end, judge it
        with the ranks that published it."""
        keys = [window_key(self.next_window, rank) for rank in range(self.world_size)]
        if self.store.check(keys):
            present = list(range(self.world_size))
        elif final or self.store.check([window_key(self.next_window + LAG + 1, 0)]):  # rank 0 is LAG ahead
            present = [rank for rank, key in enumerate(keys) if self.store.check([key])]
            if len(present) < 2:
                if final:
                    return False
                self.next_window += 1
                return True
        else:
            return False
        window = {rank: json.loads(self.store.get(keys[rank])) for rank in present}
        for rank in present:
            self.store.delete_key(keys[rank])
        if self.kept is not None:
            self._keep(window)
        verdict = judge_window(self.next_window, window)
        self.verdicts.append(verdict)
        self.next_window += 1
        line = self.tracker.feed(verdict)
        if line:
            stream = self.stream or sys.stderr
            stream.write(line + "\n")
            stream.flush()
        return True

    def _keep(self, window: dict[int, Any]) -> None:
        """Append the window as read to the `kept` file (opened at the first window)."""
        try:
            if self._kept_file is None:
                self.kept.parent.mkdir(parents=True, exist_ok=True)
                self._kept_file = open(self.kept, "w", encoding="utf-8")  # noqa: SIM115 - open for the run, closed in `finish`
            self._kept_file.write(json.dumps({"window": self.next_window, "ranks": window}) + "\n")
        except OSError as error:
            self.problem = (
                self.problem or f"could not keep the windows in {self.kept}: {error.strerror or error}"
            )
            self.kept = None

    def finish(self, timeout: float = END_TIMEOUT) -> list[int]:
        """Stop the thread, wait (at most ``timeout`` seconds) for every rank's end mark, judge what is
        left. Returns the ranks that never said they were done."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        deadline = time.monotonic() + timeout
        missing = list(range(self.world_size))
        try:
            while True:
                missing = [r for r in missing if not self.store.check([end_key(r)])]
                if not missing or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            ends = [
                json.loads(self.store.get(end_key(r))) for r in range(self.world_size) if r not in missing
            ]
            last = max([-1, *(end.get("last_window", -1) for end in ends)])
            while self.next_window <= last:
                if not self.poll(final=True):
                    self.next_window += 1  # published by fewer than two ranks: nothing to compare
        except Exception as error:  # noqa: BLE001 - the store went away: the summary says what was read
            self.problem = self.problem or f"stopped reading the ranks' windows: {error}"
        if self._kept_file is not None:
            self._kept_file.close()
        return missing


def judge_kept(path: Path) -> Tracker:
    """Judge a run again from the windows an `Aggregator` kept (``stragglers-windows.jsonl``), in order, with
    today's rules: the returned tracker's ``said`` holds the verdicts. A line that is not such a window is
    refused with its number (ValueError)."""
    tracker = Tracker()
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                kept = json.loads(line)
                window = {int(rank): figures for rank, figures in kept["ranks"].items()}
                verdict = judge_window(int(kept["window"]), window)
            except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
                raise ValueError(f"{path}:{number}: not a kept window ({error})") from None
            tracker.feed(verdict)
    return tracker
