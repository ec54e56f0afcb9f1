"""The end of the run: one line per rank (where its step went), the findings for ``--json``.

Ids: ``dist.straggler`` (ok, or warn naming the straggler and its cause), ``dist.straggler.rank<N>`` for
each rank's medians, and ``dist.straggler.cpus`` (warn) where ranks outnumber the CPUs they share.
"""

from __future__ import annotations

import statistics
from typing import Any

from torchdoctor.findings import Finding
from torchdoctor.rank_list import ranks_text, who
from torchdoctor.stragglers.verdict import MIN_STEPS, WARMUP
from torchdoctor.stragglers.window import WindowVerdict, sharing_cpus


def per_rank(verdicts: list[WindowVerdict]) -> dict[int, dict[str, Any]]:
    """Each rank's medians over the windows, in milliseconds, and the steps it published."""
    table: dict[int, dict[str, list[float]]] = {}
    steps: dict[int, int] = {}
    hosts: dict[int, str] = {}
    for verdict in verdicts:
        for rank, w in verdict.ranks.items():
            columns = table.setdefault(rank, {})
            for name in ("step", "data", "compute", "comm", "transfer"):
                columns.setdefault(name, []).append(getattr(w, name))
            if w.wait is not None:
                columns.setdefault("wait", []).append(w.wait)
                columns.setdefault("late", []).append(w.late)
            if w.device is not None:  # on CUDA: the device time per step, from CUDA events
                columns.setdefault("device", []).append(w.device)
            steps[rank] = steps.get(rank, 0) + verdict.steps
            hosts[rank] = w.host
    result = {}
    for rank in sorted(table):
        medians = {name: round(statistics.median(v) * 1000, 2) for name, v in table[rank].items()}
        result[rank] = {"host": hosts[rank], "steps": steps[rank], **medians}
    return result


# No rank timed a collective, nor arrived at one, over the whole run: ranks that train apart do not hold each
# other back, and their steps are compared all the same. `accelerate launch --multi_gpu` on CPUs, the script's
# `Accelerator()` without `cpu=True`: accelerate set up no DDP (each rank printed its own loss) and the summary
# said "collectives 0" on each rank and nothing more (session 41).
NO_COLLECTIVE = (
    "  no collective was timed on any rank: the ranks may each train on their own (no DDP set up: accelerate on "
    "CPUs wants `Accelerator(cpu=True)`), or theirs run where the watch cannot time them (FSDP1's, a compiled "
    "graph's)"
)


def summary_lines(verdicts: list[WindowVerdict], said: list[dict[str, Any]]) -> list[str]:
    """The end-of-run summary: a head line, then one line per rank."""
    ranks = per_rank(verdicts)
    if not ranks:
        return [
            "torchdoctor: stragglers: no steps to compare (no optimizer step or forward seen on two ranks)"
        ]
    total = max(r["steps"] for r in ranks.values())
    if said:
        # one entry per rank and cause, however many stretches it held for
        stretches: dict[tuple[int, str], list[dict]] = {}
        for s in said:
            stretches.setdefault((s["rank"], s["cause"]), []).append(s)
        named = "; ".join(
            f"rank {rank} ({cause}, {max(s['slower'] for s in these):.0%} slower"
            + (f", {len(these)} stretches)" if len(these) > 1 else ")")
            for (rank, cause), these in stretches.items()
        )
        head = f"torchdoctor: stragglers: {total} steps on {len(ranks)} ranks; held back by {named}"
    elif total < WARMUP + MIN_STEPS:
        head = (
            f"torchdoctor: stragglers: {total} steps on {len(ranks)} ranks: too few to judge (a rank is compared "
            f"with its peers after {WARMUP} start-up steps, over {MIN_STEPS} steps at least)"
        )
    else:
        head = f"torchdoctor: stragglers: {total} steps on {len(ranks)} ranks; no rank was slower for a sustained stretch"
    lines = [head]
    shared = shared_cpus(verdicts)
    if shared:
        lines.append(f"  {shared}: which one waits for a CPU is the kernel's choice, none is named for it")
    if all("wait" not in r and r["comm"] == 0 for r in ranks.values()):
        lines.append(NO_COLLECTIVE)
    if not said:
        lines += waited_for_throughout(ranks)
    lines += collectives_dominate(ranks)
    for rank, r in ranks.items():
        waiting = f", waiting for peers {r['wait']:g}" if "wait" in r else ""
        device = f" (device {r['device']:g}, from CUDA events)" if "device" in r else ""
        lines.append(
            f"  rank {rank} (host {r['host']}): step {r['step']:g} ms = data {r['data']:g} + compute "
            f"{r['compute']:g}{device} + collectives {r['comm']:g}{waiting} (medians over {r['steps']} steps)"
        )
    return lines


# A rank the others waited for over the whole run, which no verdict named: the judge compares each rank with its own
# usual (the first BASELINE steps after WARMUP), so a difference already there is its usual. On an H200 shared by
# two ranks, one given 12 extra matmuls a step from step 40 (inside the baseline): its peer waited 44 ms of a
# 120 ms step for it, and nothing was said. Said only when the others waited THROUGHOUT of their step for it, it
# waited at most LONE of what they did, and its own work (compute or data) is longer than theirs by at least
# EXPLAINS of their wait: in the kept healthy CPU runs a rank that leaves the collectives last by habit had them
# wait 11% of a step with the same compute, and a loaded one 13% (2.5 ms more compute): none is said.
THROUGHOUT = 0.15
LONE = 0.2
EXPLAINS = 0.5


def waited_for_throughout(ranks: dict[int, dict[str, Any]]) -> list[str]:
    """The summary's line for a rank its peers waited for over the whole run (medians), or none."""
    timed = {rank: r for rank, r in ranks.items() if "wait" in r}
    if len(timed) < 2:
        return []
    slow = min(timed, key=lambda rank: timed[rank]["wait"])
    peers = [r for rank, r in timed.items() if rank != slow]
    waited = statistics.median(r["wait"] for r in peers)
    step = statistics.median(r["step"] for r in timed.values())
    if step <= 0 or waited < THROUGHOUT * step or timed[slow]["wait"] > LONE * waited:
        return []
    parts = {
        name: (timed[slow][name], statistics.median(r[name] for r in peers)) for name in ("compute", "data")
    }
    name, (mine, theirs) = max(parts.items(), key=lambda item: item[1][0] - item[1][1])
    if mine - theirs < EXPLAINS * waited:
        return []
    return [
        f"  rank {slow} held the others back throughout: they waited {waited:g} ms a step for it ({waited / step:.0%} "
        f"of a step), its {name} {mine:g} ms against their {theirs:g}; no verdict named it because a difference "
        "there from the start (or from before step 60) is taken as its usual: unless it is by design (logging, "
        "evaluation or checkpoints on one rank), it holds the run back"
    ]


# The collectives' own time (waiting for the peers left out) a share of the step on every rank: the step is bound
# by moving the data, which no rank can be named for (a ring's ranks leave a collective together). Two namespace
# hosts, one veth throttled to 20 mbit: 681-716 ms of a 792 ms step in the collectives on both ranks (86-90%),
# and nothing was said. A healthy small DDP run over gloo on one 2-core VM spent 46-54% there.
DOMINATE = 2 / 3


def collectives_dominate(ranks: dict[int, dict[str, Any]]) -> list[str]:
    """The summary's line when the collectives' own time (``transfer``: waiting for the peers left out) is at
    least `DOMINATE` of the step on every rank, with what measures the links, or none."""
    shares = {rank: r["transfer"] / r["step"] for rank, r in ranks.items() if r["step"] > 0}
    if len(shares) < 2 or len(shares) < len(ranks) or min(shares.values()) < DOMINATE:
        return []
    low, high = min(shares.values()), max(shares.values())
    spread = f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%}-{high:.0%}"
    hosts = len({r["host"] for r in ranks.values()})
    where = f"the links between the {hosts} hosts" if hosts > 1 else "the ranks' links on this host"
    return [
        f"  the collectives take {spread} of the step on every rank, waiting for peers left out: the step is "
        "bound by moving the data, not by one rank (a slow link slows every rank of a ring alike). Unless "
        f"the model's size calls for that, measure {where}: `torchdoctor net --bench`, and `torchdoctor net "
        "--find-bad` to name a slow one"
    ]


def findings(verdicts: list[WindowVerdict], said: list[dict[str, Any]]) -> list[Finding]:
    """``dist.straggler`` and one ``dist.straggler.rank<N>`` per rank."""
    ranks = per_rank(verdicts)
    windows = [_window_facts(v) for v in verdicts]
    found = []
    if said:
        last = said[-1]
        found.append(
            Finding(
                "dist.straggler",
                "warn",
                last["line"].removeprefix("torchdoctor: straggler: "),
                {"verdicts": said, "windows": windows},
                _fix(last["cause"], last["rank"]),
            )
        )
    elif ranks:
        found.append(
            Finding(
                "dist.straggler", "ok", f"no straggler over {len(verdicts)} windows of {len(ranks)} ranks"
            )
        )
    else:
        found.append(Finding("dist.straggler", "skip", "no steps to compare"))
    shared = shared_cpus(verdicts)
    if shared:
        fix = (
            "give every rank a core of its own (Slurm --cpus-per-task, taskset, or fewer ranks per host); "
            "DataLoader workers need cores besides"
        )
        found.append(Finding("dist.straggler.cpus", "warn", shared, {}, fix))
    for rank, medians in ranks.items():
        found.append(Finding(f"dist.straggler.rank{rank}", "ok", _rank_summary(rank, medians), medians))
    return found


def shared_cpus(verdicts: list[WindowVerdict]) -> str:
    """Which ranks took the CPUs from each other in the last window (`sharing_cpus`), in words, or ''."""
    if not verdicts:
        return ""
    ranks = verdicts[-1].ranks
    hosts: dict[tuple[str, frozenset[int]], list[int]] = {}
    for rank, (_, cpus) in sorted(sharing_cpus(ranks).items()):
        hosts.setdefault((ranks[rank].host, cpus), []).append(rank)
    return "; ".join(
        f"{who(members)} on host {host} share {len(cpus)} CPU{'s' * (len(cpus) != 1)} ({ranks_text(cpus)})"
        for (host, cpus), members in hosts.items()
    )


def _window_facts(verdict: WindowVerdict) -> dict[str, Any]:
    """One window in the JSON: its straggler (or None) and each rank's lateness (ms) and share of steps last."""
    return {
        "window": verdict.window,
        "straggler": verdict.straggler,
        "slower": round(verdict.slower, 4),
        "cause": verdict.cause,
        "late_ms": {r: None if w.late is None else round(w.late * 1000, 2) for r, w in verdict.ranks.items()},
        "last_share": {r: round(w.last_share, 2) for r, w in verdict.ranks.items()},
        "figures": verdict.reason,
    }


def _rank_summary(rank: int, r: dict[str, Any]) -> str:
    device = f" (device {r['device']:g})" if "device" in r else ""
    return (
        f"rank {rank}: step {r['step']:g} ms, data {r['data']:g}, compute {r['compute']:g}{device}, "
        f"collectives {r['comm']:g}"
    )


def _fix(cause: str, rank: int) -> str:
    return {
        "input": f"give rank {rank}'s DataLoader more workers (num_workers), pin_memory, or faster storage",
        "host": f"find what else runs on rank {rank}'s cores (top, taskset) and move it, or pin the ranks to cores",
        "device": f"compare rank {rank}'s device with the others (`torchdoctor check --only gpu`); give it less work",
        "communication": f"check rank {rank}'s network link (`torchdoctor net`)",
    }.get(cause, "")
