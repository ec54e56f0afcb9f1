"""Rank-aware logging: log once from the main process, or from every rank in rank order.

``get_logger(name)`` wraps ``logging.getLogger(name)``; each call takes ``main_process_only=True`` (only rank 0
logs) and ``in_order=False``. ``in_order=True`` makes every rank log, rank 0 first: rank *r* waits for rank
*r-1*'s "done" key in the process group's store, logs, then sets its own; rank 0 waits for the last rank's key
of the previous ordered message. That is no collective at all, and four store requests per rank per message:
every rank takes part whatever its log level (so a rank that filters the message cannot leave the others
waiting), a rank waiting more than a few seconds says on stderr for whom, Ctrl-C interrupts it, and a rank that
never logs the message delays the next one by at most the debug timeout (``TORCHDOCTOR_DEBUG_TIMEOUT``).

The ranks count their ordered messages, so a rank that skips one is a message behind from there on. Each
"done" key holds the message's call site and text, and the rank that reads it compares: a rank whose turn
comes for a message the previous rank did not log (it skipped that one, or logged one this rank skipped)
says so on stderr, once, naming both messages and where each was logged.

Every line starts with ``[RANK n] `` exactly as accelerate writes it, with one process too. The level comes
from ``log_level``, else ``TORCHDOCTOR_LOG_LEVEL``, else accelerate's ``ACCELERATE_LOG_LEVEL``. The root logger
is never touched: give your logger a handler (``logging.basicConfig(...)``) as usual.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from torchdoctor import environment
from torchdoctor.distributed import ranks

_KEY_PREFIX = "torchdoctor/log"
LEVEL_VARIABLES = ("TORCHDOCTOR_LOG_LEVEL", "ACCELERATE_LOG_LEVEL")  # the first one set wins
_ordered_messages = 0  # in_order messages logged so far by this process; the same on every rank
_previous_ordered = ""  # what this process's previous in-order message was (`_which_message`)
_out_of_step: list[str] = []  # the warning given when the ranks' in-order messages stopped matching
# stacklevel: Python >= 3.11 counts only the frames outside logging itself; 3.10 counts every frame from the
# one that called Logger.log, then skips logging's own. Between the user and Logger.log there are only our
# frames and at most one of logging's (LoggerAdapter.info) just above the user's, so one count serves both.


class RankLogger(logging.LoggerAdapter):
    """A `logging.LoggerAdapter` whose methods take ``main_process_only`` and ``in_order``."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__(logger, {})
        self._warned: set = set()

    def log(
        self,
        level: int,
        msg: object,
        *args: Any,
        main_process_only: bool = True,
        in_order: bool = False,
        **kwargs: Any,
    ) -> None:
        """Log ``msg`` on rank 0 only (``main_process_only``), or on every rank in rank order (``in_order``)."""
        # the user's frame, the one above this method (and LoggerAdapter.info)
        kwargs.setdefault("stacklevel", 2)
        if in_order:
            kwargs["stacklevel"] += 1
            self._log_in_order(level, msg, args, kwargs)
            return
        if not self.isEnabledFor(level):
            return
        info = _rank_info()
        if main_process_only and not info.is_main:
            return
        self.logger.log(level, _prefixed(msg, info), *args, **kwargs)

    def process(self, msg: object, kwargs: Any) -> tuple[object, Any]:
        """``msg`` with this rank's ``[RANK n] `` prefix, as accelerate's adapter writes it."""
        return _prefixed(msg, _rank_info()), kwargs

    def warning_once(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """``warning()``, but a given message (with its arguments) is logged once per process."""
        key = (str(msg), args)
        if key not in self._warned:
            self._warned.add(key)
            kwargs.setdefault("stacklevel", 3)
            self.log(logging.WARNING, msg, *args, **kwargs)

    def _log_in_order(self, level: int, msg: object, args: tuple, kwargs: dict) -> None:
        global _ordered_messages, _previous_ordered
        info = _rank_info()
        store = _store() if info.distributed else None
        if store is None:  # nothing to order against: one process, or no process group yet
            if self.isEnabledFor(level):
                self.logger.log(level, _prefixed(msg, info), *args, **kwargs)
            return
        _ordered_messages += 1
        seq, last = _ordered_messages, info.world_size - 1
        which = _which_message(msg)
        # rank r waits for rank r-1 of this message; rank 0 for the last rank of the previous one, so that
        # one message's lines all come out before the next message's
        if info.rank > 0:
            before, mine, other = f"{_KEY_PREFIX}/{seq}/{info.rank - 1}", which, info.rank - 1
        elif seq > 1:
            before, mine, other = f"{_KEY_PREFIX}/{seq - 1}/{last}", _previous_ordered, last
        else:
            before = None
        if before:
            if _wait_for(store, before, other, seq - (info.rank == 0), info.rank):
                _compare(
                    store.get(before).decode(errors="replace"), mine, other, seq - (info.rank == 0), info
                )
        if self.isEnabledFor(level):  # checked after the wait: a filtered rank still passes the turn on
            self.logger.log(level, _prefixed(msg, info), *args, **kwargs)
            for handler in self.logger.handlers:
                handler.flush()
        store.set(f"{_KEY_PREFIX}/{seq}/{info.rank}", which)
        _previous_ordered = which
        if before:  # the key was only ever for this rank to read
            store.delete_key(before)


def _which_message(msg: object) -> str:
    """``"train.py:31 'done'"``: where the user logged ``msg`` (the first frame outside logging and this
    module), and its text before formatting; the same on every rank for the same message."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in (__file__, logging.__file__):
        frame = frame.f_back
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"
    text = str(msg)
    return f"{where} {text[:80]!r}" if len(text) <= 80 else f"{where} {text[:77]!r}..."


def _compare(theirs: str, mine: str, rank: int, message: int, info: ranks.RankInfo) -> None:
    """Say once, on stderr, that rank ``rank``'s in-order message number ``message`` is not this rank's."""
    if theirs == mine or _out_of_step:
        return
    from torchdoctor.distributed.waiting import say

    _out_of_step.append(
        f"in-order message #{message} is {theirs} on rank {rank} but {mine} on rank {info.rank}: one of them "
        "skipped an in-order message the other logged, so from here on their lines may not come out in rank "
        "order. Log an in_order message on every rank (a rank that should stay quiet can raise its log level), "
        "or log it with in_order=False"
    )
    say(_out_of_step[0])


def get_logger(name: str, log_level: str | int | None = None) -> RankLogger:
    """A logger for ``name`` that knows about ranks; level from ``log_level``, else ``TORCHDOCTOR_LOG_LEVEL``,
    else ``ACCELERATE_LOG_LEVEL``.

    Example::

        logger = get_logger(__name__, log_level="INFO")
        logger.info("starting")                              # rank 0 only
        logger.info("my shard: %s", shard, main_process_only=False)
        logger.info("loss %.3f", loss, in_order=True)        # every rank, rank 0 first
    """
    where = "log_level"
    level: str | int | None = log_level
    if level is None:
        where = next((v for v in LEVEL_VARIABLES if os.environ.get(v, "").strip()), "")
        if where:
            environment.require_valid([where])  # the words `check` uses for it (dist.environment)
        level = os.environ.get(where, "").strip() or None
    logger = logging.getLogger(name)
    if level is not None:
        try:
            if isinstance(level, bool) or (isinstance(level, int) and level < 0):
                raise ValueError(level)  # setLevel takes these silently, and they mean nothing
            logger.setLevel(level.upper() if isinstance(level, str) else level)
        except (ValueError, TypeError):
            raise ValueError(
                f"{where}={level!r} is not a log level; use DEBUG, INFO, WARNING, ERROR or CRITICAL"
            ) from None
    return RankLogger(logger)


def _rank_info() -> ranks.RankInfo:
    ranks.say_if_alone_under_accelerate()  # accelerate left this rank alone: said before its first line
    # No process group can exist before torch.distributed is imported; avoid importing torch to log a line.
    if "torch.distributed" in sys.modules:
        return ranks.current()
    return ranks.from_environment()


def _store():
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        try:
            return dist.distributed_c10d._get_default_store()
        except (RuntimeError, ValueError, AttributeError):  # e.g. the MPI backend has no store
            return None
    return None


def _wait_for(store, key: str, rank: int, message: int, me: int) -> bool:
    """Wait for rank ``rank``'s turn key ``key``; False, having said so on stderr, when it never came."""
    from torchdoctor.distributed.debug_settings import debug_timeout
    from torchdoctor.distributed.waiting import say, wait_for_keys

    timeout = debug_timeout()

    def waiting_for(seconds: float) -> str:
        return f"rank {rank} to log in-order message #{message} before rank {me} logs its own"

    if not wait_for_keys(store, [key], timeout, waiting_for):  # it skipped this message: log anyway
        say(
            f"rank {rank} did not log in-order message #{message} within {timeout:g} s "
            f"(TORCHDOCTOR_DEBUG_TIMEOUT); rank {me} logs without waiting for it"
        )
        return False
    return True


def _prefixed(msg: object, info: ranks.RankInfo) -> object:
    return f"[RANK {info.rank}] {msg}"
