"""Waiting for keys in the job's store without going silent or deaf to Ctrl-C.

A store ``wait`` blocks in C++: while it does, Python cannot act on Ctrl-C. So a wait first blocks for at most
``QUIET_SECONDS`` (the normal case: one request, no thread); beyond that the rest of the wait moves to a daemon
thread on its own connection, while this thread wakes twice a second (so Ctrl-C lands) and prints on stderr,
after ``FIRST_LINE_SECONDS`` and then every ``LINE_EVERY_SECONDS``, whom it is waiting for.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

QUIET_SECONDS = 2.0
FIRST_LINE_SECONDS = 5.0
LINE_EVERY_SECONDS = 10.0


def wait_for_keys(
    store: Any,
    keys: list[str],
    timeout: float,
    waiting_for: Callable[[float], str] | None = None,
    on_slow: Callable[[], None] | None = None,
    stop_waiting: Callable[[], bool] | None = None,
) -> bool:
    """Wait until every one of ``keys`` is in ``store``: True, or False once ``timeout`` seconds have passed.

    ``waiting_for(seconds_waited)`` says whom we wait for; its text goes to stderr as
    ``torchdoctor: waited 15 s of 300 for …`` while the wait goes on. Errors other than the timeout
    (the store itself went away) are raised. ``on_slow()`` runs once, when the quiet first part of the wait ends;
    then ``stop_waiting()``, asked twice a second, may end the wait early (False is returned).
    """
    started = time.monotonic()
    quiet = min(QUIET_SECONDS, timeout)
    if _wait(store, keys, quiet):
        return True
    if quiet >= timeout:
        return False
    if on_slow is not None:
        on_slow()
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def wait_in_background() -> None:
        try:
            outcome["arrived"] = _wait(_clone(store), keys, timeout - (time.monotonic() - started))
        except Exception as error:  # handed to the waiting thread, which raises it
            outcome["error"] = error
        finally:
            finished.set()

    threading.Thread(target=wait_in_background, name="torchdoctor-store-wait", daemon=True).start()
    next_line = started + FIRST_LINE_SECONDS
    while not finished.wait(0.5):  # short sleeps: Ctrl-C raises KeyboardInterrupt here
        if stop_waiting is not None and stop_waiting():
            return False
        now = time.monotonic()
        if waiting_for is not None and now >= next_line:
            next_line = now + LINE_EVERY_SECONDS
            say(f"waited {now - started:.0f} s of {timeout:g} for {_describe(waiting_for, now - started)}")
    if "error" in outcome:
        raise outcome["error"]
    return bool(outcome.get("arrived"))


def say(line: str) -> None:
    """One ``torchdoctor: …`` line on stderr, flushed at once (other ranks' lines interleave with it)."""
    print(f"torchdoctor: {line}", file=sys.stderr, flush=True)


def _wait(store: Any, keys: list[str], seconds: float) -> bool:
    import torch.distributed as dist

    try:
        store.wait(keys, timedelta(seconds=max(seconds, 0.001)))
    except RuntimeError as error:  # DistStoreError: the timeout
        if isinstance(error, getattr(dist, "DistNetworkError", ())):  # the store went away: not a timeout
            raise
        return False
    return True


def _clone(store: Any) -> Any:
    try:
        return store.clone()
    except (AttributeError, RuntimeError):  # a store that cannot be cloned: share it (it locks per request)
        return store


def _describe(waiting_for: Callable[[float], str], seconds: float) -> str:
    try:
        return waiting_for(seconds)
    except Exception as error:  # a progress line must never end the wait
        return f"the other ranks (could not tell which: {error})"
