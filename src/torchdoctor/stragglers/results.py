"""What the judge says and writes when the run is over: the summary per rank, the devices' balance
(``gpu.balance``), and ``stragglers.json``, ``stragglers.png`` and the kept windows in the run's folder.

Used where the windows were judged: in rank 0's judge process (`torchdoctor.stragglers.judge`), or in rank
0's reader thread where there is no such process (`torchdoctor.stragglers.watch`).
"""

from __future__ import annotations

import json
import statistics
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


def _cpus_called_unbalanced(balance: Finding) -> bool:
    """Whether ``balance`` warns of ranks whose measured devices are all CPUs (what the checks below judge)."""
    ranks = balance.details.get("ranks", [])
    return (
        balance.status == "warn"
        and len(ranks) >= 2
        and all(str(r.get("device", "")).startswith("cpu") for r in ranks)
    )


def unless_cpus_shared(balance: Any, shared: str) -> Any:
    """``balance`` (a ``gpu.balance`` finding, or None), or where the ranks measured CPUs they share with more
    ranks than there are (``shared``: `summary.shared_cpus`) a skip saying so: each rank's CPU was measured while
    the others took turns on it, and the slowest is the one the kernel ran least, not a slower device."""
    if balance is None or not shared or not _cpus_called_unbalanced(balance):
        return balance
    return Finding(
        "gpu.balance", "skip", f"not judged: {shared}, so each was measured while the others took turns on them",
        balance.details,
    )  # fmt: skip


# A CPU measured slower must be slower in the run too: every rank does the same work per step, so the rank whose
# matmul measured slowest spends more CPU time per step on it by about the gap the matmul says. Where it spent
# less than BORNE_OUT of that gap more, the short matmul met a busy moment of a shared machine (seen on this
# 2-core VM: two ranks of one kind measured at 61% and 100%, their steps' CPU time the same), not a slower device.
BORNE_OUT = 0.5


def unless_steps_disagree(balance: Any, verdicts: list) -> Any:
    """``balance`` (a ``gpu.balance`` finding, or None), or where the ranks measured CPUs and the run's own CPU
    time per step (each rank's median over the windows ``verdicts`` judged) does not bear out the slowest
    rank's measured gap (`BORNE_OUT`), a skip saying so, with both figures."""
    if balance is None or not _cpus_called_unbalanced(balance):
        return balance
    ranks = balance.details["ranks"]
    per_step: dict[int, list[float]] = {}
    for verdict in verdicts:
        for rank, window in verdict.ranks.items():
            per_step.setdefault(rank, []).append(window.cpu)
    slowest = min(ranks, key=lambda r: r["gflops"])
    fastest = max(ranks, key=lambda r: r["gflops"])
    if slowest["rank"] not in per_step or fastest["rank"] not in per_step:
        return balance
    slow_cpu, fast_cpu = (statistics.median(per_step[r["rank"]]) for r in (slowest, fastest))
    implied = fastest["gflops"] / slowest["gflops"]
    if fast_cpu <= 0 or slow_cpu / fast_cpu - 1 >= BORNE_OUT * (implied - 1):
        return balance
    return Finding(
        "gpu.balance",
        "skip",
        f"not judged: rank {slowest['rank']}'s matmul measured {slowest['gflops']:g} GFLOPS against rank "
        f"{fastest['rank']}'s {fastest['gflops']:g}, but in the run its steps took {slow_cpu * 1000:.2f} ms of CPU "
        f"time against {fast_cpu * 1000:.2f} for the same work: the measurement met a busy moment of the "
        "machine, not a slower device",
        balance.details
        | {"cpu_ms_per_step": {rank: round(statistics.median(v) * 1000, 3) for rank, v in per_step.items()}},
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
    balance = unless_steps_disagree(balance, aggregator.verdicts)
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
