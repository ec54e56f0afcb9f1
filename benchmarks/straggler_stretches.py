"""How far each signal stands out over stretches of 40 steps in kept runs: the planted rank in its episodes
against every rank of the healthy runs (and the ranks not planted), in standard errors.

For each rank, its per-step difference to the median of its peers, less its usual difference (the median over
steps 20-99, no less than nothing, as the verdict's usual), over the 40 steps that end at each window; the
median and its standard error for the times (own work, CPU time, waiting for a CPU, work without it, the
waiting's share of the compute), the mean and its standard error for the counts (times put on a CPU, times
the CPU was taken while the thread could run: small integers, whose median moves in whole steps). For an
episode, the largest over the stretches that end within 50 steps of its start; for a healthy rank, the largest
over the run. What a rule on a signal could tell apart, before writing it:

    python benchmarks/straggler_stretches.py runs/sweep        # folders given to straggler_sweep.py --keep
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from straggler_sweep import FIRST, OFF, PERIOD, WITHIN  # noqa: E402

from torchdoctor.stragglers.stats import median_and_error  # noqa: E402
from torchdoctor.stragglers.window import step_parts  # noqa: E402

# signal -> where it is: a part of `step_parts` ("part", index), a field of the raw row ("row", index), the
# waiting for a CPU's share of the compute ("share"), or the waiting for the peers, the step less the own work
# ("waited": a rank the others wait for waits less than they do)
SIGNALS = {
    "own": ("part", 0),
    "cpu": ("part", 2),
    "offcpu": ("part", 3),
    "transfer": ("part", 4),
    "work": ("part", 5),
    "switched": ("row", 6),
    "preempted": ("row", 7),
    "offshare": ("share", None),
    "waited": ("waited", None),
}
COUNTS = ("switched", "preempted")


def per_step(kept: Path) -> dict[int, dict[int, dict[str, float | None]]]:
    """rank -> the script's step -> each signal."""
    found: dict[int, dict[int, dict[str, float | None]]] = {}
    with open(kept, encoding="utf-8") as lines:
        for line in lines:
            window = {int(r): figures for r, figures in json.loads(line)["ranks"].items()}
            for rank, rows in step_parts(window).items():
                first = int(window[rank].get("first_step", 0))
                for index, part in enumerate(rows):
                    raw = window[rank]["rows"][index]
                    values: dict[str, float | None] = {}
                    for name, (kind, at) in SIGNALS.items():
                        if kind == "part":
                            values[name] = part[at]
                        elif kind == "waited":
                            values[name] = float(raw[0]) - part[0]
                        elif kind == "row":
                            values[name] = raw[at] if len(raw) > at and raw[at] is not None else None
                        else:
                            compute = part[2] + part[3]
                            values[name] = part[3] / compute if compute > 0 else None
                    found.setdefault(rank, {})[first + index + 1] = values  # record step k: script step k + 1
    return found


def _mean_and_error(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), max(statistics.pstdev(values) / math.sqrt(len(values)), 1e-5)


def stretches(found: dict, rank: int, name: str) -> dict[int, float]:
    """The step each stretch of 40 ends at -> how far the rank's signal stands out (standard errors)."""
    steps = set.intersection(*(set(by_step) for by_step in found.values()))
    difference = {}
    for step in sorted(steps):
        mine = found[rank][step][name]
        others = sorted(found[r][step][name] for r in found if r != rank and found[r][step][name] is not None)
        if mine is not None and others:
            difference[step] = mine - statistics.median(others)
    middle = _mean_and_error if name in COUNTS else median_and_error
    usual = [value for step, value in difference.items() if 20 <= step < FIRST]
    if len(usual) < 30:
        return {}
    usual_middle, usual_error = middle(usual)
    usual_middle = max(0.0, usual_middle)
    result = {}
    for end in range(FIRST, max(difference) + 2, 10):
        values = [difference[s] - usual_middle for s in range(end - 40, end) if s in difference]
        if len(values) >= 30:
            value, error = middle(values)
            result[end] = value / math.hypot(error, usual_error)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders given to straggler_sweep.py --keep")
    args = parser.parse_args()
    print(
        "# standard errors out; EP: a planted rank's episode, H: a healthy run's rank, P: a rank not planted"
    )
    for run in sorted(
        run for folder in args.folders for run in folder.glob("run*") if (run / "run.json").is_file()
    ):
        facts = json.loads((run / "run.json").read_text())
        found = per_step(run / "stragglers-windows.jsonl")
        slow = int(facts["SLOW_RANK"]) if "SLOW_RANK" in facts else None
        what = (
            f"{facts.get('FAULT', 'healthy')} {float(facts.get('AMOUNT', 0)):.0%}"
            if slow is not None
            else "healthy"
        )
        for rank in sorted(found):
            out = {name: stretches(found, rank, name) for name in SIGNALS}
            if rank == slow:
                for start in range(FIRST + OFF, facts["steps"] - 10, PERIOD):
                    ends = range(start + 10, start + WITHIN + 1, 10)
                    best = {
                        n: max((out[n][e] for e in ends if e in out[n]), default=math.nan) for n in SIGNALS
                    }
                    print(f"EP {run.name} {what} rank {rank} from step {start}: "
                          + " ".join(f"{n} {v:+.1f}" for n, v in best.items()))  # fmt: skip
            else:
                top = {n: max(out[n].values(), default=math.nan) for n in SIGNALS}
                print(f"{'H' if slow is None else 'P'}  {run.name} {what} rank {rank}: largest "
                      + " ".join(f"{n} {v:+.1f}" for n, v in top.items()))  # fmt: skip


if __name__ == "__main__":
    main()
