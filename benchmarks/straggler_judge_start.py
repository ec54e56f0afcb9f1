"""What rank 0's straggler judge costs a launch in CPU, forked from rank 0 (`judge.start`, what ``launch
--stragglers`` does since 2026-12-03) side by side with a fresh interpreter (`judge.start_fresh`, what it did
before: torch imported again in the judge).

One kept 2-rank run (tests/fixtures/stragglers/input-5pc-rank0, its first ``--windows`` windows) is set in a
TCPStore this process holds, as the ranks would have set it; a judge is started, told where the windows are
and told to finish, as rank 0 does; its CPU is this process's children's (``RUSAGE_CHILDREN``) once it has
been waited for. The two ways alternate, ``--repeats`` times each; each run checks that the judge said its
summary. Prints each run, the load beside it, and the medians with their ratio.

    python benchmarks/straggler_judge_start.py [--repeats 3] [--windows 20]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import torch.distributed as dist

from torchdoctor.stragglers import judge
from torchdoctor.stragglers.record import end_key, window_key

KEPT = (
    Path(__file__).resolve().parents[1] / "tests/fixtures/stragglers/input-5pc-rank0/stragglers-windows.jsonl"
)


def one_run(start, windows: list[dict], number: int) -> tuple[float, float]:
    """CPU seconds and wall seconds of one judge started with ``start``, over ``windows``."""
    store = dist.TCPStore(
        "127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=timedelta(seconds=60)
    )
    prefix = f"torchdoctor/judge-start/{number}"
    prefixed = dist.PrefixStore(prefix, store)
    for window in windows:
        for rank, payload in window["ranks"].items():
            prefixed.set(window_key(window["window"], int(rank)), json.dumps(payload))
    for rank in (0, 1):
        prefixed.set(
            end_key(rank), json.dumps({"last_window": windows[-1]["window"], "steps": 10 * len(windows)})
        )
    with tempfile.TemporaryFile() as said_there:
        before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        process = start(None, said_there.fileno())
        judge.connect(process, "127.0.0.1", store.port, prefix, 2)
        problems: list[str] = []
        judge.finish(process, problems.append, timeout=300)
        after, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic() - began
        said_there.seek(0)
        text = said_there.read().decode(errors="replace")
    if problems or "steps on 2 ranks" not in text:
        sys.exit(f"the judge ({start.__name__}) did not say its summary: {problems or text[-500:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--windows", type=int, default=20)
    args = parser.parse_args()
    windows = [json.loads(line) for line in KEPT.read_text().splitlines()][: args.windows]
    judge.NICENESS = 0  # what it costs, not how long it waits for a core behind the ranks
    cpu: dict[str, list[float]] = {"fork": [], "fresh": []}
    number = 0
    for repeat in range(args.repeats):
        for name, start in (("fork", judge.start), ("fresh", judge.start_fresh)):
            number += 1
            load = os.getloadavg()[0]
            seconds, wall = one_run(start, windows, number)
            cpu[name].append(seconds)
            print(f"{name:5} run {repeat + 1}: {seconds:.2f} s of CPU, {wall:.2f} s wall (load {load:.1f})")
    fork, fresh = statistics.median(cpu["fork"]), statistics.median(cpu["fresh"])
    print(f"median CPU per judge: forked {fork:.3f} s, fresh interpreter {fresh:.3f} s "
          f"({fresh / max(fork, 1e-9):.0f}x; {fresh - fork:.2f} s saved per launch)")  # fmt: skip


if __name__ == "__main__":
    main()
