"""Do `torchdoctor net --bench` figures agree with a plain torch.distributed timing loop?

One job of 2 gloo ranks (started here through ``torch.distributed.run``); for each message size, rounds
alternate between torchdoctor's ``time_collective`` + nccl-tests formulas and a plain loop written out
below (barrier, time N all_reduce calls, busbw = size / t * 2(n-1)/n). Prints both busbw figures, side by
side, and their ratio (1.00 = agreement); the median over rounds.

    python benchmarks/net_bandwidth.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

SIZES = (64 * 2**10, 2**20, 16 * 2**20, 64 * 2**20)
QUICK_SIZES = (2**20, 16 * 2**20)


def plain_busbw(size: int, iters: int) -> float:
    """The loop a person would write: warm up, barrier, time ``iters`` all_reduces, nccl-tests' busbw."""
    import torch
    import torch.distributed as dist

    n = dist.get_world_size()
    tensor = torch.ones(size // 4)
    dist.all_reduce(tensor)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(tensor)
    elapsed = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    return size / elapsed.item() / 1e9 * 2 * (n - 1) / n


def worker(sizes: tuple[int, ...], iters: int, rounds: int) -> None:
    import torch
    import torch.distributed as dist

    from torchdoctor.net.bandwidth import bandwidth, human_size, time_collective

    dist.init_process_group("gloo")
    n, cpu = dist.get_world_size(), torch.device("cpu")
    lines = []
    for size in sizes:
        ours, plain = [], []
        iters_here = max(iters, 2**22 // size)  # small messages: enough calls to time more than noise
        for round_ in range(rounds):
            for turn in ("ours", "plain") if round_ % 2 == 0 else ("plain", "ours"):  # no order bias
                if turn == "ours":
                    seconds = time_collective("all_reduce", size, cpu, warmup=1, iters=iters_here)
                    ours.append(bandwidth("all_reduce", size, seconds, n)[1])
                else:
                    plain.append(plain_busbw(size, iters_here))
        a, b = statistics.median(ours), statistics.median(plain)
        lines.append(f"{human_size(size):>8} {a:>18.3f} {b:>18.3f} {a / b:>8.2f}")
    if dist.get_rank() == 0:
        print(f"all_reduce busbw over gloo, {n} ranks, >= {iters} iterations x {rounds} rounds (median)")
        print(f"{'size':>8} {'torchdoctor GB/s':>18} {'plain loop GB/s':>18} {'ratio':>8}")
        print("\n".join(lines))
    dist.destroy_process_group()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two sizes, fewer rounds (~30 s on 2 cores)")
    args = parser.parse_args()
    sizes, iters, rounds = (QUICK_SIZES, 3, 3) if args.quick else (SIZES, 5, 5)
    if "RANK" in os.environ:
        worker(sizes, iters, rounds)
        return 0
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", __file__]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(command + sys.argv[1:], env=env, timeout=600).returncode


if __name__ == "__main__":
    sys.exit(main())
