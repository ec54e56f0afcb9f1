"""Waiting in ``init_process_group`` for the other ranks: named on stderr, bounded, and stopped by Ctrl-C.

Started by hand (``RANK=0 WORLD_SIZE=2 MASTER_ADDR=… MASTER_PORT=… python train.py``), a rank waits in
``init_process_group`` for ranks that may never come: torch's rendezvous blocks in C++ for its own timeout (30
minutes for gloo), says nothing, and Python cannot act on Ctrl-C meanwhile. In debug mode the call runs in a daemon
thread while the calling thread wakes twice a second (so Ctrl-C lands), says on stderr whom it waits for, and
raises at the debug-mode timeout (or the call's own ``timeout=``, when shorter) naming them. Under torchrun or
``torchdoctor launch``, whose agent gathered every rank before the script started, and with an ``init_method`` or
``store`` of the user's own, the call is made as it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from torchdoctor.distributed import waiting
from torchdoctor.distributed.raising import raise_problem
from torchdoctor.rank_list import who


def started_by_hand(kwargs: Mapping[str, Any], args: tuple, environ: Mapping[str, str]) -> bool:
    """Whether this ``init_process_group(*args, **kwargs)`` meets its ranks through the ``MASTER_ADDR`` /
    ``MASTER_PORT`` variables with nothing that gathered the ranks first (no torchrun agent)."""
    init_method = kwargs.get("init_method", args[1] if len(args) > 1 else None)
    if init_method not in (None, "env://") or kwargs.get("store") is not None:
        return False
    if environ.get("TORCHELASTIC_RUN_ID") or not environ.get("MASTER_PORT"):
        return False
    return _world_size(kwargs, environ) > 1


def init_waiting_aloud(
    init_process_group: Callable, args: tuple, kwargs: dict, timeout: float, environ: Mapping[str, str]
) -> Any:
    """``init_process_group(*args, **kwargs)`` in a daemon thread; this thread waits in short sleeps, says
    whom it waits for after a few seconds and every ten, and raises `DistributedOperationException` naming them after
    ``timeout`` seconds (or the call's own ``timeout=`` when shorter)."""
    own = kwargs.get("timeout")
    bound = f"TORCHDOCTOR_DEBUG_TIMEOUT={timeout:g}"
    if own is not None and hasattr(own, "total_seconds") and own.total_seconds() < timeout:
        timeout, bound = own.total_seconds(), f"init_process_group(timeout={own.total_seconds():g} s)"
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def join() -> None:
        try:
            outcome["result"] = init_process_group(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread, which raises it
            outcome["error"] = error
        finally:
            finished.set()

    threading.Thread(target=join, name="torchdoctor-init-process-group", daemon=True).start()
    started = time.monotonic()
    next_line = started + waiting.FIRST_LINE_SECONDS
    while not finished.wait(0.5):  # short sleeps: Ctrl-C raises KeyboardInterrupt here
        now = time.monotonic()
        if now - started >= timeout:
            said = _waited_for(kwargs, environ, now - started, timeout, bound)
            raise_problem(f"{said}; none came: {_fix(kwargs, environ)}")
        if now >= next_line:
            next_line = now + waiting.LINE_EVERY_SECONDS
            waiting.say(_waited_for(kwargs, environ, now - started, timeout, bound))
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("result")


def _waited_for(
    kwargs: Mapping[str, Any], environ: Mapping[str, str], waited: float, timeout: float, bound: str
) -> str:
    rank, world = _rank(kwargs, environ), _world_size(kwargs, environ)
    others = [r for r in range(world) if r != rank]
    # an unset MASTER_ADDR is named as such: torch reads it as an error, not as 127.0.0.1
    where = f"{environ.get('MASTER_ADDR') or '(MASTER_ADDR empty)'}:{environ.get('MASTER_PORT')}"
    return (
        f"rank {rank} of {world} waited {waited:.0f} s of {timeout:g} in init_process_group for "
        f"{who(others)} at {where} (MASTER_ADDR:MASTER_PORT; {bound})"
    )


def _fix(kwargs: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    world = _world_size(kwargs, environ)
    return (
        f"start every rank, 0 to {world - 1}, each with its own RANK and the same MASTER_ADDR, MASTER_PORT and "
        f"WORLD_SIZE={world}, or let a launcher start them all: torchrun --nproc-per-node {world} SCRIPT"
    )


def _rank(kwargs: Mapping[str, Any], environ: Mapping[str, str]) -> int:
    return _number(kwargs.get("rank"), environ.get("RANK"), 0)


def _world_size(kwargs: Mapping[str, Any], environ: Mapping[str, str]) -> int:
    return _number(kwargs.get("world_size"), environ.get("WORLD_SIZE"), 1)


def _number(given: Any, variable: str | None, default: int) -> int:
    if isinstance(given, int) and given >= 0:
        return given
    try:
        return int(variable) if variable is not None else default
    except ValueError:  # torch refuses it in its own words
        return default
