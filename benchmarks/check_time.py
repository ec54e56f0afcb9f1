"""How long `torchdoctor check` takes next to `python -m torch.utils.collect_env`, in one run.

Both are run as a user would, as fresh processes, in alternating order over a few rounds, so that drifts in
machine load hit both alike. Printed per tool: the median wall time, and the median CPU time of the process
and its children (steadier on a shared machine), then the ratios.

    python benchmarks/check_time.py              # 5 rounds
    python benchmarks/check_time.py --rounds 9

Goal (issue 13): check <= 1.5x collect_env. `check` includes `net.smoke`, a real two-process gloo test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

TOOLS = {
    "torchdoctor check": [sys.executable, "-m", "torchdoctor", "check", "--json"],
    "collect_env": [sys.executable, "-m", "torch.utils.collect_env"],
}


def timed(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command and its children, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env={**os.environ})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {name: [] for name in TOOLS}
    cpus: dict[str, list[float]] = {name: [] for name in TOOLS}
    smoke = None
    for round_ in range(args.rounds):
        order = list(TOOLS) if round_ % 2 == 0 else list(reversed(TOOLS))
        for name in order:
            wall, cpu, out = timed(TOOLS[name])
            walls[name].append(wall)
            cpus[name].append(cpu)
            if name == "torchdoctor check":
                found = {f["id"]: f for f in json.loads(out)["findings"]}
                smoke = found.get("net.smoke")
        print(
            f"round {round_ + 1}: " + ", ".join(f"{n} {walls[n][-1]:.2f}s" for n in TOOLS),
            file=sys.stderr,
        )
    check, env = "torchdoctor check", "collect_env"
    print(f"{'':20} {'wall (median)':>14} {'CPU (median)':>14}   over {args.rounds} alternating rounds")
    for name in TOOLS:
        print(f"{name:20} {statistics.median(walls[name]):13.2f}s {statistics.median(cpus[name]):13.2f}s")
    wall_ratio = statistics.median(walls[check]) / statistics.median(walls[env])
    cpu_ratio = statistics.median(cpus[check]) / statistics.median(cpus[env])
    print(f"{'check / collect_env':20} {wall_ratio:13.2f}x {cpu_ratio:13.2f}x   (goal: <= 1.5x)")
    if smoke is not None:
        print(f"net.smoke: {smoke['status']}: {smoke['summary']}")


if __name__ == "__main__":
    main()
