"""Turning the straggler watch on in a worker: ``torchdoctor launch --stragglers`` does it in every worker;
any other launcher calls `watch_for_stragglers` at the top of the script.

Every rank records its steps (`record`, `hooks`) and sets one store key per window once the process group
exists (`publisher`, in a thread of its own). Global rank 0 starts the judge (`judge`: a process of its own
that reads the windows, `aggregate`, and judges them, `verdict`), which says a verdict line on rank 0's stderr
when a rank holds the others back for a sustained stretch; where the job's store cannot be reached from
another process (not a TCPStore), or the output goes to a stream in memory, rank 0 judges in a thread of its
own instead. At the end the judge says a summary per rank and, given a folder, writes ``stragglers.json``
(the findings) and ``stragglers.png`` (the picture) there, and keeps the windows as read in
``stragglers-windows.jsonl`` (to judge the run again later) (`results`).
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchdoctor.stragglers import hooks, judge
from torchdoctor.stragglers.aggregate import Aggregator
from torchdoctor.stragglers.publisher import Publisher
from torchdoctor.stragglers.record import KEY_PREFIX, WINDOW, StepRecord, end_key, window_key
from torchdoctor.stragglers.results import WINDOWS_NAME, device_key, report

ENABLED_VARIABLE = "TORCHDOCTOR_STRAGGLERS"
DIR_VARIABLE = "TORCHDOCTOR_STRAGGLERS_DIR"
# ENABLED_VARIABLE's value for "where its cost allows" (``launch --watchdog``): on where rank 0's judge gets a
# process and a core of its own, so that the ranks pay only the hooks; rank 0 decides for every rank
SPARE_CORE = "spare-core"
DECISION_KEY = f"{KEY_PREFIX}/on"

_state: dict[str, Any] = {}


def stragglers_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``TORCHDOCTOR_STRAGGLERS`` asks for the watch (``1``, ``true``, ``yes``, ``on``, or
    `SPARE_CORE`: where a core is spare for the judge)."""
    return _asked(environ) in ("1", "true", "yes", "on", SPARE_CORE)


def only_with_a_spare_core(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the watch was asked for only where rank 0's judge can have a core of its own (`SPARE_CORE`)."""
    return _asked(environ) == SPARE_CORE


def _asked(environ: Mapping[str, str] | None) -> str:
    return (os.environ if environ is None else environ).get(ENABLED_VARIABLE, "").strip().lower()


def watch_for_stragglers(
    output_dir: str | os.PathLike | None = None,
    window: int = WINDOW,
    stream=None,
    measure_devices: bool = True,
    spare_core_only: bool = False,
) -> None:
    """Watch this rank's steps and, on global rank 0, name the rank that holds the others back, and why.

    Call it once in every rank, before the training loop (before or after ``init_process_group``); nothing
    else in the script changes. ``output_dir`` (default ``TORCHDOCTOR_STRAGGLERS_DIR``) receives
    ``stragglers.json`` and ``stragglers.png`` at the end (and the raw windows as they were judged,
    ``stragglers-windows.jsonl``); verdicts and the summary go to ``stream``
    (default stderr). With ``measure_devices`` every rank also measures its device once (a short matmul and a
    copy, `torchdoctor.gpu_balance.measure_device`) and the summary says which rank's device holds the run
    back (``gpu.balance``). With ``spare_core_only`` (``launch --watchdog``), the watch stays on only where
    rank 0's judge can run in a process of its own on a core beyond one per rank: there the ranks pay only the
    hooks (~0.1 ms of CPU per step); rank 0 decides at its first window, for every rank, and elsewhere every
    rank takes its hooks off. Idempotent.

    Example::

        import torchdoctor
        torchdoctor.watch_for_stragglers("runs/today")
    """
    if _state:
        return
    if not isinstance(window, int) or window < 3:
        raise ValueError(f"window={window!r}: give a whole number of steps, at least 3")
    directory = output_dir if output_dir is not None else os.environ.get(DIR_VARIABLE) or None
    record = StepRecord(window)
    record.publish = _publish
    _state.update(record=record, dir=directory, stream=stream, store=None, rank=None, aggregator=None)
    _state["measure"] = measure_devices
    _state["spare_core_only"] = spare_core_only
    hooks.install(record)  # torch imported: the judge started early is a fork that has it
    _finish_before_the_group_goes()
    _start_the_judge_early(os.environ)
    atexit.register(finish)


def _finish_before_the_group_goes() -> None:
    """Finish (publish the last steps, say the summary) when the script destroys the default process group:
    at exit the group is gone, and a run shorter than one window had not found the store yet, so it said
    nothing at all. Scripts call ``dist.destroy_process_group()`` or import it from torch.distributed."""
    import torch.distributed as dist

    if not dist.is_available():
        return
    from torch.distributed import distributed_c10d

    destroy = dist.destroy_process_group  # torch's, or another wrapper of ours (hang/worker's count)
    if getattr(destroy, "finishes_stragglers", False):
        return

    def destroy_process_group(group=None):
        if group is None or group is distributed_c10d.GroupMember.WORLD:
            finish()
        return destroy(group)

    destroy_process_group.finishes_stragglers = True  # type: ignore[attr-defined]
    destroy_process_group.__wrapped__ = destroy  # type: ignore[attr-defined]
    if distributed_c10d.destroy_process_group is destroy:
        distributed_c10d.destroy_process_group = destroy_process_group
    dist.destroy_process_group = destroy_process_group


def _start_the_judge_early(environ: Mapping[str, str]) -> None:
    """Start rank 0's judge now, where the launcher says this is rank 0 of several: a fork of this process
    before the script has built anything (`judge.start`), whose start-up costs nothing, over before the first
    steps are taken as the ranks' usual (a fresh interpreter started later slowed a rank while they were)."""
    try:
        world_size = int(environ.get("WORLD_SIZE", "1"))
    except ValueError:  # the process group will refuse it in its own words
        return
    first = environ.get("RANK") == "0" and world_size > 1 and _a_core_to_spare(environ, world_size)
    descriptor = _descriptor(_state["stream"] or sys.stderr)
    if first and descriptor is not None:
        try:
            _state["judge"] = judge.start(_state["dir"], descriptor)
        except OSError:  # tried again, and said, once the process group exists
            pass


def _connect() -> bool:
    """Find the job's store once the default process group exists; start rank 0's judge."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return False
    try:
        store, address = _windows_store(dist, dist.distributed_c10d._get_default_store())
        if _state["spare_core_only"] and not _judge_gets_a_core(
            store, address, dist.get_rank(), dist.get_world_size()
        ):
            return False
    except (RuntimeError, ValueError, AttributeError):  # e.g. MPI has no store: nothing to publish to
        if _state["spare_core_only"]:
            _stand_down()
        return False
    _state["store"], _state["rank"] = store, dist.get_rank()
    if _state["measure"] and dist.get_world_size() > 1:
        _measure_device(store, _state["rank"], _state["record"].host)
    if _state["rank"] == 0 and dist.get_world_size() > 1:
        _start_judging(store, address, dist.get_world_size())
    return True


def _judge_gets_a_core(store: Any, address: tuple[str, int, str] | None, rank: int, world_size: int) -> bool:
    """Whether a watch asked for `spare_core_only` goes on: rank 0 decides (its judge can have a process and a
    core of its own) and sets it under `DECISION_KEY`; the other ranks look for it at each window until it is
    there (holding their windows meanwhile: `_publish`). Where it is off, this rank stands down."""
    if rank == 0:
        descriptor = _descriptor(_state["stream"] or sys.stderr)
        on = world_size > 1 and _judge_can_have_a_process(address, descriptor, world_size)
        store.set(DECISION_KEY, "1" if on else "0")
    elif store.check([DECISION_KEY]):
        on = store.get(DECISION_KEY) == b"1"
    else:
        return False
    if not on:
        _stand_down()
    return on


def _stand_down() -> None:
    """The watch is off in this rank: its hooks come off (the optimizer's step hook, from inside which this
    may run, does nothing until `finish` takes it off) and a judge started early stops."""
    _state["off"] = True
    _state.pop("held", None)
    hooks.retire()
    if _state.get("judge") is not None:
        judge.stop(_state.pop("judge"))


def _windows_store(dist: Any, default: Any) -> tuple[Any, tuple[str, int, str] | None]:
    """The store the windows go to, and where another process finds them (host, port, prefix): the job's
    TCPStore under a prefix of this run's own (a restart under torchrun gets a new one), or the default
    group's store, which no other process can reach, where the job's store is not a TCPStore."""
    raw = default
    while isinstance(raw, dist.PrefixStore):  # the default group's, torchrun's attempt's
        raw = getattr(raw, "underlying_store", None)  # None in a torch too old to show it
    if not isinstance(raw, dist.TCPStore):
        return default, None
    run = os.environ.get("TORCHELASTIC_RUN_ID", "")
    prefix = f"torchdoctor/{run}/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"
    return dist.PrefixStore(prefix, raw), (raw.host, raw.port, prefix)


def _start_judging(store: Any, address: tuple[str, int, str] | None, world_size: int) -> None:
    """Judge the windows in a process of its own where it can reach the store, write where this process would
    and have a core of its own (`torchdoctor.stragglers.judge`), else in a thread of this process."""
    process = _state.pop("judge", None)
    descriptor = _descriptor(_state["stream"] or sys.stderr)
    if _judge_can_have_a_process(address, descriptor, world_size):
        try:
            process = process or judge.start_fresh(_state["dir"], descriptor)  # not rank 0's memory now
            host, port, prefix = address
            judge.connect(process, host, port, prefix, world_size)
            _state["judge"] = process
            return
        except OSError as error:
            _say(f"torchdoctor: stragglers: could not start the judge process ({error}); judging in rank 0")
    if process is not None:
        judge.stop(process)
    kept = Path(_state["dir"]) / WINDOWS_NAME if _state["dir"] else None
    aggregator = Aggregator(store, world_size, _state["stream"], kept)
    aggregator.start()
    _state["aggregator"] = aggregator


def _judge_can_have_a_process(
    address: tuple[str, int, str] | None, descriptor: int | None, world_size: int
) -> bool:
    """Whether rank 0's judge can run in a process of its own: it reaches the store (``address``), writes where
    rank 0 would (``descriptor``) and has a core beyond one per rank."""
    return address is not None and descriptor is not None and _a_core_to_spare(os.environ, world_size)


def _a_core_to_spare(environ: Mapping[str, str], world_size: int) -> bool:
    """Whether rank 0 may use a core beyond one per rank on its machine (``LOCAL_WORLD_SIZE``, else the world
    size): the judge gets a process of its own only there. Where the ranks have every core (this project's
    2-core VM with 2 ranks), an extra process that wakes twice a second costs them more than the thread does:
    12 false alarms in 8,000 healthy steps against 4 with the thread, runs alternating at load 2-9."""
    try:
        local = int(environ.get("LOCAL_WORLD_SIZE", world_size))
    except ValueError:
        local = world_size
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores > local


def _descriptor(stream: Any) -> int | None:
    """The file descriptor behind ``stream``, or None where it has none (a stream in memory)."""
    try:
        stream.flush()
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _measure_device(store: Any, rank: int, host: str) -> None:
    """Measure this rank's device and set its figures; measured again at the end of the run, the better of
    the two counts, so that a moment of another process's load on a shared machine is not taken for a slow
    device."""
    from torchdoctor.gpu_balance import measure_device

    try:
        figures = measure_device()
    except RuntimeError as error:  # a device out of memory: the balance is left out, the watch goes on
        _say(f"torchdoctor: stragglers: could not measure rank {rank}'s device: {str(error).splitlines()[0]}")
        return
    before = _state.get("device")
    if before is not None:
        figures = {key: max(figures[key], before[key]) if key in ("gflops", "copy_gbps") else figures[key]
                   for key in figures}  # fmt: skip
    _state["device"] = figures
    store.set(device_key(rank), json.dumps({"rank": rank, "host": host, **figures}))


# windows a rank holds while it waits for rank 0's decision (`spare_core_only`): rank 0 decides at its own first
# window, so a rank a little ahead of it would lose its first (its summary would count 10 steps fewer)
HELD = 3


def _publish(window: int, payload: dict[str, Any]) -> None:
    """A full window, on the training thread: connect to the store the first time (once the process group
    exists), then hand the window to the publisher thread."""
    if _state.get("off"):
        return
    if _state.get("store") is None and not _connect():
        if _state["spare_core_only"] and not _state.get("off"):  # not decided yet: held, the latest HELD
            _state["held"] = [*_state.get("held", []), (window, payload)][-HELD:]
        return
    publisher = _state.get("publisher")
    if publisher is None:
        publisher = _state["publisher"] = Publisher(_set_window, _say)
    for held in _state.pop("held", []):
        publisher.put(*held)
    publisher.put(window, payload)


def _set_window(window: int, text: str) -> None:
    """Set window ``window``'s JSON text under this rank's key (in the publisher's thread)."""
    _state["store"].set(window_key(window, _state["rank"]), text)


def finish() -> None:
    """The run is over: publish the last steps; on rank 0 judge what is left, print the summary and write
    the files. Called by the launcher's bootstrap (and at exit); does nothing the second time."""
    record = _state.get("record")
    if record is None or _state.get("finished"):
        return
    _state["finished"] = True
    hooks.uninstall()
    record.flush()
    store = _state.get("store")
    if store is None and _state.get("rank") is None and not _state.get("off") and _connect():
        store = _state.get("store")  # fewer steps than one window: the store is found now, while the group is
    if store is None:
        if _state.get("judge") is not None:  # started early, never told where the windows are
            judge.stop(_state.pop("judge"))
        return
    publisher = _state.get("publisher")
    if publisher is None or (publisher.drain() and not publisher.failed):  # else the store does not answer
        _say_done(store, record)
    if _state.get("judge") is not None:
        judge.finish(_state["judge"], _say)
    aggregator = _state.get("aggregator")
    if aggregator is not None:
        report(aggregator, aggregator.finish(), _state.get("dir"), _say)


def _say_done(store: Any, record: StepRecord) -> None:
    """Set this rank's device figures, measured again, and its end mark."""
    if _state.get("device") is not None:
        try:
            _measure_device(store, _state["rank"], record.host)
        except Exception:  # noqa: BLE001 - the store is gone: the first figures stand
            pass
    try:
        store.set(end_key(_state["rank"]), json.dumps({"last_window": record.latest, "steps": record.steps}))
    except Exception:  # noqa: BLE001 - the store is gone: rank 0 says whom it missed
        pass


def _say(text: str) -> None:
    stream = _state.get("stream") or sys.stderr
    stream.write(text + "\n")
    stream.flush()
