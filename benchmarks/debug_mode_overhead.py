"""What debug mode costs per collective: all_reduce of a small and a medium tensor on 2 ranks over gloo.

Measured in one run, side by side: plain ``torch.distributed.all_reduce`` without and with
``torchdoctor.distributed.debug.enable()``, and ``reduce(..., "sum")`` from torchdoctor and from accelerate,
each with debug mode off and on. Prints microseconds per call, the ratios, and the store requests each rank
made per call while a case ran (counted by a wrapper around the job's store, its clones included: the
watcher thread's and the stack responder's requests count too).

    python benchmarks/debug_mode_overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import timedelta

from intervals import median_interval  # benchmarks/intervals.py, beside this file

SIZES = {"small (8 floats)": 8, "medium (1M floats, 4 MB)": 1 << 20}
ROUNDS = 9
PAIRS = dict(zip(SIZES, (4000, 2000), strict=True))  # call-by-call pairs (a tenth with --quick)


def worker(iterations: dict[str, int]) -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    from accelerate.state import PartialState
    from accelerate.utils import reduce as accelerate_reduce

    import torchdoctor.distributed as td
    from torchdoctor.distributed import debug, groups

    state = PartialState(cpu=True)
    assert state.distributed_type.value == "MULTI_CPU", state.distributed_type
    requests = [0]
    job_store = groups.job_store(dist)
    groups.job_store = lambda _dist: Counting(job_store, requests)  # every request of ours goes through it

    def torch_all_reduce(t):
        dist.all_reduce(t)

    def torchdoctor_reduce(t):
        td.reduce(t, reduction="sum")

    def accelerate_sum(t):
        accelerate_reduce(t, reduction="sum")

    def set_modes(torchdoctor_on: bool, accelerate_on: bool, torch_checked: bool) -> None:
        os.environ["TORCHDOCTOR_DEBUG_MODE"] = "1" if torchdoctor_on else "0"
        state.debug = accelerate_on  # PartialState reads ACCELERATE_DEBUG_MODE once; switch it for this run
        debug.enable() if torch_checked else debug.disable()

    cases = [
        ("torch.distributed.all_reduce", torch_all_reduce, (False, False, False)),
        ("  … after torchdoctor debug.enable()", torch_all_reduce, (False, False, True)),
        ("torchdoctor.distributed.reduce, debug off", torchdoctor_reduce, (False, False, False)),
        ("torchdoctor.distributed.reduce, debug on", torchdoctor_reduce, (True, False, True)),
        ("accelerate.utils.reduce, debug off", accelerate_sum, (False, False, False)),
        ("accelerate.utils.reduce, debug on", accelerate_sum, (False, True, False)),
    ]
    # Rounds of every case in turn, and the fastest round (as timeit does): other load on the machine only
    # ever adds time, and it hits all cases alike.
    results: dict[str, dict[str, float]] = {}
    for size_name, numel in SIZES.items():
        tensor = torch.ones(numel)
        n = iterations[size_name]
        per_call: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        cpu_per_call: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        asked: dict[str, list[int]] = {name: [0, 0] for name, _, _ in cases}  # store requests, calls
        for _ in range(ROUNDS):
            for name, call, modes in cases:
                set_modes(*modes)
                call(tensor)  # warm-up
                dist.barrier()
                before = requests[0]
                start, cpu_start = time.perf_counter(), time.process_time()
                for _ in range(n):
                    call(tensor)
                per_call[name].append((time.perf_counter() - start) / n * 1e6)
                cpu_per_call[name].append((time.process_time() - cpu_start) / n * 1e6)
                asked[name][0] += requests[0] - before
                asked[name][1] += n
        for name, times in per_call.items():
            results.setdefault(name, {})[size_name] = min(times)
            results.setdefault(f"cpu: {name}", {})[size_name] = min(cpu_per_call[name])
            results.setdefault(f"requests: {name}", {})[size_name] = asked[name][0] / asked[name][1]

    # The hot path alone: the checked wrapper around a collective replaced by a no-op, against the no-op itself
    # (both ranks make the same calls, so their fingerprints stay equal). Load adds to both alike.
    def nothing(*args, **kwargs):
        return None

    checked_nothing = debug._checked("all_reduce", nothing)
    small = torch.ones(8)
    checked_nothing(small)  # new: checks in once
    hot: dict[str, list[float]] = {"no-op": [], "checked no-op": []}
    for _ in range(ROUNDS):
        for name, call in (("no-op", nothing), ("checked no-op", checked_nothing)):
            start = time.perf_counter()
            for _ in range(20000):
                call(small)
            hot[name].append((time.perf_counter() - start) / 20000 * 1e6)
    results["hot path"] = {"µs per repeated call": min(hot["checked no-op"]) - min(hot["no-op"])}
    set_modes(False, False, False)
    results["paired"] = paired_calls(dist, torch, debug, iterations)
    if dist.get_rank() == 0:
        print(json.dumps(results), flush=True)
    dist.destroy_process_group()


def paired_calls(dist, torch, debug, iterations: dict[str, int]) -> dict[str, dict[str, float]]:
    """Plain and checked ``all_reduce`` call by call, in alternating order (plain first, then checked first),
    each call timed alone: whatever the machine does at a moment falls on both alike, and the median of the
    pairs' differences is what the check adds. Both ranks make the same calls in the same order."""
    plain = dist.all_reduce  # debug mode is off here: the original
    checked = debug._checked("all_reduce", plain)
    out: dict[str, dict[str, float]] = {}
    for size_name, numel in SIZES.items():
        tensor = torch.ones(numel)
        pairs = PAIRS[size_name] // (10 if iterations["quick"] else 1)
        checked(tensor)  # its first call checks in with the other rank
        plain(tensor)
        dist.barrier()
        times: dict[str, list[float]] = {"plain": [], "checked": []}
        differences, cpu_differences = [], []
        cpu_times: dict[str, list[float]] = {"plain": [], "checked": []}
        for i in range(pairs):
            order = (
                (("plain", plain), ("checked", checked))
                if i % 2 == 0
                else (("checked", checked), ("plain", plain))
            )
            took, cpu = {}, {}
            for name, call in order:
                start, cpu_start = time.perf_counter(), time.thread_time()
                call(tensor)
                took[name] = (time.perf_counter() - start) * 1e6
                cpu[name] = (time.thread_time() - cpu_start) * 1e6
                times[name].append(took[name])
                cpu_times[name].append(cpu[name])
            differences.append(took["checked"] - took["plain"])
            cpu_differences.append(cpu["checked"] - cpu["plain"])
        plain_median = statistics.median(times["plain"])
        out[size_name] = {
            "pairs": pairs,
            "plain": plain_median,
            "checked": statistics.median(times["checked"]),
            "added": statistics.median(differences),
            "added_low": _quantile(differences, 0.25),
            "added_high": _quantile(differences, 0.75),
            "added_ci": median_interval(differences, resamples=500),
            "cpu_plain": statistics.median(cpu_times["plain"]),
            "cpu_checked": statistics.median(cpu_times["checked"]),
            "cpu_added": statistics.median(cpu_differences),
            "cpu_added_low": _quantile(cpu_differences, 0.25),
            "cpu_added_high": _quantile(cpu_differences, 0.75),
        }
    return out


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Counting:
    """A store that counts every request made through it or through its clones."""

    def __init__(self, inner, counter: list[int]) -> None:
        self.inner, self.counter = inner, counter

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name == "clone":
            return lambda: Counting(attr(), self.counter)
        if not callable(attr):
            return attr

        def counted(*args, **kwargs):
            self.counter[0] += 1
            return attr(*args, **kwargs)

        return counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (about 10 s)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return

    import torch.distributed as dist

    iterations = {**dict(zip(SIZES, (30, 3) if args.quick else (150, 10), strict=True)), "quick": args.quick}
    # the job's store lives here, as torchrun's agent hosts it
    store = dist.TCPStore("127.0.0.1", 0, 2, True, timedelta(seconds=300), wait_for_workers=False)
    env = {
        **os.environ,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(store.port),
        "WORLD_SIZE": "2",
        "LOCAL_WORLD_SIZE": "2",
        "TORCHELASTIC_USE_AGENT_STORE": "True",
        "OMP_NUM_THREADS": "1",
    }
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", json.dumps(iterations)],
            env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
            stdout=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
    ]
    outputs = [proc.communicate(timeout=600)[0] for proc in procs]
    if any(proc.returncode for proc in procs):
        sys.exit(f"a worker failed: exit codes {[p.returncode for p in procs]}")
    results = json.loads(outputs[0].strip().splitlines()[-1])

    sizes = list(SIZES)
    print(
        f"debug-mode cost per collective, 2 ranks, gloo on CPU, {os.cpu_count()} cores, fastest of {ROUNDS} rounds"
    )
    print(f"{'':44}" + "".join(f"{name:>28}" for name in sizes))
    hot_path = results.pop("hot path")["µs per repeated call"]
    paired = results.pop("paired")
    for name, row in results.items():
        if not name.startswith(("requests: ", "cpu: ")):
            print(f"{name:44}" + "".join(f"{row[s]:>25.1f} µs" for s in sizes))
    print()
    print("CPU time per call, rank 0's process (every thread: gloo's, the watcher's), fastest round: what")
    print("debug mode adds is CPU work, and CPU time moves less than wall time when others share the cores")
    for name in ("torch.distributed.all_reduce", "  … after torchdoctor debug.enable()"):
        row = results[f"cpu: {name}"]
        print(f"{name:44}" + "".join(f"{row[s]:>25.1f} µs" for s in sizes))
    print()
    print("store requests per rank per call, rank 0, over every round (its first call checks in: 2 requests)")
    for name in ("  … after torchdoctor debug.enable()", "torchdoctor.distributed.reduce, debug on"):
        row = results[f"requests: {name}"]
        print(f"{name:44}" + "".join(f"{row[s]:>28.4f}" for s in sizes))
    print()
    ratios = [
        (
            "torch all_reduce: checked / plain",
            "  … after torchdoctor debug.enable()",
            "torch.distributed.all_reduce",
        ),
        (
            "torchdoctor reduce: debug on / off",
            "torchdoctor.distributed.reduce, debug on",
            "torchdoctor.distributed.reduce, debug off",
        ),
        (
            "accelerate reduce: debug on / off",
            "accelerate.utils.reduce, debug on",
            "accelerate.utils.reduce, debug off",
        ),
        (
            "debug on: torchdoctor / accelerate",
            "torchdoctor.distributed.reduce, debug on",
            "accelerate.utils.reduce, debug on",
        ),
    ]
    print(
        f"hot path of a repeated checked call (wrapper around a no-op, less the no-op): {hot_path:.2f} µs, "
        f"{hot_path / results['torch.distributed.all_reduce'][sizes[0]] * 100:.1f}% of this run's 8-float "
        "all_reduce (the same load slows both)"
    )
    print()
    for label, top, bottom in ratios:
        print(f"{label:44}" + "".join(f"{results[top][s] / results[bottom][s]:>27.2f}x" for s in sizes))
    print()
    print("call by call: plain and checked all_reduce alternating, each call timed alone (medians; the added")
    print(
        "time is the median of the pairs' differences, with its quartiles; the ratio's 95% interval bootstrapped)"
    )
    for s in sizes:
        row = paired[s]
        low, high = row["added_ci"]
        print(
            f"  {s:26} {row['pairs']:>5} pairs: plain {row['plain']:8.1f} µs, checked {row['checked']:8.1f} µs, "
            f"added {row['added']:+7.1f} µs [{row['added_low']:+.0f}, {row['added_high']:+.0f}] "
            f"= {(row['plain'] + row['added']) / row['plain']:.3f}x "
            f"(95%: {(row['plain'] + low) / row['plain']:.3f}–{(row['plain'] + high) / row['plain']:.3f}x)"
        )
        print(
            f"  {'':26} calling thread's CPU time: plain {row['cpu_plain']:.1f} µs, checked {row['cpu_checked']:.1f} µs, added {row['cpu_added']:+7.1f} µs "
            f"[{row['cpu_added_low']:+.0f}, {row['cpu_added_high']:+.0f}] "
            f"= {(row['plain'] + row['cpu_added']) / row['plain']:.3f}x of the plain call's wall time"
        )
    top, bottom = (
        results["cpu:   … after torchdoctor debug.enable()"],
        results["cpu: torch.distributed.all_reduce"],
    )
    print(
        f"{'torch all_reduce, CPU time: checked / plain':44}"
        + "".join(f"{top[s] / bottom[s]:>27.2f}x" for s in sizes)
    )


if __name__ == "__main__":
    main()
