"""What the judge says and writes when the run is over: the summary per rank, the devices' balance
(``gpu.balance``), and ``stragglers.json``, ``stragglers.png`` and the kept windows in the run's folder.

Used where the windows were judged: in rank 0's judge process (`torchdoctor.stragglers.judge`), or in rank
0's reader thread where there is no such process (`torchdoctor.stragglers.watch`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torchdoctor.findings import Finding
from torchdoctor.stragglers.aggregate import Aggregator
from torchdoctor.stragglers.record import KEY_PREFIX

JSON_NAME, PLOT_NAME, WINDOWS_NAME = "stragglers.json", "stragglers.png", "stragglers-windows.jsonl"


def device_key(rank: int) -> str:
    """The store key of ``rank``'s device figures."""
    return f"{KEY_PREFIX}/device/r{rank}"


def device_balance(store: Any, world_size: int):
    """The ``gpu.balance`` finding from the devices the ranks measured, or None when fewer than two did."""
    from torchdoctor.gpu_balance import rank_balance_verdict

    keys = [device_key(rank) for rank in range(world_size)]
    figures = [json.loads(store.get(key)) for key in keys if store.check([key])]
    return rank_balance_verdict(figures) if len(figures) >= 2 else None


def unless_cpus_shared(balance: Any, shared: str) -> Any:
    """``balance`` (a ``gpu.balance`` finding, or None), or where the ranks measured CPUs they share with more
    ranks than there are (``shared``: `summary.shared_cpus`) a skip saying so: each rank's CPU was measured while
    the others took turns on it, and the slowest is the one the kernel ran least, not a slower device."""
    if balance is None or not shared or balance.status != "warn":
        return balance
    ranks = balance.details.get("ranks", [])
    if not ranks or any(not str(r.get("device", "")).startswith("cpu") for r in ranks):
        return balance
    return Finding(
        "gpu.balance", "skip", f"not judged: {shared}, so each was measured while the others took turns on them",
        balance.details,
    )  # fmt: skip


def report(
    aggregator: Aggregator, missing: list[int], directory: str | None, say: Callable[[str], None]
) -> None:
    """Say the summary of the windows ``aggregator`` judged and write the files into ``directory`` (if any);
    ``missing``: the ranks that never said they were done."""
    from torchdoctor.stragglers.summary import findings, shared_cpus, summary_lines

    lines = summary_lines(aggregator.verdicts, aggregator.tracker.said)
    found = findings(aggregator.verdicts, aggregator.tracker.said)
    try:
        balance = device_balance(aggregator.store, aggregator.world_size)
    except Exception as error:  # noqa: BLE001 - the store is gone: the balance is left out, and said so
        balance = None
        lines.append(f"  the devices' figures could not be read: {error}")
    balance = unless_cpus_shared(balance, shared_cpus(aggregator.verdicts))
    if balance is not None:
        found.append(balance)
        mark = {"warn": "!", "skip": "-"}.get(balance.status, "✓")
        lines.append(f"  {mark} {balance.summary} (gpu.balance)")
        lines += [f"      {fix}" for fix in balance.fix.splitlines()]
    if missing:
        lines.append(
            f"  ranks {', '.join(map(str, missing))} did not say they were done: their last steps are missing"
        )
    if aggregator.problem:
        lines.append(f"  {aggregator.problem}")
    if directory:
        lines += _write(aggregator, found, Path(directory))
    say("\n".join(lines))


def _write(aggregator: Aggregator, found: list, folder: Path) -> list[str]:
    """Write the findings and the picture into ``folder``; the summary's line saying what was written."""
    from torchdoctor.findings import to_json
    from torchdoctor.stragglers.plot import plot_steps

    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / JSON_NAME).write_text(to_json(found) + "\n")
        picture = plot_steps(aggregator.verdicts, folder / PLOT_NAME, aggregator.tracker.said)
    except OSError as error:
        return [f"  could not write to {folder}: {error.strerror or error}"]
    wrote = [str(folder / JSON_NAME)] + ([str(picture)] if picture else [])
    if aggregator.kept is not None and aggregator.kept.exists():
        wrote.append(f"the raw windows in {aggregator.kept.name}")
    return [f"  wrote {', '.join(wrote[:-1])} and {wrote[-1]}" if len(wrote) > 1 else f"  wrote {wrote[0]}"]
