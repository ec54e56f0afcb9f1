"""Setting a rank's windows in the store, off the training thread.

A window's rows are turned into JSON and set under their store key (one ``set``, a round trip to the store's
host) by a thread of its own, so the step that fills a window does not wait for either: the training thread
only hands the rows over. `Publisher.drain` waits, at the end of the run, until every window handed over is
set (with a timeout, and says which windows were left when it runs out).
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from typing import Any

DRAIN_TIMEOUT = 30.0  # seconds the end of the run waits for the windows not yet set


class Publisher:
    """``set_window(window, text)`` called in a daemon thread for each window `put`, in order; ``said(text)``
    gets one line when setting fails (the thread then stops: the store is gone, the job is ending)."""

    def __init__(self, set_window: Callable[[int, str], None], said: Callable[[str], None]) -> None:
        self._set_window = set_window
        self._said = said
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.failed = False
        self.last_set = -1  # the number of the latest window set

    def put(self, window: int, payload: dict[str, Any]) -> None:
        """Hand window ``window``'s payload (``{"first_step", "host", "rows", "cpus"}``) over to be set."""
        if self.failed:
            return
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="torchdoctor-stragglers-publish", daemon=True
            )
            self._thread.start()
        self._queue.put((window, payload))

    def _run(self) -> None:
        while True:
            window, payload = self._queue.get()
            if window is None:  # a drain's marker: everything before it is set
                payload.set()
                continue
            if self.failed:
                continue
            try:
                self._set_window(window, json.dumps(payload, separators=(",", ":")))
                self.last_set = window
            except Exception as error:  # noqa: BLE001 - the store is gone (the job is ending); never break the training
                self.failed = True
                self._said(f"torchdoctor: stragglers: stopped publishing this rank's steps: {error}")

    def drain(self, timeout: float = DRAIN_TIMEOUT) -> bool:
        """Wait (at most ``timeout`` seconds) until every window handed over is set; whether they were."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._queue.put((None, done))
        if done.wait(timeout):
            return True
        self._said(
            f"torchdoctor: stragglers: this rank's windows after window {self.last_set} were not set in the "
            f"store within {timeout:g} s; rank 0 judges the run without them"
        )
        return False
