"""How much CPU time the same work takes on one CPU while busy loops run on others: whether a machine's CPUs
share what the guest cannot see (a virtual machine's vCPUs on one physical core's two threads, a turbo budget).

    python3 benchmarks/gpu/cpu_siblings.py 12      # the CPU to measure on; about 10 s (UNITS=N: N units a case)

The work is 40 matmuls of a 64x256 batch by 256x256 with ReLU (the straggler sweep's model width), one thread,
150 times per case; each case prints the median CPU time (`time.thread_time`) and wall time per unit, and the
CPU time's least and most. A busy loop on the same CPU doubles the wall time and leaves the CPU time as it is; on
another CPU it should change nothing, unless the two share a core or a power budget.

Session 44 (2026-12-04, the GPU machine: a 16-vCPU KVM guest, Intel Xeon, "1 thread per core", no cpufreq in the
guest, load 0.2-0.6, two boots): CPU 12 alone 2.40-2.92 ms, 4.17 beside a busy loop on CPU 14 (on the second boot
2.68 beside it); CPU 9 alone 2.59 ms and 3.78 a second later, CPU 13 alone 2.58 and 4.25. The same work's CPU time
on one vCPU moves by up to 70% from one second to the next, alone or not: the host's work under the vCPUs, which the
guest does not see; a rank's CPU time for the same work moves with it (docs/stragglers-measurements.md, session 44).
"""

import multiprocessing
import os
import statistics
import sys
import time

import torch

UNITS = int(os.environ.get("UNITS", "150"))


def work(weights: torch.Tensor, batch: torch.Tensor) -> None:
    x = batch
    for _ in range(40):
        x = torch.relu(x @ weights)


def spin(cpu: int, stop) -> None:
    os.sched_setaffinity(0, {cpu})
    while not stop.is_set():
        for _ in range(10000):
            pass


def measure(cpu: int, busy: list[int]) -> tuple[float, float, float, float]:
    """(median CPU time, median wall time, least and most CPU time) per unit of work on ``cpu``, ms, with a
    busy loop on each CPU of ``busy``."""
    os.sched_setaffinity(0, {cpu})
    stop = multiprocessing.Event()
    loops = [multiprocessing.Process(target=spin, args=(c, stop), daemon=True) for c in busy]
    for loop in loops:
        loop.start()
    time.sleep(0.2)
    weights, batch = torch.randn(256, 256), torch.randn(64, 256)
    cpu_times, wall_times = [], []
    for _ in range(UNITS):
        cpu_start, wall_start = time.thread_time(), time.perf_counter()
        work(weights, batch)
        cpu_times.append(time.thread_time() - cpu_start)
        wall_times.append(time.perf_counter() - wall_start)
    stop.set()
    for loop in loops:
        loop.join(2)
    return (
        statistics.median(cpu_times) * 1000,
        statistics.median(wall_times) * 1000,
        min(cpu_times) * 1000,
        max(cpu_times) * 1000,
    )


def main() -> None:
    torch.set_num_threads(1)
    cpu = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    cpus = sorted(os.sched_getaffinity(0))
    others = [c for c in cpus if c != cpu]
    cases = [[], *([c] for c in others[:3]), [cpu], [], others[:3], others, []]
    for busy in cases:
        cpu_ms, wall_ms, least, most = measure(cpu, busy)
        what = "none" if not busy else ("all others" if busy == others else ", ".join(map(str, busy)))
        print(
            f"CPU {cpu}, busy loops on {what}: CPU time {cpu_ms:.3f} ms (least {least:.3f}, most {most:.3f}), "
            f"wall {wall_ms:.3f} ms per unit",
            flush=True,
        )


if __name__ == "__main__":
    main()
