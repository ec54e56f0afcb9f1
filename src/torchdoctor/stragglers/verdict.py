"""Which rank holds the others back, and why: plain functions over the windows the ranks published.

In synchronous training every rank's step takes as long as the slowest rank's, so the step time names nobody.
What differs is when each rank *arrives* at its last collective of the step: the straggler arrives last and
the others wait for it inside the collective (they are the victims, never named). Per step and per group
this gives each rank's lateness (its arrival minus the earliest) and its wait (the latest arrival minus its
own). A rank is a straggler in a window when its median lateness is a sizeable part of the step; the verdict
needs the same rank in `SUSTAINED` of the last `SUSTAINED` + 1 windows, so a one-off stall (a garbage collection, a checkpoint
that every rank writes) never makes one. Without any collective to compare at, the rank whose own work (step
minus time in collectives) is longest is the candidate.

The cause is the part of the straggler's step that exceeds the other ranks' median most: waiting for data
(input), its compute (host when the rank got less CPU than the others for it — a core shared with another
process — else device), or its time in collectives besides waiting for peers (communication).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# A window names a candidate when it delays the others by at least this much of their own step time...
SLOWER = 0.03
# ...and by at least this many seconds (timer and scheduling noise on a busy machine).
MIN_SECONDS = 0.001
# ...and arrives last in at least this share of the window's steps (a rank slowed on purpose is last in
# nearly every step; under noise the last one changes from step to step).
LAST_SHARE = 0.6
# The cause found must account for at least this share of how late the rank is.
EXPLAINED = 0.5
# The verdict needs the same rank in this many of the last SUSTAINED + 1 windows (3 of 4 windows of 10 steps).
SUSTAINED = 3
CAUSES = ("input", "host", "device", "communication")


@dataclass
class RankWindow:
    """One rank's medians over one window, in seconds."""

    rank: int
    host: str
    step: float
    data: float
    comm: float
    compute: float
    cpu: float
    late: float | None  # None: no collective to compare arrivals at
    wait: float | None
    transfer: float  # time in collectives minus waiting for the peers
    last_share: float = 0.0  # share of the steps it arrived last at the last collective
    spread: dict[str, float] = field(
        default_factory=dict
    )  # step-to-step spread (MAD) of data, compute, transfer

    @property
    def own(self) -> float:
        """The rank's own work: data + host + device (everything but the collectives)."""
        return self.step - self.comm


@dataclass
class WindowVerdict:
    """What one window says: each rank's medians and the rank holding the others back (or None)."""

    window: int
    ranks: dict[int, RankWindow]
    straggler: int | None = None
    slower: float = 0.0  # how much longer its own work is than the others', as a fraction
    cause: str | None = None
    cause_text: str = ""
    steps: int = 0  # steps the window holds on every rank


def rank_windows(window: Mapping[int, Mapping[str, Any]]) -> dict[int, RankWindow]:
    """Each rank's medians of one window, from the published rows ``{rank: {"host", "rows"}}``."""
    rows = {rank: data["rows"] for rank, data in window.items() if data.get("rows")}
    steps = min((len(r) for r in rows.values()), default=0)
    late: dict[int, list[float]] = {rank: [] for rank in rows}
    wait: dict[int, list[float]] = {rank: [] for rank in rows}
    last: dict[int, int] = {rank: 0 for rank in rows}
    for index in range(steps):
        step_late, step_wait = _arrival_gaps({rank: table[index][4] for rank, table in rows.items()})
        for rank, value in step_late.items():
            late[rank].append(value)
            wait[rank].append(step_wait[rank])
        if len(step_late) >= 2:
            latest = max(step_late.values())
            for rank, value in step_late.items():
                last[rank] += value == latest and latest > 0
    result = {}
    for rank, table in rows.items():
        table = table[:steps]
        step = statistics.median(r[0] for r in table)
        data = statistics.median(r[1] for r in table)
        comm = statistics.median(r[2] for r in table)
        compute = statistics.median(max(0.0, r[0] - r[1] - r[2]) for r in table)
        cpu = statistics.median(r[3] for r in table)
        rank_late = statistics.median(late[rank]) if len(late[rank]) * 2 >= steps and steps else None
        rank_wait = statistics.median(wait[rank]) if rank_late is not None else None
        transfer = max(0.0, comm - rank_wait) if rank_wait is not None else comm
        waits = wait[rank] if len(wait[rank]) == steps else [rank_wait or 0.0] * steps
        spread = {
            "data": _mad([r[1] for r in table]),
            "compute": _mad([max(0.0, r[0] - r[1] - r[2]) for r in table]),
            "transfer": _mad([max(0.0, r[2] - w) for r, w in zip(table, waits, strict=True)]),
        }
        result[rank] = RankWindow(
            rank, str(window[rank].get("host", "?")), step, data, comm, compute, cpu, rank_late, rank_wait,
            transfer, last[rank] / max(1, len(late[rank])), spread,
        )  # fmt: skip
    return result


def _mad(values: list[float]) -> float:
    """The median absolute deviation: how much a part varies from step to step, unmoved by one stall."""
    if len(values) < 2:
        return 0.0
    middle = statistics.median(values)
    return statistics.median(abs(v - middle) for v in values)


def _arrival_gaps(arrivals: Mapping[int, list]) -> tuple[dict[int, float], dict[int, float]]:
    """One step's lateness and wait per rank: at each collective (matched across ranks by group and its
    place among the step's collectives of that group), a rank is late by its arrival minus the earliest and
    waits the latest arrival minus its own; summed over the step."""
    by_collective: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for rank, noted in arrivals.items():
        seen: dict[str, int] = {}
        for group, wall in noted or ():
            if group == "?":
                continue
            place = seen.get(group, 0)
            seen[group] = place + 1
            by_collective.setdefault((group, place), []).append((rank, wall))
    late: dict[int, float] = {}
    wait: dict[int, float] = {}
    for there in by_collective.values():
        if len(there) < 2:
            continue
        first, latest = min(w for _, w in there), max(w for _, w in there)
        for rank, wall in there:
            late[rank] = late.get(rank, 0.0) + wall - first
            wait[rank] = wait.get(rank, 0.0) + latest - wall
    return late, wait


def judge_window(number: int, window: Mapping[int, Mapping[str, Any]]) -> WindowVerdict:
    """The verdict of one window: the rank that held the others back by at least `SLOWER` of their step,
    and the part of its step that did it."""
    ranks = rank_windows(window)
    steps = min((len(data.get("rows") or []) for data in window.values()), default=0)
    verdict = WindowVerdict(number, ranks, steps=steps)
    if len(ranks) < 2:
        return verdict
    compared = [r for r in ranks.values() if r.late is not None]
    if len(compared) >= 2:
        candidate = max(compared, key=lambda r: r.late)
        others = [r for r in compared if r.rank != candidate.rank]
        behind = candidate.late - statistics.median(r.late for r in others)
        base = statistics.median(r.step - (r.wait or 0.0) for r in others)
        if candidate.last_share < LAST_SHARE:
            return verdict
    else:
        candidate = max(ranks.values(), key=lambda r: r.own)
        others = [r for r in ranks.values() if r.rank != candidate.rank]
        base = statistics.median(r.own for r in others)
        behind = candidate.own - base
    if base <= 0 or behind < MIN_SECONDS or behind / base < SLOWER:
        return verdict
    cause, text = _cause(candidate, others, behind)
    if cause is None:  # late, but no part of its own step says why: no verdict rather than a guess
        return verdict
    verdict.straggler, verdict.slower, verdict.cause, verdict.cause_text = (
        candidate.rank,
        behind / base,
        cause,
        text,
    )
    return verdict


def _cause(slow: RankWindow, others: list[RankWindow], behind: float) -> tuple[str | None, str]:
    """The part of ``slow``'s step that exceeds the others' median most for its step-to-step spread (a
    steady 3 ms more in next() says more than 3 ms more of a compute that varies by 10 ms), in words; None
    when that part explains less than `EXPLAINED` of the ``behind`` seconds the rank is late by."""
    median = {
        name: statistics.median(getattr(r, name) for r in others) for name in ("data", "compute", "cpu")
    }
    median["transfer"] = statistics.median(r.transfer for r in others)
    excess = {
        "input": slow.data - median["data"],
        "compute": slow.compute - median["compute"],
        "communication": slow.transfer - median["transfer"],
    }
    spread_of = {"input": "data", "compute": "compute", "communication": "transfer"}

    def weight(part: str) -> float:
        name = spread_of[part]
        noise = slow.spread.get(name, 0.0) + statistics.median(r.spread.get(name, 0.0) for r in others)
        return excess[part] / (noise + 0.0005)  # half a millisecond: timer and scheduling noise

    part = max(excess, key=weight)
    if excess[part] < EXPLAINED * behind:
        return None, ""
    if part == "input":
        return "input", f"input pipeline (next() {_ms(slow.data)} vs median {_ms(median['data'])})"
    if part == "communication":
        return "communication", (
            f"communication (collectives {_ms(slow.transfer)} vs median {_ms(median['transfer'])}, "
            "waiting for peers left out)"
        )
    # Compute that took longer with no more CPU time: the rank was kept off its CPU (host), else more work.
    share = slow.cpu / slow.compute if slow.compute > 0 else 1.0
    others_share = median["cpu"] / median["compute"] if median["compute"] > 0 else 1.0
    extra_cpu = slow.cpu - median["cpu"]
    if share < 0.85 * others_share and extra_cpu < 0.5 * excess["compute"]:
        return "host", (
            f"host (compute {_ms(slow.compute)} vs median {_ms(median['compute'])}, with "
            f"{_ms(slow.cpu)} of CPU: the CPU is shared with other processes)"
        )
    return "device", f"device (compute {_ms(slow.compute)} vs median {_ms(median['compute'])})"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.0095 else f"{seconds * 1000:.1f} ms"


@dataclass
class Tracker:
    """Window verdicts in order -> the sustained verdicts, each said once (`feed` returns the new line)."""

    sustained: int = SUSTAINED
    history: list[WindowVerdict] = field(default_factory=list)
    said: list[dict[str, Any]] = field(default_factory=list)
    _current: tuple[int, str] | None = None

    def feed(self, verdict: WindowVerdict) -> str | None:
        """Add the next window's verdict; the verdict line when one rank has been the straggler in
        `sustained` of the last `sustained` + 1 windows, this one included (for a cause not yet said for
        it), else None. One noisy window neither makes a verdict nor breaks one."""
        self.history.append(verdict)
        recent = self.history[-(self.sustained + 1) :]
        rank = verdict.straggler
        if rank is None:
            if all(v.straggler is None for v in recent[-2:]):
                self._current = None  # over: a new stretch gets a new line
            return None
        mine = [v for v in recent if v.straggler == rank]
        if len(mine) < self.sustained:
            return None
        causes = [v.cause for v in mine]
        cause = max(set(causes), key=causes.count)
        if self._current == (rank, cause):
            return None
        self._current = (rank, cause)
        same = [v for v in mine if v.cause == cause]
        slower = statistics.median(v.slower for v in mine)
        steps = sum(v.steps for v in recent)
        host = recent[-1].ranks[rank].host
        line = (
            f"torchdoctor: straggler: rank {rank} (host {host}) {slower:.0%} slower over the last {steps} "
            f"steps: {same[-1].cause_text}"
        )
        self.said.append(
            {"rank": rank, "host": host, "cause": cause, "slower": round(slower, 4), "steps": steps,
             "window": verdict.window, "line": line}
        )  # fmt: skip
        return line
