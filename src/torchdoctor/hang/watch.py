"""Library mode: ``torchdoctor.watch_for_hangs(300)`` in the script, under any launcher.

A thread in each rank watches that rank (`torchdoctor.hang.progress`); the first rank to make no progress for
the timeout asks the others for their stacks through the process group's store (not through a collective,
which would hang too), prints one report, and every rank exits.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import TextIO

from torchdoctor.distributed.ranks import current
from torchdoctor.hang.flight_records import own_digest
from torchdoctor.hang.progress import ProgressSampler, main_frames
from torchdoctor.hang.report import format_report
from torchdoctor.hang.source import Frame
from torchdoctor.hang.stacks import RankStack, stack_dict

_KEY = "torchdoctor/watchdog/"


class HangWatch:
    """What `watch_for_hangs` returns: ``stop()`` it (or leave the ``with`` block) to stop watching."""

    def __init__(self, timeout: float, exit_code: int | None, stream: TextIO | None, collect: float) -> None:
        self.timeout, self.exit_code, self.stream, self.collect = timeout, exit_code, stream, collect
        self.fired = False
        self._sampler = ProgressSampler(min(1.0, timeout / 5), on_progress=self._moved, on_idle=self._idle)

    def start(self) -> HangWatch:
        self._sampler.start()
        return self

    def stop(self) -> None:
        self._sampler.stop()

    def __enter__(self) -> HangWatch:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _moved(self) -> None:
        self.fired = False
        self._answer_if_asked()

    def _idle(self, idle: float) -> None:
        if self._answer_if_asked() or self.fired or idle < self.timeout:
            return
        self.fired = True
        store, rank, world = _store_and_rank()
        own = RankStack(rank, os.getpid(), current().host, main_frames())
        if store is None or world == 1:
            self._finish(format_report([own], self.timeout))
            return
        try:
            first = store.add(_KEY + "asked", 1) == 1
            store.set(f"{_KEY}stack/{rank}", json.dumps({**stack_dict(own), **own_digest(rank)}))
            if not first:
                return self._wait_and_exit(store)
            stacks, records = _read_stacks(store, world, self.collect)
        except Exception as error:  # noqa: BLE001 - the store died with rank 0: report what this rank knows
            self._finish(format_report([own], self.timeout, f"(other ranks unreachable: {error})"))
            return
        self._write(format_report(stacks, self.timeout, records=records))
        try:
            store.set(_KEY + "reported", "1")  # the others exit once the report is out
        except Exception:  # noqa: BLE001 - the store's host may be gone with the job: the report stands without it
            pass
        self._finish("")

    def _answer_if_asked(self) -> bool:
        store, rank, _ = _store_and_rank()
        try:
            if store is None or not store.check([_KEY + "asked"]) or store.check([f"{_KEY}stack/{rank}"]):
                return False
            own = RankStack(rank, os.getpid(), current().host, main_frames())
            store.set(f"{_KEY}stack/{rank}", json.dumps({**stack_dict(own), **own_digest(rank)}))
        except Exception:  # noqa: BLE001 - the store's host may be gone with the job: the report stands without it
            return False
        self._wait_and_exit(store)
        return True

    def _wait_and_exit(self, store) -> None:
        deadline = time.monotonic() + self.collect + 5
        while time.monotonic() < deadline:
            try:
                if store.check([_KEY + "reported"]):
                    break
            except Exception:  # noqa: BLE001 - the store's host may be gone with the job: the report stands without it
                break
            time.sleep(0.2)
        self._finish("")

    def _write(self, report: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(report)
        stream.flush()

    def _finish(self, report: str) -> None:
        if report:
            self._write(report)
        if self.exit_code is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(self.exit_code)  # the main thread is stuck in C code: nothing else ends it


def watch_for_hangs(
    timeout: float, *, exit_code: int | None = 1, stream: TextIO | None = None, collect: float = 10.0
) -> HangWatch:
    """Watch this rank for a hang: no progress (see `torchdoctor.hang.progress`) for ``timeout`` seconds.

    Then the first rank to notice collects every rank's stack through the process group's store (for at most
    ``collect`` seconds), writes one report to ``stream`` (default ``sys.stderr``), and every rank exits with
    ``exit_code`` (``None``: report once and go on). Call it in every rank, after ``init_process_group``.
    It needs the GIL to look: a rank stuck in C code that holds the GIL is only caught by
    ``torchdoctor launch --watchdog``, which asks for the stack with a signal instead::

        torchdoctor.watch_for_hangs(300)
    """
    for name, value in (("timeout", timeout), ("collect", collect)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"watch_for_hangs: {name}={value!r} must be a number of seconds, e.g. 600")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"watch_for_hangs: {name}={value!r} must be a positive number of seconds")
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise TypeError(f"watch_for_hangs: exit_code={exit_code!r} must be a whole number or None")
    while _watching:  # a second call replaces the first rather than adding a second watcher
        _watching.pop().stop()
    _watching.append(HangWatch(timeout, exit_code, stream, collect).start())
    return _watching[-1]


_watching: list[HangWatch] = []


def _store_and_rank():
    dist = sys.modules.get("torch.distributed")  # not imported: there is no process group to ask
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            from torch.distributed.distributed_c10d import _get_default_store

            return _get_default_store(), dist.get_rank(), dist.get_world_size()
    except Exception:  # noqa: BLE001 - no usable store: this rank reports alone
        pass
    info = current()
    return None, info.rank, info.world_size


def _read_stacks(store, world: int, collect: float) -> tuple[list[RankStack], dict]:
    """Every rank's stack from the store, and its flight-recorder record where it sent one."""
    from torchdoctor.explain.flight_recorder.digest import from_digest

    deadline = time.monotonic() + collect
    keys = {rank: f"{_KEY}stack/{rank}" for rank in range(world)}
    while time.monotonic() < deadline and not store.check(list(keys.values())):
        time.sleep(0.2)
    stacks, records = [], {}
    for rank, key in keys.items():
        if not store.check([key]):
            stacks.append(RankStack(rank, note=f"did not answer within {collect:g}s"))
            continue
        try:
            data = json.loads(store.get(key))
            frames = [Frame(*f) for f in data["frames"]]
            stacks.append(RankStack(data["rank"], data["pid"], data["host"], frames))
        except (ValueError, TypeError, KeyError) as error:
            stacks.append(RankStack(rank, note=f"its stack did not read: {error!r}"))
            continue
        try:
            if data.get("record"):
                records[data["rank"]] = from_digest(data["record"])
            elif data.get("no_record"):
                stacks[-1].evidence.append(f"it sent no flight-recorder record: {data['no_record']}")
        except (ValueError, TypeError, KeyError) as error:
            stacks[-1].evidence.append(f"its flight-recorder digest did not read: {error!r}")
    return stacks, records
