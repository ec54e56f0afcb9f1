"""One window of steps as the ranks published it, read per rank and per step: each rank's medians (`RankWindow`)
and its step split into the parts a straggler cannot hide (`PARTS`: waiting for data, compute on a CPU, waiting
for a CPU, collectives besides waiting for the peers, asleep or blocked), the wait for the peers taken from the
arrival skew at the step's collectives. `verdict` judges these, window after window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torchdoctor.stragglers.stats import mad, median


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
    threads: float | None = None  # per step, its other threads' waiting for a CPU (None: not read)
    cpus: frozenset[int] | None = None  # the CPUs it may run on (None: not published)
    device: float | None = None  # the median of its device time per step on CUDA (None: not known)

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
    compared: dict | None = None  # rank -> per step: (its parts, the peers' medians), once computed
    excess: dict | None = None  # rank -> per step: each part's excess over the peers' median, once computed
    reason: str = ""  # the figures behind the straggler named (or the closest candidate), for the JSON
    on_device: bool = (
        False  # every rank's rows carry their device time (CUDA, `KNOWN`): the `GPU` part is judged
    )
    on_cuda: bool = False  # some rank's rows carry a device time: the ranks train on CUDA


# Per step and rank: own work (step minus waiting for peers), and the parts of it a straggler cannot hide:
# waiting for data, the CPU time of its compute, the time the kernel kept it waiting for a CPU (other
# processes on its cores; else its compute's wall minus CPU time), its collectives besides waiting for the
# peers; and the own work less the waiting for a CPU (`WORK`); and the times the CPU was taken from it while it
# could run (`PREEMPTED`, a count); and the time its compute was neither on a CPU nor waiting for one
# (`BLOCKED`: asleep or blocked outside next() and the collectives, as a training loop that sleeps, reads a
# file, waits on a lock or syncs with the device is); and the own work less that (`AWAKE`). Each part -> the cause
# it names. Last, the time the CUDA device surely worked outside collectives (`GPU`, from CUDA events: record's
# ``device``), judged where every rank's rows of the window carry it (`WindowVerdict.on_device`), else 0.
# A rank's rows carry it where at least KNOWN of them have it (a step whose events were given up on, or captured
# into a CUDA graph, has None: it takes the median of the rank's others in the window).
KNOWN = 0.8
PARTS = ("own", "data", "cpu", "offcpu", "transfer", "work", "preempted", "blocked", "awake", "gpu")
CAUSE_OF = {
    "data": "input",
    "cpu": "device",
    "offcpu": "host",
    "transfer": "communication",
    "blocked": "host",
    "gpu": "device",
}
# Where the ranks run on CUDA and their device time is known (`on_device`), the training thread's CPU time no
# longer stands for the device's work: it is the host's (Python, the kernel launches, the CPU side of the
# optimizer, and any spinning while it waits for the device), and names `host`.
CAUSE_ON_DEVICE = {**CAUSE_OF, "cpu": "host"}
GPU = PARTS.index("gpu")
TRANSFER = PARTS.index("transfer")
# The own work less the waiting for a CPU: what the rank did or waited for by itself. Where ranks share cores
# (more ranks than cores) one that sleeps in next() hands its core to the others and waits less for it
# later, so its own work is longer by less than the sleep and varies with the sharing; this is not.
WORK = PARTS.index("work")
OFFCPU = PARTS.index("offcpu")
# The times the kernel took the CPU from the training thread while it could still run (its involuntary context
# switches, `record`'s ``preempted``; 0 where a rank does not record them): a count, judged by its mean (small
# integers, whose median moves in whole steps), never a cause of its own (`CONFIRMED`).
PREEMPTED = PARTS.index("preempted")
COUNT_PARTS = ("preempted",)
# The time asleep or blocked is what is left of the compute once its CPU time and the waiting for a CPU are taken
# out, and both are counted over more than the compute: the CPU time of the DDP reduction's window (from the last
# gradient to the end of the backward, counted as collectives) and the run-queue wait of the whole step (its
# wake-ups after next() and the collectives). On a healthy step it is below 0: about -1 ms on a quiet 2-core VM,
# -1 to -9 ms loaded (2026-12, the kept recordings s35-2r-quiet and s35-2r). It is kept as it is, never held
# at 0, so only its difference to the peers' and to the rank's usual difference counts: held at 0, a loop asleep
# 0.75 ms per step (5% of the step) never showed (quiet: 0 of 4 episodes named; as it is, its excess stood at
# 0.5-0.8 ms per step, 3-5 standard errors, on 75-85% of the steps).
BLOCKED = PARTS.index("blocked")
# The own work less the time asleep or blocked (`AWAKE`): what is left where a peer's waiting for this rank sits in
# its compute, asleep, not in a collective the watch compared arrivals at. A rank whose blocking all-reduce ends
# late leaves it after its peer, and the peer then waits for it later in the step (with DDP on gloo, 2 ranks, a
# loaded 2-core VM: the peer's time asleep or blocked 2 ms per step longer than usual while the slow rank's
# exits were 3 ms later, 2026-12-03, the kept recording s37-2r): against that peer the slow rank's own work is
# longer by only what the peer's hidden waiting leaves. Never a cause of its own (`verdict.PEERS_ASLEEP`).
AWAKE = PARTS.index("awake")


def _window_rows(window: Mapping[int, Mapping[str, Any]]) -> tuple[dict[int, list], int]:
    """The ranks' rows of one window, and the steps every rank has."""
    rows = {rank: data["rows"] for rank, data in window.items() if data.get("rows")}
    return rows, min((len(r) for r in rows.values()), default=0)


def _step_gaps(window: Mapping[int, Mapping[str, Any]]) -> list[tuple[dict[int, float], dict[int, float]]]:
    """`_arrival_gaps` of each step every rank has."""
    rows, steps = _window_rows(window)
    return [_arrival_gaps({rank: table[index][4] for rank, table in rows.items()}) for index in range(steps)]


def rank_windows(
    window: Mapping[int, Mapping[str, Any]], gaps: list[tuple[dict, dict]] | None = None
) -> dict[int, RankWindow]:
    """Each rank's medians of one window, from the published rows ``{rank: {"host", "rows"}}`` (``gaps``:
    its `_step_gaps`, when already worked out)."""
    rows, steps = _window_rows(window)
    late: dict[int, list[float]] = {rank: [] for rank in rows}
    wait: dict[int, list[float]] = {rank: [] for rank in rows}
    last: dict[int, int] = {rank: 0 for rank in rows}
    for step_late, step_wait in gaps if gaps is not None else _step_gaps(window):
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
        step = median(r[0] for r in table)
        data = median(r[1] for r in table)
        comm = median(r[2] for r in table)
        compute = median(max(0.0, r[0] - r[1] - r[2]) for r in table)
        cpu = median(r[3] for r in table)
        rank_late = median(late[rank]) if len(late[rank]) * 2 >= steps and steps else None
        rank_wait = median(wait[rank]) if rank_late is not None else None
        transfer = max(0.0, comm - rank_wait) if rank_wait is not None else comm
        waits = wait[rank] if len(wait[rank]) == steps else [rank_wait or 0.0] * steps
        spread = {
            "data": mad([r[1] for r in table]),
            "compute": mad([max(0.0, r[0] - r[1] - r[2]) for r in table]),
            "transfer": mad([max(0.0, r[2] - w) for r, w in zip(table, waits, strict=True)]),
        }
        result[rank] = RankWindow(
            rank, str(window[rank].get("host", "?")), step, data, comm, compute, cpu, rank_late, rank_wait,
            transfer, last[rank] / max(1, len(late[rank])), spread, _per_step(window[rank], steps),
            _cpus(window[rank]), _device(table),
        )  # fmt: skip
    return result


def _device_times(table: list[list]) -> list[float] | None:
    """A rank's device time per row (record's ``device``, the last field), the unknown ones at the median of the
    known; None where fewer than `KNOWN` of the rows have it (a CPU rank, a recording from before the field)."""
    values = [float(row[8]) if len(row) > 8 and isinstance(row[8], (int, float)) else None for row in table]
    known = [v for v in values if v is not None]
    if not known or len(known) < KNOWN * len(values):
        return None
    middle = median(known)
    return [middle if v is None else v for v in values]


def _device(table: list[list]) -> float | None:
    """The median device time of a rank's rows, None where fewer than `KNOWN` of them have it."""
    values = _device_times(table)
    return median(values) if values is not None else None


def on_device(window: Mapping[int, Mapping[str, Any]]) -> bool:
    """Whether every rank's rows of the window (the steps every rank has) carry their device time (`KNOWN`)."""
    rows, steps = _window_rows(window)
    return len(rows) >= 2 and steps > 0 and all(_device(table[:steps]) is not None for table in rows.values())


def on_cuda(window: Mapping[int, Mapping[str, Any]]) -> bool:
    """Whether any rank's row of the window carries a device time: the ranks train on CUDA."""
    return any(
        len(row) > 8 and isinstance(row[8], (int, float))
        for data in window.values()
        for row in data.get("rows") or ()
    )


def _cpus(figures: Mapping[str, Any]) -> frozenset[int] | None:
    """The CPUs the rank published (`record`'s ``cpus``), or None where it did not or they are not numbers."""
    cpus = figures.get("cpus")
    if not isinstance(cpus, list) or not cpus or not all(isinstance(c, int) for c in cpus):
        return None
    return frozenset(cpus)


def sharing_cpus(ranks: Mapping[int, RankWindow]) -> dict[int, tuple[int, frozenset[int]]]:
    """The ranks that share CPUs with more ranks than there are CPUs among them: rank -> (how many ranks,
    which CPUs) of the ranks on its host whose CPUs overlap its own (itself included). Ranks without
    published CPUs are none of them."""
    on_host: dict[str, list[RankWindow]] = {}  # judged every window: each rank against its host's, not all
    for r in ranks.values():
        if r.cpus is not None:
            on_host.setdefault(r.host, []).append(r)
    result = {}
    for rank, mine in ranks.items():
        if mine.cpus is None:
            continue
        near = [r for r in on_host[mine.host] if r.cpus & mine.cpus]
        cpus = frozenset().union(*(r.cpus for r in near))
        if len(near) > len(cpus):
            result[rank] = (len(near), cpus)
    return result


def _per_step(figures: Mapping[str, Any], steps: int) -> float | None:
    """The rank's other threads' waiting for a CPU per step over the window (`record`'s ``threads_waited``),
    or None where it was not read (not Linux, or a recording from before it was)."""
    waited = figures.get("threads_waited")
    return float(waited) / steps if isinstance(waited, (int, float)) and steps else None


def _late_exits(exits: Mapping[int, list]) -> dict[int, float]:
    """One step's lateness leaving the collectives, per rank: at each blocking collective every rank noted
    leaving (matched as in `_arrival_gaps`), its exit minus the earliest exit, summed over the step. Ranks
    leave a collective together, whoever arrived last; one that leaves later spent longer in it itself."""
    by_collective: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for rank, noted in exits.items():
        seen: dict[str, int] = {}
        for group, _wall, *out in noted or ():
            place = seen.get(group, 0)
            seen[group] = place + 1
            if group != "?" and out:
                by_collective.setdefault((group, place), []).append((rank, out[0]))
    late: dict[int, float] = {}
    for there in by_collective.values():
        if len(there) < 2 or len(there) < len(exits):
            continue
        first = min(w for _, w in there)
        for rank, wall in there:
            late[rank] = late.get(rank, 0.0) + wall - first
    return late


def _arrival_gaps(
    arrivals: Mapping[int, list],
) -> tuple[dict[int, float], dict[int, float]]:
    """One step's lateness and wait per rank: at each collective (matched across ranks by group and its
    place among the step's collectives of that group), a rank is late by its arrival minus the earliest and
    waits the latest arrival minus its own; summed over the step."""
    by_collective: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for rank, noted in arrivals.items():
        seen: dict[str, int] = {}
        for group, wall, *_out in noted or ():
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


def step_parts(
    window: Mapping[int, Mapping[str, Any]], gaps: list[tuple[dict, dict]] | None = None
) -> dict[int, list[tuple[float, ...]]]:
    """Each rank's `PARTS` step by step, from the published rows ``{rank: {"host", "rows"}}`` (``gaps``: its
    `_step_gaps`, when already worked out). The wait is the arrival skew at the step's collectives; where a
    step has no collective to compare, all the time in collectives counts as waiting (never as the rank's own
    work, so a victim is never made slow by it)."""
    rows, steps = _window_rows(window)
    gaps = gaps if gaps is not None else _step_gaps(window)
    device = (
        {rank: _device_times(table[:steps]) for rank, table in rows.items()} if on_device(window) else None
    )
    parts: dict[int, list[tuple[float, ...]]] = {rank: [] for rank in rows}
    for index in range(steps):
        noted = {rank: table[index][4] for rank, table in rows.items()}
        wait = gaps[index][1]
        exits = _late_exits(noted)
        for rank, table in rows.items():
            row = table[index]
            step, data, comm, cpu = (float(v) for v in row[:4])
            waited = min(comm, wait[rank]) if rank in wait else comm
            compute = max(0.0, step - data - comm)
            kept_off = float(row[5]) if len(row) > 5 and row[5] is not None else compute - cpu
            transfer = exits.get(rank, comm - waited)
            preempted = float(row[7]) if len(row) > 7 and row[7] is not None else 0.0
            # not held at 0: a healthy step's figure is below it (`BLOCKED`), and a sleep shorter than that
            # would not show; 0 where the waiting for a CPU is compute less CPU
            blocked = compute - cpu - kept_off
            own = step - waited
            gpu = device[rank][index] if device else 0.0
            parts[rank].append(
                (own, data, cpu, kept_off, transfer, own - kept_off, preempted, blocked, own - blocked, gpu)
            )
    return parts


def judge_window(number: int, window: Mapping[int, Mapping[str, Any]]) -> WindowVerdict:
    """One window's medians per rank and its per-step parts; `judge_stretch` over the latest windows says
    who the straggler is (`Tracker` does both)."""
    gaps = _step_gaps(window)
    ranks = rank_windows(window, gaps)
    steps = min((len(data.get("rows") or []) for data in window.values()), default=0)
    first = min((int(data.get("first_step", 0)) for data in window.values()), default=0)
    return WindowVerdict(
        number,
        ranks,
        steps=steps,
        parts=step_parts(window, gaps),
        first_step=first,
        on_device=on_device(window),
        on_cuda=on_cuda(window),
    )
