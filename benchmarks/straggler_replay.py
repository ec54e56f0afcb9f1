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
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from straggler_stretches import COUNTS, per_step  # noqa: E402 - the signals per step of a kept run
from straggler_sweep import FIRST, HEADER, OFF, PERIOD, Tally  # noqa: E402 - the sweep's scoring and tables

from torchdoctor.stragglers.aggregate import judge_kept  # noqa: E402
from torchdoctor.stragglers.stats import median_and_error  # noqa: E402
from torchdoctor.stragglers.window import rank_windows  # noqa: E402

# The per-step signals `--signals` prints: the verdict's parts, the times the thread was put on a CPU and
# taken off it while it could run (counts; read per step as straggler_stretches reads them), and the waiting for
# the peers (less than theirs by what the planted rank holds them back: what the fault cost the whole step).
SIGNALS = ("own", "cpu", "offcpu", "transfer", "switched", "preempted", "waited")


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


def signals(kept: Path, slow: int) -> dict[str, tuple[float, float, int]]:
    """What the fault did to the planted rank ``slow``, per signal (`SIGNALS`): its per-step difference to
    the median of its peers, median over the steps with the fault on less the median over the steps with it
    off (both after the first `FIRST`; a step either side of each switch left out), with the standard error
    of that and the number of steps on. ms for times, counts for `COUNTS`. Also the peers' median own work and
    step with the fault off ("peers' own", "step") and their waiting, on less off ("peers waited"): what the
    fault cost the whole step, to hold against what was planted (AMOUNT of the step)."""
    found = per_step(kept)
    on: dict[str, list[float]] = {name: [] for name in SIGNALS}
    off: dict[str, list[float]] = {name: [] for name in SIGNALS}
    peers_own: list[float] = []  # the peers' median own work per step with the fault off, ms
    steps_off: list[float] = []  # and their median step
    peers_waited: dict[bool, list[float]] = {True: [], False: []}  # the peers' median waiting, on and off, ms
    for step, mine in found.get(slow, {}).items():
        place = step % PERIOD
        if step < FIRST or place in (OFF - 1, OFF, PERIOD - 1, 0):
            continue
        peers = [found[r][step] for r in found if r != slow and step in found[r]]
        if not peers:
            continue
        into = on if place > OFF else off
        peers_waited[place > OFF].append(sorted(peer["waited"] for peer in peers)[len(peers) // 2] * 1000)
        if into is off:
            peers_own.append(sorted(peer["own"] for peer in peers)[len(peers) // 2] * 1000)
            steps_off.append(sorted(peer["own"] + peer["waited"] for peer in peers)[len(peers) // 2] * 1000)
        for name in SIGNALS:
            values = [peer[name] for peer in peers]
            if mine[name] is None or any(value is None for value in values):
                continue
            difference = mine[name] - sorted(values)[len(values) // 2]
            into[name].append(difference if name in COUNTS else difference * 1000)
    result = {}
    for name in SIGNALS:
        if len(on[name]) >= 10 and len(off[name]) >= 10:
            (m_on, e_on), (m_off, e_off) = median_and_error(on[name]), median_and_error(off[name])
            result[name] = (m_on - m_off, (e_on**2 + e_off**2) ** 0.5, len(on[name]))
    if peers_own:
        result["peers' own"] = (sorted(peers_own)[len(peers_own) // 2], 0.0, len(peers_own))
        result["step"] = (sorted(steps_off)[len(steps_off) // 2], 0.0, len(steps_off))
    if len(peers_waited[True]) >= 10 and len(peers_waited[False]) >= 10:
        (m_on, e_on), (m_off, e_off) = (
            median_and_error(peers_waited[True]),
            median_and_error(peers_waited[False]),
        )
        result["peers waited"] = (m_on - m_off, (e_on**2 + e_off**2) ** 0.5, len(peers_waited[True]))
    return result


def with_cpus(run: Path, cores: int, into: Path) -> Path:
    """Run ``run``'s kept windows as the ranks publish them since they say their CPUs (2026-11-30), for a
    recording made before: each rank on the machine's ``cores`` CPUs, or in the runs the sweep pinned (its
    default ``--pin host``: the host runs) on core ``rank % cores``, as tests/straggler_train.py pins them.
    Written to ``into``; a recording that has them is returned as it is."""
    kept = run / "stragglers-windows.jsonl"
    pinned = json.loads((run / "run.json").read_text()).get("PIN") == "1"
    lines = []
    with open(kept, encoding="utf-8") as recorded:
        for line in recorded:
            window = json.loads(line)
            for rank, figures in window["ranks"].items():
                if "cpus" in figures:
                    return kept
                figures["cpus"] = [int(rank) % cores] if pinned else list(range(cores))
            lines.append(json.dumps(window))
    into.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into


def print_signals(runs: list[Path]) -> None:
    """One line per planted run: what its fault did to the planted rank's signals against its peers'."""
    print("# the fault on less off, planted rank minus the peers' median per step: median (standard errors)")
    print("ranks  fault    amount  planted  steps on  " + "  ".join(f"{name:>18}" for name in SIGNALS))
    for run in runs:
        facts = json.loads((run / "run.json").read_text())
        if "FAULT" not in facts:
            continue
        found = signals(run / "stragglers-windows.jsonl", int(facts["SLOW_RANK"]))
        n = max((count for _, _, count in found.values()), default=0)
        base = found.get("peers' own", (0.0, 0.0, 0))[0]
        step = found.get("step", (0.0, 0.0, 0))[0]
        cells = [
            f"{found[name][0]:+8.2f} ({found[name][0] / found[name][1]:+5.1f} se)" if name in found else "-"
            for name in SIGNALS
        ]
        print(
            f"{facts['ranks']:>5}  {facts['FAULT']:<8} {float(facts['AMOUNT']):>5.0%}  {facts['SLOW_RANK']:>7}  "
            f"{n:>8}  "
            + "  ".join(f"{cell:>18}" for cell in cells)
            + (
                f"  own {found['own'][0] / base:+.1%} of the peers' {base:.0f} ms"
                if base and "own" in found
                else ""
            )
            + (
                f", held them back {-found['waited'][0] / step:+.1%} of the step, their waiting "
                f"{found['peers waited'][0] / step:+.1%} ({float(facts['AMOUNT']):.0%} planted)"
                if step and "waited" in found and "peers waited" in found
                else ""
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders given to straggler_sweep.py --keep")
    parser.add_argument(
        "--signals",
        action="store_true",
        help="also print, per planted run, what the fault did to the planted rank's own work, CPU time, "
        "waiting for a CPU, times put on a CPU and times the CPU was taken from it, against its peers (ms, counts)",
    )
    parser.add_argument(
        "--cores",
        type=int,
        help="judge recordings made before the ranks published their CPUs as if they had, on a machine of "
        "CORES CPUs (`with_cpus`)",
    )
    args = parser.parse_args()
    runs = sorted(
        run for folder in args.folders for run in folder.glob("run*") if (run / "run.json").is_file()
    )
    if not runs:
        raise SystemExit(f"no kept runs (run*/run.json) in {', '.join(map(str, args.folders))}")
    tally = Tally()
    planted = []
    folder = tempfile.TemporaryDirectory(prefix="straggler-replay-")  # removed when the script ends
    scratch = Path(folder.name)
    for run in runs:
        facts = json.loads((run / "run.json").read_text())
        kept = run / "stragglers-windows.jsonl"
        if args.cores:
            kept = with_cpus(run, args.cores, scratch / "windows.jsonl")
        said = judge_kept(kept).said
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
    if args.signals:
        print_signals(runs)


if __name__ == "__main__":
    main()
