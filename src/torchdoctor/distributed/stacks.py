"""Asking a rank where it is: its main thread's Python stack and its last checked collective, via the store.

In debug mode every rank runs one daemon thread that blocks in a store ``wait`` on its own request key
(``torchdoctor/stack/<rank>/ask``): idle, it costs no request at all, so checked collectives pay nothing for it.
A rank that gave up waiting for another writes a question under that key; the other rank's thread answers
with its stack, wherever its main thread is (a store wait, a sleep, a loop of Python code). A rank that does not
answer in a few seconds is dead, has debug mode off, or is stuck in code that holds the GIL: said as such.
"""

from __future__ import annotations

import atexit
import json
import sys
import threading
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from torchdoctor.distributed.waiting import clone_store, wait_shared

ANSWER_SECONDS = 5.0
LOOK_EVERY_SECONDS = 1.0  # on a connection shared with the rank's own requests (a torch that cannot clone)
STACK_FRAMES = 12
_PREFIX = "torchdoctor/stack"

# what this rank last checked, per process group key: (sequence number, operation, call site)
last_checked: dict[str, tuple[int, str, str]] = {}
# or, where set, a function that says it (debug mode's running fingerprints: every collective, not only checked)
last_calls: Callable[[], dict[str, list]] | None = None
_responders: dict[int, threading.Thread] = {}  # rank -> its answering thread
_asked_through: dict[int, Any] = {}  # rank -> the connection that can ask its thread to stop
_lock = threading.Lock()
_STOP = "\0stop"  # the question that ends the answering thread


def start_responder(store: Any, rank: int) -> None:
    """Answer questions about this rank (``ask``) from a daemon thread, from now on; once per process."""
    with _lock:
        thread = _responders.get(rank)
        if thread is not None and thread.is_alive():
            return
        # Its own connection, so that a blocked wait does not hold up the rank's requests; where torch cannot
        # make one, a look once a second on the shared one (a check is one short request).
        clone = clone_store(store)
        thread = threading.Thread(
            target=_answer_forever,
            args=(clone or store, rank, clone is None),
            name="torchdoctor-stack-responder",
            daemon=True,
        )
        _responders[rank] = thread
        _asked_through[rank] = store
        thread.start()
        if len(_responders) == 1:
            atexit.register(stop_responders)


def stop_responders(seconds: float = 2.0) -> None:
    """End the answering threads (the process group is going away, or the process is): each is woken by
    the stop question and given ``seconds`` to end. A thread still blocked in its store ``wait`` when the
    interpreter shuts down ends the process with SIGABRT when that store goes (the rank that hosts it, in a
    job started by hand, exits)."""
    with _lock:
        threads = list(_responders.items())
        _responders.clear()
        asked = dict(_asked_through)
        _asked_through.clear()
    for rank, thread in threads:
        try:
            asked[rank].set(f"{_PREFIX}/{rank}/ask", _STOP)
        except Exception:  # noqa: BLE001 - the store has gone already: the thread has returned with it
            continue
        if thread is not threading.current_thread():
            thread.join(seconds)


def ask_all(
    store: Any, ranks: list[int], question: str, timeout: float = ANSWER_SECONDS
) -> dict[int, dict | None]:
    """``{"stack": text, "last": {group: [seq, operation, site]}}`` from each rank, or None for no answer.

    ``question`` names the occasion (e.g. ``world/12``): ranks asking about the same occasion share the
    answers. All questions go out first, then the answers are awaited within one ``timeout``.
    """
    answers: dict[int, dict | None] = {}
    keys = {rank: f"{_PREFIX}/{rank}/answer/{question}" for rank in ranks}
    for rank, key in keys.items():
        if not store.check([key]):
            store.set(f"{_PREFIX}/{rank}/ask", question)
    deadline = time.monotonic() + timeout
    for rank, key in keys.items():
        answers[rank] = None
        if wait_shared(store, [key], deadline - time.monotonic()):
            try:
                answers[rank] = json.loads(store.get(key))
            except ValueError:
                pass
    return answers


def main_thread_stack(limit: int = STACK_FRAMES, skip: Callable[[str], bool] | None = None) -> str:
    """The main thread's Python stack, innermost frame last, at most ``limit`` frames; ``skip(filename)``
    leaves frames out (torchdoctor's own, where the user's script should be the last shown)."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    if frame is None:
        return "(no main thread)"
    summary = traceback.extract_stack(frame)
    if skip is not None:
        summary = traceback.StackSummary.from_list([f for f in summary if not skip(f.filename)])
    return "".join(traceback.StackSummary.from_list(summary[-limit:]).format()).rstrip()


def _answer_forever(store: Any, rank: int, shared: bool) -> None:
    ask_key = f"{_PREFIX}/{rank}/ask"
    while True:
        try:
            if shared:
                time.sleep(LOOK_EVERY_SECONDS)
                if not store.check([ask_key]):
                    continue
            else:
                store.wait([ask_key], timedelta(days=365))
            question = store.get(ask_key).decode(errors="replace")
            store.delete_key(ask_key)
            if question == _STOP:
                return
            last = dict(last_checked) if last_calls is None else last_calls()
            text = json.dumps({"stack": main_thread_stack(), "last": last})
            store.set(f"{_PREFIX}/{rank}/answer/{question}", text)
        except Exception:  # noqa: BLE001 - the store went away (the job ended): nobody is left to ask
            return
