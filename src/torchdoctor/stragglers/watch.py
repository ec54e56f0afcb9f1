"""Turning the straggler watch on in a worker: ``torchdoctor launch --stragglers`` does it in every worker;
any other launcher calls `watch_for_stragglers` at the top of the script.

Every rank records its steps (`record`, `hooks`) and sets one store key per window once the process group
exists (`publisher`, in a thread of its own); global rank 0 judges the windows (`aggregate`, `verdict`) and
prints a verdict line on stderr when a rank holds the others back for a sustained stretch. At the end rank 0 prints a summary per rank and, given a
folder, writes ``stragglers.json`` (the findings) and ``stragglers.png`` (the picture) there, and keeps the
windows as read in ``stragglers-windows.jsonl`` (to judge the run again later).
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchdoctor.stragglers import hooks
from torchdoctor.stragglers.aggregate import Aggregator
from torchdoctor.stragglers.publisher import Publisher
from torchdoctor.stragglers.record import KEY_PREFIX, WINDOW, StepRecord, end_key, window_key

ENABLED_VARIABLE = "TORCHDOCTOR_STRAGGLERS"
DIR_VARIABLE = "TORCHDOCTOR_STRAGGLERS_DIR"
JSON_NAME, PLOT_NAME, WINDOWS_NAME = "stragglers.json", "stragglers.png", "stragglers-windows.jsonl"

_state: dict[str, Any] = {}


def stragglers_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``TORCHDOCTOR_STRAGGLERS`` asks for the watch (``1``, ``true``, ``yes``, ``on``)."""
    environ = os.environ if environ is None else environ
    return environ.get(ENABLED_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


def watch_for_stragglers(
    output_dir: str | os.PathLike | None = None,
    window: int = WINDOW,
    stream=None,
    measure_devices: bool = True,
) -> None:
    """Watch this rank's steps and, on global rank 0, name the rank that holds the others back, and why.

    Call it once in every rank, before the training loop (before or after ``init_process_group``); nothing
    else in the script changes. ``output_dir`` (default ``TORCHDOCTOR_STRAGGLERS_DIR``) receives
    ``stragglers.json`` and ``stragglers.png`` at the end (and the raw windows as they were judged,
    ``stragglers-windows.jsonl``); verdicts and the summary go to ``stream``
    (default stderr). With ``measure_devices`` every rank also measures its device once (a short matmul and a
    copy, `torchdoctor.gpu_balance.measure_device`) and the summary says which rank's device holds the run
    back (``gpu.balance``). Idempotent.

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
    hooks.install(record)
    atexit.register(finish)


def _connect() -> bool:
    """Find the job's store once the default process group exists; start rank 0's reader."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return False
    try:
        store = dist.distributed_c10d._get_default_store()
    except (RuntimeError, ValueError, AttributeError):  # e.g. MPI has no store: nothing to publish to
        return False
    _state["store"], _state["rank"] = store, dist.get_rank()
    if _state["measure"] and dist.get_world_size() > 1:
        _measure_device(store, _state["rank"], _state["record"].host)
    if _state["rank"] == 0 and dist.get_world_size() > 1:
        kept = Path(_state["dir"]) / WINDOWS_NAME if _state["dir"] else None
        aggregator = Aggregator(store, dist.get_world_size(), _state["stream"], kept)
        aggregator.start()
        _state["aggregator"] = aggregator
    return True


def device_key(rank: int) -> str:
    """The store key of ``rank``'s device figures."""
    return f"{KEY_PREFIX}/device/r{rank}"


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


def _device_balance(store: Any, world_size: int):
    """The ``gpu.balance`` finding from the devices the ranks measured, or None when fewer than two did."""
    from torchdoctor.gpu_balance import rank_balance_verdict

    keys = [device_key(rank) for rank in range(world_size)]
    figures = [json.loads(store.get(key)) for key in keys if store.check([key])]
    return rank_balance_verdict(figures) if len(figures) >= 2 else None


def _publish(window: int, payload: dict[str, Any]) -> None:
    """A full window, on the training thread: connect to the store the first time (once the process group
    exists), then hand the window to the publisher thread."""
    if _state.get("store") is None and not _connect():
        return
    publisher = _state.get("publisher")
    if publisher is None:
        publisher = _state["publisher"] = Publisher(_set_window, _say)
    publisher.put(window, payload)


def _set_window(window: int, text: str) -> None:
    """Set window ``window``'s JSON text under this rank's key (in the publisher's thread)."""
    _state["store"].set(window_key(window, _state["rank"]), text)
    if _state.get("aggregator") is not None:
        _state["aggregator"].own_latest = window


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
    if store is None:
        return
    publisher = _state.get("publisher")
    if publisher is None or (publisher.drain() and not publisher.failed):  # else the store does not answer
        _say_done(store, record)
    aggregator = _state.get("aggregator")
    if aggregator is not None:
        _report(aggregator, aggregator.finish())


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


def _report(aggregator: Aggregator, missing: list[int]) -> None:
    from torchdoctor.findings import to_json
    from torchdoctor.stragglers.summary import findings, summary_lines

    lines = summary_lines(aggregator.verdicts, aggregator.tracker.said)
    found = findings(aggregator.verdicts, aggregator.tracker.said)
    try:
        balance = _device_balance(aggregator.store, aggregator.world_size)
    except Exception as error:  # noqa: BLE001 - the store is gone: the balance is left out, and said so
        balance = None
        lines.append(f"  the devices' figures could not be read: {error}")
    if balance is not None:
        found.append(balance)
        mark = "!" if balance.status == "warn" else "✓"
        lines.append(f"  {mark} {balance.summary} (gpu.balance)")
        lines += [f"      {fix}" for fix in balance.fix.splitlines()]
    if missing:
        lines.append(
            f"  ranks {', '.join(map(str, missing))} did not say they were done: their last steps are missing"
        )
    if aggregator.problem:
        lines.append(f"  {aggregator.problem}")
    directory = _state.get("dir")
    if directory:
        try:
            folder = Path(directory)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / JSON_NAME).write_text(to_json(found) + "\n")
            from torchdoctor.stragglers.plot import plot_steps

            picture = plot_steps(aggregator.verdicts, folder / PLOT_NAME, aggregator.tracker.said)
            wrote = [str(folder / JSON_NAME)] + ([str(picture)] if picture else [])
            if aggregator.kept is not None and aggregator.kept.exists():
                wrote.append(f"the raw windows in {aggregator.kept.name}")
            lines.append(
                f"  wrote {', '.join(wrote[:-1])} and {wrote[-1]}"
                if len(wrote) > 1
                else f"  wrote {wrote[0]}"
            )
        except OSError as error:
            lines.append(f"  could not write to {directory}: {error.strerror or error}")
    _say("\n".join(lines))


def _say(text: str) -> None:
    stream = _state.get("stream") or sys.stderr
    stream.write(text + "\n")
    stream.flush()
