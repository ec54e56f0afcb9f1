"""Which rank holds the others back, and why: plain functions over the windows the ranks published.

In synchronous training every rank's step takes as long as the slowest rank's, so the step time names nobody.
What differs is each rank's *own* work in the step: waiting for data, its compute, and its time in collectives
besides waiting for the peers (the arrival skew at the step's collectives tells the wait). The straggler's own
work is longer; its victims' is not — their extra time is all waiting, so they are never named.

Every rank is compared with its peers on the *same* step: its own work minus the median of the peers' on that
step. Load that slows every rank alike (a busy shared machine, a noisy neighbour) cancels out step by step, and
a one-off stall of one rank (a garbage collection) is one step of many. A rank is named when, over the last
`STRETCH` steps, its excess is positive in at least `MAJORITY` of them, its median excess is at least `SLOWER`
of the peers' own work and stands `NOISE_MARGIN` standard errors clear of the step-to-step spread of that
difference (so a 5% slowdown is named where steps vary by 5%, and noise of the same size alone is not).

The cause is the part of the straggler's step that carries the excess (medians of the same per-step
differences): waiting for data (input), its compute (host when it got no more CPU time for it than the peers
— a core shared with another process — else device), or its collectives besides waiting (communication).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The steps compared: the latest STRETCH (at least MIN_STEPS of them on two ranks before any verdict).
STRETCH = 40
MIN_STEPS = 30
# The first WARMUP steps are never judged (start-up: the first batches, allocations, the devices measured).
WARMUP = 20
# A rank is named when its own work exceeds the peers' median on at least MAJORITY of those steps...
MAJORITY = 0.7
# ...its median excess is at least SLOWER of the peers' own work and MIN_SECONDS (timer noise)...
SLOWER = 0.025
MIN_SECONDS = 0.0003
# ...and NOISE_MARGIN standard errors of that median (from the step-to-step spread of the difference).
NOISE_MARGIN = 3.5
# The part named as the cause must carry at least this share of the excess, else the line says it is unclear.
EXPLAINED = 0.5
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
    parts: dict[int, list[tuple[float, ...]]] = field(default_factory=dict)  # rank -> per step, `PARTS`
    first_step: int = 0  # the number of the window's first step
    reason: str = ""  # the figures behind the straggler named (or the closest candidate), for the JSON


# Per step and rank: own work (step minus waiting for peers), data, compute, collectives besides waiting, CPU.
PARTS = ("own", "data", "compute", "transfer", "cpu")


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


def step_parts(window: Mapping[int, Mapping[str, Any]]) -> dict[int, list[tuple[float, ...]]]:
    """Each rank's `PARTS` step by step, from the published rows ``{rank: {"host", "rows"}}``. The wait is
    the arrival skew at the step's collectives; where a step has no collective to compare, all the time in
    collectives counts as waiting (never as the rank's own work, so a victim is never made slow by it)."""
    rows = {rank: data["rows"] for rank, data in window.items() if data.get("rows")}
    steps = min((len(r) for r in rows.values()), default=0)
    parts: dict[int, list[tuple[float, ...]]] = {rank: [] for rank in rows}
    for index in range(steps):
        _late, wait = _arrival_gaps({rank: table[index][4] for rank, table in rows.items()})
        for rank, table in rows.items():
            step, data, comm, cpu = (float(v) for v in table[index][:4])
            waited = min(comm, wait[rank]) if rank in wait else comm
            compute = max(0.0, step - data - comm)
            parts[rank].append((step - waited, data, compute, comm - waited, cpu))
    return parts


def judge_window(number: int, window: Mapping[int, Mapping[str, Any]]) -> WindowVerdict:
    """One window's medians per rank and its per-step parts; `judge_stretch` over the latest windows says
    who the straggler is (`Tracker` does both)."""
    ranks = rank_windows(window)
    steps = min((len(data.get("rows") or []) for data in window.values()), default=0)
    first = min((int(data.get("first_step", 0)) for data in window.values()), default=0)
    return WindowVerdict(number, ranks, steps=steps, parts=step_parts(window), first_step=first)


def judge_stretch(windows: list[WindowVerdict]) -> tuple[int | None, float, str | None, str, str]:
    """(straggler or None, how much slower, cause, cause in words, the figures) over the steps of
    ``windows``: each rank against the median of its peers on the same steps."""
    excess: dict[int, list[list[float]]] = {}  # rank -> per step: excess of each part over the peers' median
    base: dict[int, list[float]] = {}  # rank -> per step: the peers' median own work
    mine: dict[int, list[tuple[float, ...]]] = {}
    peers_parts: dict[int, list[list[float]]] = {}
    for verdict in windows:
        if verdict.first_step < WARMUP:
            continue
        present = [rank for rank, table in verdict.parts.items() if table]
        if len(present) < 2:
            continue
        steps = min(len(verdict.parts[rank]) for rank in present)
        for index in range(steps):
            for rank in present:
                peers = [verdict.parts[p][index] for p in present if p != rank]
                medians = [statistics.median(p[k] for p in peers) for k in range(len(PARTS))]
                own = verdict.parts[rank][index]
                excess.setdefault(rank, []).append([own[k] - medians[k] for k in range(len(PARTS))])
                base.setdefault(rank, []).append(medians[0])
                mine.setdefault(rank, []).append(own)
                peers_parts.setdefault(rank, []).append(medians)
    best: tuple[float, int] | None = None
    reasons = []
    for rank, rows in excess.items():
        n = len(rows)
        if n < MIN_STEPS:
            continue
        own_excess = [row[0] for row in rows]
        middle = statistics.median(own_excess)
        peers_own = statistics.median(base[rank])
        if peers_own <= 0:
            continue
        ahead = sum(value > 0 for value in own_excess) / n
        error = 1.4826 * _mad(own_excess) * 1.2533 / math.sqrt(n)  # the median's standard error
        reasons.append(
            f"rank {rank}: {middle / peers_own:+.1%} ({_ms(abs(middle))}) vs peers, ahead on {ahead:.0%} of "
            f"{n} steps, {middle / error if error else float('inf'):.1f} standard errors"
        )
        if ahead < MAJORITY or middle < max(MIN_SECONDS, SLOWER * peers_own, NOISE_MARGIN * error):
            continue
        if best is None or middle / peers_own > best[0]:
            best = (middle / peers_own, rank)
    if best is None:
        return None, 0.0, None, "", "; ".join(reasons)
    slower, rank = best
    cause, text = _cause(mine[rank], peers_parts[rank], excess[rank])
    return rank, slower, cause, text, "; ".join(reasons)


def _cause(
    mine: list[tuple[float, ...]], peers: list[list[float]], excess: list[list[float]]
) -> tuple[str | None, str]:
    """The part carrying the straggler's excess, in words (medians of the per-step differences); None with
    the parts listed when no part carries `EXPLAINED` of it."""
    column = {name: k for k, name in enumerate(PARTS)}
    extra = {name: statistics.median(row[k] for row in excess) for name, k in column.items()}
    own_median = {name: statistics.median(row[k] for row in mine) for name, k in column.items()}
    peer_median = {name: statistics.median(row[k] for row in peers) for name, k in column.items()}
    compute = f"compute {_ms(own_median['compute'])} vs median {_ms(peer_median['compute'])}"
    # A rank kept off its CPU (a core shared with another process) loses time in every part, its
    # collectives included: compute that grew with no more CPU time for it says host first.
    if extra["data"] < EXPLAINED * extra["own"] and extra["compute"] >= 0.3 * extra["own"]:
        if extra["cpu"] < 0.5 * extra["compute"]:
            return "host", (
                f"host ({compute}, with {extra['cpu'] * 1000:+.1f} ms of CPU time: the CPU is shared "
                "with other processes)"
            )
    part = max(("data", "compute", "transfer"), key=lambda name: extra[name])
    if extra[part] < EXPLAINED * extra["own"]:
        listed = ", ".join(f"{name} {extra[name] * 1000:+.1f} ms" for name in ("data", "compute", "transfer"))
        return None, f"no single part explains it ({listed} per step vs the peers)"
    if part == "data":
        return (
            "input",
            f"input pipeline (next() {_ms(own_median['data'])} vs median {_ms(peer_median['data'])})",
        )
    if part == "transfer":
        return "communication", (
            f"communication (collectives {_ms(own_median['transfer'])} vs median "
            f"{_ms(peer_median['transfer'])}, waiting for peers left out)"
        )
    return "device", f"device ({compute})"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.0095 else f"{seconds * 1000:.1f} ms"


@dataclass
class Tracker:
    """Window verdicts in order -> the sustained verdicts, each said once (`feed` returns the new line)."""

    stretch: int = STRETCH
    history: list[WindowVerdict] = field(default_factory=list)
    said: list[dict[str, Any]] = field(default_factory=list)
    _current: int | None = None
    _quiet: int = 0

    def feed(self, verdict: WindowVerdict) -> str | None:
        """Add the next window; judge the latest `stretch` steps (`judge_stretch`) and set the window's
        straggler from it. Returns the verdict line when a rank is named that was not named in the current
        stretch (two windows naming nobody end a stretch), else None."""
        self.history.append(verdict)
        size = max(1, verdict.steps)
        count = max(1, -(-self.stretch // size))
        recent = self.history[-count:]
        self.history = self.history[-count:]  # nothing older is judged again
        rank, slower, cause, text, reason = judge_stretch(recent)
        verdict.reason = reason
        if rank is None:
            self._quiet += 1
            if self._quiet >= 2:
                self._current = None  # over: a new stretch gets a new line
            return None
        self._quiet = 0
        verdict.straggler, verdict.slower, verdict.cause, verdict.cause_text = rank, slower, cause, text
        if self._current == rank:  # one line per rank per stretch
            return None
        self._current = rank
        steps = sum(v.steps for v in recent)
        host = verdict.ranks[rank].host if rank in verdict.ranks else "?"
        line = (
            f"torchdoctor: straggler: rank {rank} (host {host}) {slower:.0%} slower over the last {steps} "
            f"steps: {text}"
        )
        self.said.append(
            {"rank": rank, "host": host, "cause": cause, "slower": round(slower, 4), "steps": steps,
             "window": verdict.window, "line": line, "figures": reason}
        )  # fmt: skip
        return line
