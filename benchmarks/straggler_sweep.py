"""How well `torchdoctor launch --stragglers` names a planted straggler, and how often it names one in a
healthy run.

Real gloo ranks run tests/straggler_train.py (DDP, a DataLoader, SGD) under ``torchdoctor launch
--stragglers``. One rank gets a fault in episodes: in every PERIOD steps it is off for OFF steps, then on for
the rest — a slower data loader (input), extra matmuls (device), a busy process on its core taking AMOUNT of
the step in CPU time while it computes (host: every rank pinned to a core of its own, ``--pin``), or its
all-reduces ending late (communication, planted under torch.distributed by tests/straggler_faults), or, with
``--faults sleep``, a loop that sleeps before its forward (host: asleep outside next() and the collectives) — at 5%,
10% and 30% of the measured step. The first FIRST steps of a run are healthy (warm-up, then each rank's usual
difference to its peers is taken), so the episodes start at FIRST + OFF. The planted rank cycles over the ranks
from run to run (``--planted-rank`` fixes it): rank 0, the one that reads and judges the windows, is planted as
often as the others. An episode is *named* when a verdict line names the planted rank within 50 steps of the
fault's start; *right cause* when that line gives the planted cause (else the causes it gave are tallied as
*wrong causes*). Healthy runs count every verdict as a false alarm. A verdict naming another rank than the
planted one is a victim named when that rank waited for another over the stretch named (it arrived at the
collectives before the latest), else a rank slower for real that was not planted (the machine's other work).

    python benchmarks/straggler_sweep.py                 # the full sweep (long: run it niced)
    python benchmarks/straggler_sweep.py --quick         # one run per fault at 30%, 300 healthy steps
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from torchdoctor.stragglers.verdict import BASELINE, STRETCH, WARMUP

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "straggler_train.py"
FAULTS_DIR = ROOT / "tests" / "straggler_faults"
EXPECTED = {"input": "input", "compute": "device", "host": "host", "comm": "communication", "sleep": "host"}
PERIOD, OFF, WITHIN, FIRST = 100, 40, 50, 100


def run(
    ranks: int, steps: int, env: dict[str, str], keep: Path | None = None
) -> tuple[list[dict], str, float, dict[int, dict[int, float | None]]]:
    """One launch; the verdicts it said, its stderr, the seconds it took, each window's lateness per rank
    (`waited_for`). With ``keep``, the run's raw windows and what was planted are kept in a folder of their own
    there (``straggler_replay.py`` judges them again)."""
    with tempfile.TemporaryDirectory(prefix="straggler-sweep-") as out:
        full = dict(os.environ, STEPS=str(steps), **env)
        full["PYTHONPATH"] = os.pathsep.join([str(FAULTS_DIR), str(ROOT / "src"), full.get("PYTHONPATH", "")])
        command = [sys.executable, "-m", "torchdoctor", "launch", "--nproc-per-node", str(ranks), "--stragglers",
                   "--stragglers-dir", out, str(SCRIPT)]  # fmt: skip
        began = time.monotonic()
        done = _launch(command, full)
        seconds = time.monotonic() - began
        report = Path(out) / "stragglers.json"
        if done.returncode != 0 or not report.exists():
            sys.stderr.write(done.stderr[-3000:])
            raise SystemExit(f"run failed ({done.returncode}): {env}")
        found = json.loads(report.read_text())["findings"][0]
        late = {
            w["window"]: {int(r): ms for r, ms in w["late_ms"].items()}
            for w in found.get("details", {}).get("windows", [])
        }
        if keep is not None:
            kept = keep / f"run{len(list(keep.glob('run*'))):03d}"
            kept.mkdir(parents=True)
            shutil.copy(Path(out) / "stragglers-windows.jsonl", kept)
            (kept / "run.json").write_text(json.dumps({"ranks": ranks, "steps": steps, **env}) + "\n")
        return found.get("details", {}).get("verdicts", []), done.stderr, seconds, late


def _launch(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one launch; on Ctrl-C or the 30-minute limit, stop it as a terminal would (SIGTERM: the launch
    stops its ranks) and wait for it, rather than kill it and leave its ranks running."""
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as launch:
        try:
            stdout, stderr = launch.communicate(timeout=1800)
        except (KeyboardInterrupt, subprocess.TimeoutExpired):
            launch.terminate()
            try:
                launch.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                launch.kill()
            raise
    return subprocess.CompletedProcess(command, launch.returncode, stdout, stderr)


def waited_for(verdict: dict, late: dict[int, dict[int, float | None]]) -> bool:
    """Whether the rank a verdict names arrived last at the collectives over the stretch it names (the median
    of its windows' lateness, ms, the largest of the ranks'): the others waited for it. A rank named that
    waited for another is a victim; one the others waited for was slower, planted or not (the machine's
    other work can slow a rank too)."""
    windows = [
        late[w] for w in range(verdict["window"] - STRETCH // 10 + 1, verdict["window"] + 1) if w in late
    ]
    medians = {}
    for rank in {r for figures in windows for r in figures}:
        values = sorted(f[rank] for f in windows if f.get(rank) is not None)
        if values:
            medians[rank] = values[len(values) // 2]
    return bool(medians) and medians.get(verdict["rank"], -1.0) >= max(medians.values())


def score_planted(
    verdicts: list[dict],
    slow: int,
    fault: str,
    steps: int,
    late: dict[int, dict[int, float | None]] | None = None,
) -> tuple[dict[str, int], Counter, list[bool]]:
    """Per episode: named in time, with the right cause; verdicts naming another rank (with each window's
    lateness per rank, ``late``: split into victims, ranks that waited for another, and ranks the others
    waited for — `waited_for`; without it all are victims); the causes named for the planted rank in episodes
    where none was right; and, in the run's order, whether each episode was named (a missed episode's steps
    may enter the rank's usual figures and hide the next one)."""
    episodes = [
        (start + OFF, start + PERIOD)
        for start in range(0, steps, PERIOD)
        if start + OFF >= FIRST and start + OFF < steps - 10
    ]
    named = right = 0
    wrong: Counter = Counter()
    in_order = []
    for begin, _end in episodes:
        hits = [
            v for v in verdicts if v["rank"] == slow and begin < (v["window"] + 1) * 10 <= begin + WITHIN + 1
        ]
        named += bool(hits)
        in_order.append(bool(hits))
        good = any(v["cause"] == EXPECTED[fault] for v in hits)
        right += good
        if hits and not good:
            wrong.update(v["cause"] for v in hits)
    others = [v for v in verdicts if v["rank"] != slow]
    slower = sum(late is not None and waited_for(v, late) for v in others)
    scores = {"episodes": len(episodes), "named": named, "right": right, "victims": len(others) - slower}
    return {**scores, "unplanted": slower}, wrong, in_order


def _stop(signum: int, _frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="2,4", help="rank counts, comma-separated")
    parser.add_argument(
        "--steps",
        type=int,
        default=500,
        help=f"steps per planted run (the first {FIRST} healthy; 4 episodes in 500)",
    )
    parser.add_argument(
        "--planted-rank",
        type=int,
        default=None,
        help="the rank planted in every run (default: 0, 1, ... run by run)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="planted runs per fault and amount")
    parser.add_argument("--healthy-steps", type=int, default=10_000)
    parser.add_argument("--healthy-run", type=int, default=1000, help="steps per healthy run")
    parser.add_argument("--faults", default="input,compute,host,comm")
    parser.add_argument("--amounts", default="0.05,0.1,0.3")
    parser.add_argument(
        "--pin",
        choices=("host", "all", "none"),
        default="host",
        help="pin every rank to a core of its own (PIN=1, tests/straggler_train.py): in the host runs (a busy "
        "process on the planted rank's core then slows that rank, not its peers), in every run, or in none",
    )
    parser.add_argument(
        "--busy-session",
        choices=("rank", "own"),
        default="rank",
        help="the host plant's busy process in the planted rank's session (it takes its CPU from that rank "
        "alone) or in one of its own (from whoever runs on the core: the kernel then moved the machine's "
        "other work to the peer's core, which waited longer than the planted rank)",
    )
    parser.add_argument(
        "--busy",
        choices=("step", "share", "duty"),
        default="step",
        help="the host plant's busy process takes AMOUNT of the measured step in CPU time each step, from the "
        "planted rank's core while it computes (the whole step about AMOUNT slower: 4-9%% for 5%%, 9-17%% for "
        "10%% in session 43); or AMOUNT of the planted rank's CPU time (session 24-42: much of it taken while "
        "the rank waited, a 10%% plant slowed the step by 0-4%%), or is busy for 2 * AMOUNT of the wall clock (earlier rounds: a loaded rank 23-28%% slower "
        "for 5%%)",
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep every run's raw windows here, to judge them again"
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stop)  # stopped by kill as by Ctrl-C: the running launch stops its ranks
    if args.quick:
        args.amounts, args.steps, args.healthy_steps, args.healthy_run = "0.3", 300, 300, 300
    load = os.getloadavg()[0]
    counts = [int(n) for n in args.ranks.split(",")]
    print(
        f"# {args.ranks} gloo ranks on {os.cpu_count()} cores, load average {load:.1f} at the start; "
        f"model width {os.environ.get('WIDTH', '256')}; ranks pinned: {args.pin}; "
        f"host's busy process in the {args.busy_session} session, by {args.busy}",
        flush=True,
    )
    print(HEADER, flush=True)
    tally = Tally()
    runs = 0
    faults = [f for f in args.faults.split(",") if f]  # --faults "": the healthy runs only
    cells = [(r, f, a) for r in counts for f in faults for a in args.amounts.split(",")]
    for ranks, fault, amount in cells:
        for _repeat in range(args.repeats):
            slow = args.planted_rank if args.planted_rank is not None else runs % ranks
            runs += 1
            env = {
                "FAULT": fault,
                "AMOUNT": amount,
                "SLOW_RANK": str(slow),
                "PERIOD": str(PERIOD),
                "OFF": str(OFF),
                "SLOW_FROM": str(FIRST),
                **_pinned(args.pin, fault),
            }
            if fault == "host":
                env.update(BUSY_SESSION=args.busy_session, BUSY=args.busy)
            verdicts, _, took, late = run(ranks, args.steps, env, args.keep)
            tally.planted(ranks, fault, amount, slow, args.steps, verdicts, took, late)
        tally.print_cell(ranks, fault, amount)
    tally.print_planted()
    healthy_steps = 0
    while healthy_steps < args.healthy_steps:
        ranks = counts[(healthy_steps // args.healthy_run) % len(counts)]
        verdicts, _, _, late = run(ranks, args.healthy_run, _pinned(args.pin, ""), args.keep)
        healthy_steps += args.healthy_run
        tally.healthy(ranks, args.healthy_run, verdicts, late)
        print(
            f"  healthy so far: {healthy_steps} steps ({ranks} ranks this run), {tally.alarms} alarms, "
            f"load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    tally.print_healthy()


def _pinned(pin: str, fault: str) -> dict[str, str]:
    """The environment that pins every rank to a core of its own in this run (``--pin``), or none."""
    return {"PIN": "1"} if pin == "all" or (pin == "host" and fault == "host") else {}


HEADER = (
    "ranks  fault    amount  planted  episodes  named  right cause  victims named  others slower  seconds  "
    "wrong causes"
)


class Tally:
    """The sweep's counts, run by run (`planted`, `healthy`), and its tables (`print_*`): shared by the sweep
    and by `straggler_replay.py`, which judges kept runs again."""

    def __init__(self) -> None:
        self.cells: dict[tuple, dict] = {}
        self.by_order: dict[int, list[bool]] = {}  # the n-th episode of a run: named or not, over every run
        self.healthy_steps = self.alarms = self.judged = self.alarms_waited_for = 0
        self.by_cause: Counter = Counter()

    def planted(self, ranks: int, fault: str, amount: str, slow: int, steps: int, verdicts: list[dict],
                seconds: float = 0.0, late: dict | None = None) -> None:  # fmt: skip
        """Count one planted run; print each verdict naming another rank than the planted one, and whether
        the others waited for it (``late``: each window's lateness per rank, `waited_for`)."""
        cell = self.cells.setdefault(
            (ranks, fault, amount),
            {
                "episodes": 0,
                "named": 0,
                "right": 0,
                "victims": 0,
                "unplanted": 0,
                "seconds": 0.0,
                "planted": [],
                "wrong": Counter(),
            },
        )
        scores, wrong, in_order = score_planted(verdicts, slow, fault, steps, late)
        for key, value in scores.items():
            cell[key] += value
        cell["seconds"] += seconds
        cell["planted"].append(slow)
        cell["wrong"].update(wrong)
        for n, was_named in enumerate(in_order):
            self.by_order.setdefault(n, []).append(was_named)
        for verdict in verdicts:
            if verdict["rank"] != slow:
                what = (
                    "slower, not planted"
                    if late is not None and waited_for(verdict, late)
                    else "victim named"
                )
                print(f"  {what} (planted rank {slow}): {verdict['line']}", flush=True)

    def print_cell(self, ranks: int, fault: str, amount: str) -> None:
        """One row of the planted table."""
        cell = self.cells[(ranks, fault, amount)]
        print(
            f"{ranks:>5}  {fault:<8} {float(amount):>5.0%}  {','.join(map(str, cell['planted'])):>7}  "
            f"{cell['episodes']:>8}  {cell['named']:>5}  {cell['right']:>11}  {cell['victims']:>13}  "
            f"{cell['unplanted']:>13}  "
            f"{(format(cell['seconds'], '.0f') if cell['seconds'] else '-'):>7}  "  # replayed runs took no time
            + (", ".join(f"{c} {n}" for c, n in cell["wrong"].most_common()) or "-"),
            flush=True,
        )

    def print_planted(self, load: bool = True) -> None:
        """The planted runs' totals and the episodes by their place in the run (and the load average now)."""
        totals = {
            key: sum(cell[key] for cell in self.cells.values())
            for key in ("episodes", "named", "right", "victims", "unplanted")
        }
        if not totals["episodes"]:
            return
        wrong = sum((cell["wrong"] for cell in self.cells.values()), Counter())
        print(
            f"planted: named within {WITHIN} steps {totals['named']}/{totals['episodes']} "
            f"({totals['named'] / totals['episodes']:.0%}), right cause {totals['right']}/{totals['episodes']} "
            f"({totals['right'] / totals['episodes']:.0%}), victims named {totals['victims']} (ranks that waited "
            f"for another), others named {totals['unplanted']} (not planted; the others waited for them); "
            "wrong causes: "
            + (", ".join(f"{cause} {n}" for cause, n in wrong.most_common()) or "none")
            + (f"; load average {os.getloadavg()[0]:.1f}" if load else ""),
            flush=True,
        )
        print(
            "  named by the episode's place in its run: "
            + ", ".join(f"#{n + 1} {sum(seen)}/{len(seen)}" for n, seen in sorted(self.by_order.items())),
            flush=True,
        )

    def healthy(self, ranks: int, steps: int, verdicts: list[dict], late: dict | None = None) -> None:
        """Count one healthy run; print each verdict as a false alarm with its figures (and, with ``late``,
        count those naming the rank the others waited for: `waited_for`)."""
        self.healthy_steps += steps
        self.judged += max(0, steps - WARMUP - BASELINE)  # the first steps are never judged
        self.alarms += len(verdicts)
        self.alarms_waited_for += sum(late is not None and waited_for(v, late) for v in verdicts)
        for verdict in verdicts:
            self.by_cause[f"{verdict['cause']} (rank {verdict['rank']} of {ranks})"] += 1
            print(
                f"  false alarm ({ranks} ranks, step {(verdict['window'] + 1) * 10}): {verdict['line']}",
                flush=True,
            )
            print(f"    {verdict.get('figures', '')}", flush=True)

    def print_healthy(self, load: bool = True) -> None:
        """The healthy runs' false alarms per 10,000 steps (and the load average now)."""
        if not self.healthy_steps:
            return
        print(
            f"healthy: {self.alarms} false alarms in {self.healthy_steps} steps ({self.judged} judged) = "
            f"{self.alarms * 10_000 / self.healthy_steps:.1f} per 10,000 steps "
            f"({self.alarms * 10_000 / max(1, self.judged):.1f} per 10,000 judged; "
            f"{self.alarms_waited_for} of them the rank the others waited for)"
            + (f"; load average {os.getloadavg()[0]:.1f} at the end" if load else ""),
            flush=True,
        )
        if self.by_cause:
            print(
                "  by cause: " + ", ".join(f"{what} {n}" for what, n in self.by_cause.most_common()),
                flush=True,
            )


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as stopped:  # Ctrl-C or SIGTERM (a time limit): the cells printed so far stand
        sys.exit(
            f"straggler_sweep: stopped ({stopped or 'Ctrl-C'}); the cells above are the runs that finished"
        )
