"""How debug mode's cost grows with the number of ranks: store requests per checked collective, and time.

Real gloo jobs of 2, 4 and 8 ranks on this machine (the store hosted by this process, as torchrun's agent hosts
it). Every rank's store is wrapped in a counter of requests (calls) and of keys they touch, and runs:

- checked ``all_reduce`` calls with the design in ``src/`` (``add`` to a counter named after the fingerprint;
  the rank that completes it sets one ``ok`` key the others wait for), and with the design it replaced, kept here only for comparison: each rank writes its entry,
  reads every other rank's (``multi_get``), deletes its previous one;
- ``in_order`` log messages (a token passed from rank to rank through the store);
- timings, fastest of several alternating rounds: plain ``all_reduce`` of 8 floats and of 1M floats (4 MB), the
  same checked by each design, and, for the record, the design rejected by measurement and by reason: one tiny
  all-reduce of fingerprints before each collective (it would pair with whatever collective another rank is in,
  e.g. DDP's own, so a mismatch could still hang).

    python benchmarks/debug_mode_scaling.py [--quick] [--ranks 2 4 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from datetime import timedelta

SIZES = {"8 floats": 8, "4 MB": 1 << 20}


class CountingStore:
    """Forwards every call to ``store``, counting calls (requests) and the keys each one touches."""

    def __init__(self, store, counts: Counter) -> None:
        self._store = store
        self.counts = counts

    def clone(self):
        return CountingStore(self._store.clone(), self.counts)

    def __getattr__(self, name):
        attr = getattr(self._store, name)
        if not callable(attr) or name in ("set_timeout", "timeout"):
            return attr

        def counted(*args, **kwargs):
            self.counts["requests"] += 1
            keys = args[0] if args and isinstance(args[0], list) else [args[0]] if args else []
            self.counts["keys"] += len(keys)
            return attr(*args, **kwargs)

        return counted


def old_check_collective(store, seq: int, me: int, size: int, entry: dict, timeout: float = 300) -> None:
    """The design before this one: set my entry, read everyone else's, delete my previous one (N + 1 keys)."""
    prefix = "bench/old/world"
    store.set(f"{prefix}/{seq}/{me}", json.dumps(entry))
    values = store.multi_get([f"{prefix}/{seq}/{r}" for r in range(size) if r != me])
    entries = {me: entry}
    for rank, value in zip([r for r in range(size) if r != me], values, strict=True):
        entries[rank] = json.loads(value)
    if seq > 1:
        store.delete_key(f"{prefix}/{seq - 1}/{me}")
    if any(e["shape"] != entry["shape"] for e in entries.values()):
        raise RuntimeError("mismatch")


def worker(options: dict) -> None:
    import logging

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    import torchdoctor.distributed.logging as td_logging
    from torchdoctor.distributed import debug, groups
    from torchdoctor.distributed.call_site import call_site
    from torchdoctor.distributed.signature import _one

    me, size = dist.get_rank(), dist.get_world_size()
    counts: Counter = Counter()
    real_store = dist.distributed_c10d._get_default_store()
    store = CountingStore(real_store, counts)
    old_store = CountingStore(real_store.clone(), counts)  # the old design read through a clone too
    old_store._store.set_timeout(timedelta(seconds=300))
    groups.job_store = lambda _dist: store  # the new design, unchanged, on the counting store
    td_logging._store = lambda: store
    plain = dist.all_reduce
    old_seq = [0]

    def checked_new(t):
        debug.check_collective("torch.distributed.all_reduce", {**_one(t), "reduce op": "SUM"})
        plain(t)

    def checked_old(t):
        old_seq[0] += 1
        entry = {"operation": "torch.distributed.all_reduce", "site": call_site(), **_one(t)}
        old_check_collective(old_store, old_seq[0], me, size, entry)
        plain(t)

    fingerprint = torch.zeros(2, dtype=torch.int64)

    def fingerprint_collective(t):
        fingerprint[0], fingerprint[1] = 12345, -12345
        plain(fingerprint, op=dist.ReduceOp.MAX)
        plain(t)

    logger = td_logging.get_logger("bench.in_order", log_level="INFO")
    logger.logger.addHandler(logging.NullHandler())
    logger.logger.propagate = False

    def in_order_message(_t):
        logger.info("step", in_order=True)

    results: dict = {"rank": me, "requests": {}, "us": {}}
    small = torch.ones(8)
    for name, call in (("new", checked_new), ("old", checked_old), ("in_order", in_order_message)):
        call(small)  # warm-up, and the responder thread's one standing wait
        dist.barrier()
        counts.clear()
        n = options["count_calls"]
        for _ in range(n):
            call(small)
        # a call that made no request leaves the counter empty: 0 of each, not a missing key
        results["requests"][name] = {k: counts.get(k, 0) / n for k in ("requests", "keys")}
        dist.barrier()

    cases = {
        "plain all_reduce": plain,
        "checked, new design": checked_new,
        "checked, old design": checked_old,
        "fingerprint all_reduce first (rejected)": fingerprint_collective,
    }
    for size_name, numel in SIZES.items():
        tensor = torch.ones(numel)
        n = options["iterations"][size_name]
        per_call: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(options["rounds"]):
            for name, call in cases.items():
                call(tensor)
                dist.barrier()
                start = time.perf_counter()
                for _ in range(n):
                    call(tensor)
                per_call[name].append((time.perf_counter() - start) / n * 1e6)
        results["us"][size_name] = {name: min(times) for name, times in per_call.items()}
    times = []
    for _ in range(options["rounds"]):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(options["messages"]):
            in_order_message(None)
        times.append((time.perf_counter() - start) / options["messages"] * 1e6)
    results["us"]["in_order message"] = min(times)
    print(json.dumps(results), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def run_job(size: int, options: dict) -> list[dict]:
    import torch.distributed as dist

    store = dist.TCPStore("127.0.0.1", 0, size, True, timedelta(seconds=600), wait_for_workers=False)
    env = {
        **os.environ,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(store.port),
        "WORLD_SIZE": str(size),
        "LOCAL_WORLD_SIZE": str(size),
        "TORCHELASTIC_USE_AGENT_STORE": "True",
        "OMP_NUM_THREADS": "1",
    }
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", json.dumps(options)],
            env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
            stdout=subprocess.PIPE,
            text=True,
        )
        for rank in range(size)
    ]
    try:
        outputs = [proc.communicate(timeout=900)[0] for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if any(proc.returncode for proc in procs):
        sys.exit(f"a worker of the {size}-rank job failed: exit codes {[p.returncode for p in procs]}")
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    options = {
        "count_calls": 20,
        "iterations": {"8 floats": 50 if args.quick else 200, "4 MB": 3 if args.quick else 10},
        "rounds": 3 if args.quick else 7,
        "messages": 10 if args.quick else 40,
    }
    jobs = {size: run_job(size, options) for size in args.ranks}

    print(
        f"debug mode vs ranks: gloo on CPU, {os.cpu_count()} cores, fastest of {options['rounds']} rounds\n"
    )
    print("store requests (keys touched) per checked collective")
    print(f"{'ranks':>5}  {'old: per rank':>16} {'old: job':>14}  {'new: per rank':>16} {'new: job':>14}")
    for size, ranks in jobs.items():
        row = []
        for design in ("old", "new"):
            requests = sum(r["requests"][design]["requests"] for r in ranks)
            keys = sum(r["requests"][design]["keys"] for r in ranks)
            row.append(f"{requests / size:>7.2f} ({keys / size:>5.2f})")
            row.append(f"{requests:>6.1f} ({keys:>5.1f})")
        print(f"{size:>5}  {row[0]:>16} {row[1]:>14}  {row[2]:>16} {row[3]:>14}")
    print("\nin_order logging: store requests per message, and time per message")
    print(f"{'ranks':>5}  {'per rank':>9} {'job':>6}  {'µs/message':>11} {'µs/message/rank':>16}")
    for size, ranks in jobs.items():
        requests = sum(r["requests"]["in_order"]["requests"] for r in ranks)
        us = ranks[0]["us"]["in_order message"]
        print(f"{size:>5}  {requests / size:>9.2f} {requests:>6.1f}  {us:>11.0f} {us / size:>16.0f}")
    for size, ranks in jobs.items():
        timing = ranks[0]["us"]
        print(f"\nµs per all_reduce, {size} ranks (rank 0)")
        print(f"{'':42}" + "".join(f"{name:>22}" for name in SIZES))
        for case in timing["8 floats"]:
            cells = []
            for name in SIZES:
                us, base = timing[name][case], timing[name]["plain all_reduce"]
                cells.append(f"{us:>10.0f} µs ({us / base:4.2f}x)")
            print(f"{case:42}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
