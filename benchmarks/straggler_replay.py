"""Judge the runs a straggler sweep kept again, with today's rules, and print the sweep's tables.

``straggler_sweep.py --keep DIR`` keeps each run's raw windows (``stragglers-windows.jsonl``, as rank 0 read
them) and what was planted (``run.json``) in a folder of its own under DIR. Judging them again costs seconds,
not the hour the runs took, and judges every rule change on the same steps: the load of the machine at the
time is in the recording, the same for both sides. A change measured this way still has to hold in a live
sweep (the recording cannot show what a rule would do to the ranks' timing, only to the verdicts).

    python benchmarks/straggler_sweep.py --ranks 2 --repeats 2 --keep runs/sweep   # once, live
    python benchmarks/straggler_replay.py runs/sweep                                 # after every change
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from straggler_sweep import HEADER, Tally  # noqa: E402 - the sweep's own scoring and tables

from torchdoctor.stragglers.aggregate import judge_kept  # noqa: E402
from torchdoctor.stragglers.verdict import rank_windows  # noqa: E402


def lateness(kept: Path) -> dict[int, dict[int, float | None]]:
    """Each kept window's median lateness per rank at the collectives, ms (as the run's report has it)."""
    late = {}
    with open(kept, encoding="utf-8") as lines:
        for line in lines:
            window = json.loads(line)
            ranks = rank_windows({int(rank): figures for rank, figures in window["ranks"].items()})
            late[int(window["window"])] = {
                rank: None if r.late is None else r.late * 1000 for rank, r in ranks.items()
            }
    return late


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders given to straggler_sweep.py --keep")
    args = parser.parse_args()
    runs = sorted(
        run for folder in args.folders for run in folder.glob("run*") if (run / "run.json").is_file()
    )
    if not runs:
        raise SystemExit(f"no kept runs (run*/run.json) in {', '.join(map(str, args.folders))}")
    tally = Tally()
    planted = []
    for run in runs:
        facts = json.loads((run / "run.json").read_text())
        said = judge_kept(run / "stragglers-windows.jsonl").said
        late = lateness(run / "stragglers-windows.jsonl")
        if "FAULT" in facts:
            cell = (facts["ranks"], facts["FAULT"], facts["AMOUNT"])
            tally.planted(*cell, int(facts["SLOW_RANK"]), facts["steps"], said, late=late)
            if cell not in planted:
                planted.append(cell)
        else:
            tally.healthy(facts["ranks"], facts["steps"], said, late)
    print(f"# {len(runs)} kept runs judged again", flush=True)
    if planted:
        print(HEADER)
        for cell in planted:
            tally.print_cell(*cell)
        tally.print_planted(load=False)
    tally.print_healthy(load=False)


if __name__ == "__main__":
    main()
