"""What a sequential test (a one-sided CUSUM) on each part would name in kept sweep runs, before writing a rule.

For every rank and part, each step's excess over the peers' median (`verdict._excess`, the load both share
taken out step by step) less the rank's usual median of it, in units of its usual step-to-step spread (1.4826
median absolute deviations of the usual steps, `verdict.Usual`, as the replay has them at that window),
clipped at ``--clip`` (a stall is one step, not evidence of a slowdown), is summed from where it last fell to 0:
S = max(0, S + z - k). The part alarms when S reaches h (S then starts again from 0). For each part and (k, h):
the planted episodes whose rank alarmed on that part within 50 steps of the fault's start, and the alarms in
the healthy runs (per 10,000 steps, as the sweep counts false alarms) and on the ranks not planted in the planted
runs. The part alone, none of the verdict's other tests (session 37: docs/stragglers-measurements.md):

    python benchmarks/straggler_cusum.py runs/sweep     # folders given to straggler_sweep.py --keep
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from straggler_sweep import FIRST, OFF, PERIOD, WITHIN  # noqa: E402

from torchdoctor.stragglers.stats import mad, median  # noqa: E402
from torchdoctor.stragglers.verdict import WARMUP, Tracker, _excess  # noqa: E402
from torchdoctor.stragglers.window import PARTS, judge_window  # noqa: E402

JUDGED = ("own", "work", "data", "cpu", "offcpu", "transfer", "preempted", "blocked")


def alarms(kept: Path, grid: list[tuple[float, float]], clip: float) -> dict:
    """(part, k, h) -> rank -> the windows (numbers) at whose end the part alarmed, each window judged against the
    usual figures the replay's `Tracker` had before it."""
    tracker = Tracker()
    sums: dict = defaultdict(float)
    found: dict = defaultdict(lambda: defaultdict(list))
    with open(kept, encoding="utf-8") as lines:
        for line in lines:
            kept_window = json.loads(line)
            window = {int(rank): figures for rank, figures in kept_window["ranks"].items()}
            verdict = judge_window(int(kept_window["window"]), window)
            usual = tracker.usual
            if verdict.first_step >= WARMUP and usual.ready():
                for rank, rows in _excess(verdict).items():
                    history = usual.steps.get(rank) or []
                    if len(history) < 30:
                        continue
                    for name in JUDGED:
                        k = PARTS.index(name)
                        column = [row[k] for row in history]
                        middle = median(column)
                        spread = 1.4826 * mad(column) or 1e-9
                        for step in rows:
                            z = max(-clip, min(clip, (step[k] - middle) / spread))
                            for slack, high in grid:
                                key = (name, slack, high, rank)
                                sums[key] = max(0.0, sums[key] + z - slack)
                                if sums[key] >= high:
                                    sums[key] = 0.0
                                    found[(name, slack, high)][rank].append(verdict.window)
            tracker.feed(verdict)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--slack", default="0.25,0.5", help="k values, comma-separated (standard deviations)")
    parser.add_argument("--high", default="6,8,10,12,15", help="h values, comma-separated")
    parser.add_argument("--clip", type=float, default=3.0)
    args = parser.parse_args()
    grid = [(float(k), float(h)) for k in args.slack.split(",") for h in args.high.split(",")]
    runs = sorted(r for f in args.folders for r in f.glob("run*") if (r / "run.json").is_file())
    named: dict = defaultdict(
        lambda: defaultdict(lambda: [0, 0])
    )  # (part,k,h) -> (fault, amount) -> [named, of]
    healthy: dict = defaultdict(int)
    others: dict = defaultdict(int)
    healthy_steps = 0
    for run in runs:
        facts = json.loads((run / "run.json").read_text())
        found = alarms(run / "stragglers-windows.jsonl", grid, args.clip)
        if "FAULT" not in facts:
            healthy_steps += facts["steps"]
            for key in {(n, k, h) for n in JUDGED for k, h in grid}:
                healthy[key] += sum(len(w) for w in found.get(key, {}).values())
            continue
        slow = int(facts["SLOW_RANK"])
        starts = [s + OFF for s in range(0, facts["steps"], PERIOD) if FIRST <= s + OFF < facts["steps"] - 10]
        for key in {(n, k, h) for n in JUDGED for k, h in grid}:
            windows = found.get(key, {})
            for begin in starts:
                hit = any(begin < (w + 1) * 10 <= begin + WITHIN + 1 for w in windows.get(slow, []))
                cell = named[key][(facts["FAULT"], facts["AMOUNT"])]
                cell[0] += hit
                cell[1] += 1
            others[key] += sum(len(w) for r, w in windows.items() if r != slow)
    cells = sorted({c for per in named.values() for c in per})
    print(f"# {len(runs)} runs, {healthy_steps} healthy steps; clip {args.clip}")
    print("part       k     h  healthy/10k  others  " + "  ".join(f"{f}-{float(a):.0%}" for f, a in cells))
    for name in JUDGED:
        for slack, high in grid:
            key = (name, slack, high)
            rate = healthy[key] * 10_000 / max(1, healthy_steps)
            row = "  ".join(
                f"{named[key][c][0]}/{named[key][c][1]}".rjust(len(f"{c[0]}-{float(c[1]):.0%}"))
                for c in cells
            )
            print(f"{name:<9} {slack:4.2f} {high:5.1f}  {rate:11.1f}  {others[key]:6d}  {row}")


if __name__ == "__main__":
    main()
