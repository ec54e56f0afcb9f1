"""`torchdoctor net --find-bad` over many runs: does it blame the right link or rank, and nobody in a healthy job?

Planted, each for real: one bit flipped in one rank's result, one rank sharing its core with busy processes
(tests/net_faults.py), and — as root, with iproute2 and tc — four network-namespace hosts on one bridge with one
host's link throttled to 100 mbit by `tc tbf`, or none. Prints per case: runs, right blame, wrong blame, rounds
and seconds of the search (median), and the whole run's wall time.

    python benchmarks/find_bad_sweep.py                      # 10 healthy, 5 of each fault, 3 + 3 over hosts
    python benchmarks/find_bad_sweep.py --healthy 20 --each 10 --hosts 5
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))


def forked(faults: str, nproc: int) -> tuple[dict, float]:
    """One `net --find-bad` run of ``nproc`` forked ranks with ``faults`` planted; (report, seconds)."""
    env = {**os.environ, "NET_FAULTS": faults, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT / "src")])}
    command = [
        sys.executable,
        str(TESTS / "net_faults.py"),
        "--json",
        "--find-bad",
        f"--nproc-per-node={nproc}",
    ]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="findbad-sweep-") as folder:  # where the pair picture goes
        done = subprocess.run(
            [*command, "--timeout=60"], capture_output=True, text=True, env=env, timeout=300, cwd=folder
        )
    return _report(done.stdout, done.stderr), time.monotonic() - started


def _report(out: str, err: str) -> dict:
    """The JSON report of a run, or one saying the run gave none (its stderr's end shown)."""
    try:
        return json.loads(out)
    except ValueError:
        print(f"a run gave no report: {err.strip()[-500:]}", file=sys.stderr)
        return {"findings": [{"id": "no_report", "status": "fail", "summary": err[-200:], "details": {}}]}


def over_hosts(slow: int | None) -> tuple[dict, float]:
    """One run over four namespace hosts, host ``slow`` throttled (or none); rank 0's report."""
    from test_net_find_bad import _remove, make_hosts, run_on_hosts

    hosts, made = make_hosts(secrets.token_hex(2), slow=slow)
    try:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="findbad-sweep-") as folder:
            outputs = run_on_hosts(hosts, 300, Path(folder))
        seconds = time.monotonic() - started
    finally:
        _remove(made)
    for _, out, _ in outputs:
        report = _report(out, "") if out.strip() else {"findings": []}
        if any(f["id"] != "net.find_bad" or f["status"] != "skip" for f in report["findings"][1:]):
            report["hosts"] = [h[1] for h in hosts]
            return report, seconds
    return {"findings": [], "hosts": [h[1] for h in hosts]}, seconds


def blamed(report: dict) -> list[tuple[str, object]]:
    """(finding id, rank or host) of every blame in a report."""
    found = []
    for finding in report["findings"]:
        if finding["id"] == "no_report":
            found.append(("no report", None))
        elif finding["id"] == "net.slow_link":
            found.append((finding["id"], finding["details"]["host"]))
        elif finding["id"] in ("net.slow_rank", "net.silent_corruption"):
            found.append((finding["id"], finding["details"]["rank"]))
    return found


def search(report: dict) -> tuple[int, float]:
    """(rounds, seconds) of the search, from whichever verdict carries them."""
    for finding in report["findings"]:
        details = finding.get("details", {})
        if "rounds" in details and "seconds" in details:
            rounds = details["rounds"]
            return (len(rounds) if isinstance(rounds, list) else rounds), details["seconds"]
    return 0, 0.0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--healthy", type=int, default=10, help="healthy forked runs")
    parser.add_argument("--each", type=int, default=5, help="runs of each planted fault")
    parser.add_argument(
        "--hosts", type=int, default=3, help="runs over namespace hosts, throttled and healthy each"
    )
    args = parser.parse_args()
    cases = [("healthy, 4 ranks", lambda: forked("", 4), [])] * args.healthy
    cases += [
        ("bit flipped on rank 2 of 4", lambda: forked("2:flip_bit", 4), [("net.silent_corruption", 2)])
    ] * args.each
    cases += [
        ("rank 1 of 3 shares its core", lambda: forked("1:busy_core", 3), [("net.slow_rank", 1)])
    ] * args.each
    if os.geteuid() == 0 and args.hosts:
        cases += [("4 hosts, healthy", lambda: over_hosts(None), [])] * args.hosts
        cases += [("4 hosts, host 2 at 100 mbit", lambda: over_hosts(2), "host2")] * args.hosts
    table: dict[str, dict] = {}
    for name, run, expected in cases:
        report, seconds = run()
        got = blamed(report)
        if expected == "host2":
            expected = [("net.slow_link", report["hosts"][2])]
        row = table.setdefault(
            name, {"runs": 0, "right": 0, "wrong": 0, "rounds": [], "search": [], "wall": []}
        )
        row["runs"] += 1
        row["right"] += got == expected
        row["wrong"] += any(blame not in expected for blame in got)
        rounds, searched = search(report)
        row["rounds"].append(rounds)
        row["search"].append(searched)
        row["wall"].append(seconds)
        print(f"{name}: blamed {got or 'nobody'} in {seconds:.0f} s", file=sys.stderr, flush=True)
    print(f"{'case':<30} {'runs':>4} {'right':>5} {'wrong':>5} {'rounds':>6} {'search s':>8} {'run s':>6}")
    for name, row in table.items():
        print(
            f"{name:<30} {row['runs']:>4} {row['right']:>5} {row['wrong']:>5} {statistics.median(row['rounds']):>6g} "
            f"{statistics.median(row['search']):>8.1f} {statistics.median(row['wall']):>6.0f}"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
