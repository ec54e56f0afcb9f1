"""Waiting for keys in the job's store without going silent or deaf to Ctrl-C.

A store ``wait`` blocks in C++: while it does, Python cannot act on Ctrl-C. So a wait first blocks for at most
``QUIET_SECONDS`` (the normal case: one request, no thread); beyond that the rest of the wait moves to a daemon
thread on its own connection, while this thread wakes twice a second (so Ctrl-C lands) and prints on stderr,
after ``FIRST_LINE_SECONDS`` and then every ``LINE_EVERY_SECONDS``, whom it is waiting for.

A torch whose stores cannot be cloned (2.4 and older) has one connection per process, and a blocked ``wait``
holds it: every other request of the process (the check that spots a mismatch among them) would queue behind it
until the wait timed out; and a ``wait`` that times out there leaves a warning per call. There the whole wait is
made of ``check`` requests on this thread, closer together at first (an answer usually comes in milliseconds).
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

QUIET_SECONDS = 2.0
FIRST_LINE_SECONDS = 5.0
LINE_EVERY_SECONDS = 10.0
POLL_PAUSE_SECONDS = 0.1  # the longest pause between two checks, on a connection that cannot be cloned
# The lines a wait prints while it goes on, which say that nothing moved: ours (`say`'s, below), and c10d's
# warning when a store's wait times out (the quiet first part of ours); after the prefix a launcher may give a
# rank's line ([rank0]:, [default0]:). `torchdoctor launch --watchdog` does not take them for progress.
WAIT_LINE = re.compile(
    rb"^(?:\[[^\]\n]*\]:)?(?:torchdoctor: waited \d+ s of |\[[^\]\n]*socket\.cpp:\d+\] \[c10d\] waitForInput: ).*$",
    re.MULTILINE,
)


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
    if not can_clone(store):
        return _poll(store, keys, started, timeout, waiting_for, on_slow, stop_waiting)
    quiet = min(QUIET_SECONDS, timeout)
    if _wait(store, keys, quiet):
        return True
    if quiet >= timeout:
        return False
    own_connection = clone_store(store)  # only now: a connection per wait would cost every collective one
    if own_connection is None:  # a store of a kind that cannot be cloned after all: checks for the rest
        return _poll(store, keys, started, timeout, waiting_for, on_slow, stop_waiting)
    if on_slow is not None:
        on_slow()
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def wait_in_background() -> None:
        try:
            outcome["arrived"] = _wait(own_connection, keys, timeout - (time.monotonic() - started))
        except Exception as error:  # noqa: BLE001 - handed to the waiting thread, which raises it
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


def _poll(
    store: Any,
    keys: list[str],
    started: float,
    timeout: float,
    waiting_for: Callable[[float], str] | None = None,
    on_slow: Callable[[], None] | None = None,
    stop_waiting: Callable[[], bool] | None = None,
) -> bool:
    """`wait_for_keys` made of ``check`` requests, for a store this torch cannot clone."""
    next_line, pause, slow = started + FIRST_LINE_SECONDS, 0.001, False
    while True:
        if store.check(keys):
            return True
        now = time.monotonic()
        if now - started >= timeout:
            return False
        if not slow and now - started >= QUIET_SECONDS:
            slow = True
            if on_slow is not None:
                on_slow()
        if slow and stop_waiting is not None and stop_waiting():
            return False
        if waiting_for is not None and now >= next_line:
            next_line = now + LINE_EVERY_SECONDS
            say(f"waited {now - started:.0f} s of {timeout:g} for {_describe(waiting_for, now - started)}")
        time.sleep(min(pause, max(timeout - (now - started), 0)))
        pause = min(pause * 2, POLL_PAUSE_SECONDS)


def wait_shared(store: Any, keys: list[str], seconds: float) -> bool:
    """Wait up to ``seconds`` for ``keys``: a plain ``wait`` where the store can be cloned, else ``check``s."""
    if not can_clone(store):
        return _poll(store, keys, time.monotonic(), seconds)
    return _wait(store, keys, seconds)


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


def can_clone(store: Any) -> bool:
    """Whether this torch's store has ``clone`` (2.5 and newer): asked without opening a connection."""
    return callable(getattr(store, "clone", None))


def clone_store(store: Any) -> Any:
    """A second connection to ``store`` (``store.clone()``), or None where this torch cannot make one."""
    try:
        return store.clone()
    except (AttributeError, RuntimeError, TypeError):  # no clone (torch 2.4), or a store kind that lacks it
        return None


def _describe(waiting_for: Callable[[float], str], seconds: float) -> str:
    try:
        return waiting_for(seconds)
    except Exception as error:  # noqa: BLE001 - a progress line must never end the wait
        return f"the other ranks (could not tell which: {error})"
