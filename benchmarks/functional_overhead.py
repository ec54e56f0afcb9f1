"""What the straggler watch's hooks add to one functional collective, the kind tensor
parallelism and DTensor call: ``funcol.all_reduce`` on a mesh dimension, then the first use of its result
(``wait_tensor``), as ``RowwiseParallel``'s output goes.

One gloo rank in this process (a world of one: the collective itself is as short as it gets, so the hooks'
share is the most it can be). Plain and hooked calls alternate call by call (which goes first alternates by
pair), each timed alone in wall-clock and in the calling thread's CPU time; the added time is the median of
the pairs' differences, with a 95% bootstrap interval (benchmarks/intervals.py). The hooks alone are timed
too, around stand-ins for the collective and its wait that return at once (what the hooks themselves cost,
without the gloo thread's scheduling that the pairs also see).

The watchdog's call log (``launch --watchdog`` notes each functional collective's call site) is timed the same
way, around a stand-in.

    python benchmarks/functional_overhead.py [--pairs 4000] [--floats 8]
"""

from __future__ import annotations

import argparse
import statistics
import time

from intervals import median_interval  # benchmarks/intervals.py, beside this file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4000)
    parser.add_argument("--floats", type=int, default=8)
    options = parser.parse_args()

    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.device_mesh import init_device_mesh

    from torchdoctor.stragglers import hooks
    from torchdoctor.stragglers.record import StepRecord

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))
    tensor = torch.ones(options.floats)
    plain = (funcol.all_reduce, funcol.wait_tensor)
    record = StepRecord(window=10**9)
    hooks.install(record)
    hooked = (funcol.all_reduce, funcol.wait_tensor)

    def one(calls) -> tuple[float, float]:
        funcol.all_reduce, funcol.wait_tensor = calls  # what DTensor and AsyncCollectiveTensor look up
        start, cpu = time.perf_counter(), time.thread_time()
        result = funcol.all_reduce(tensor, "sum", (mesh, 0))
        result + 1  # the first use waits
        return time.perf_counter() - start, time.thread_time() - cpu

    for _ in range(200):  # warm-up, both ways
        one(plain), one(hooked)
    wall, cpu, base = [], [], []
    for pair in range(options.pairs):
        if pair % 2:
            a, b = one(hooked), one(plain)
        else:
            b, a = one(plain), one(hooked)
        wall.append((a[0] - b[0]) * 1e6)
        cpu.append((a[1] - b[1]) * 1e6)
        base.append(b[0] * 1e6)
        record.rows.clear()
        record.arrivals.clear()
    funcol.all_reduce, funcol.wait_tensor = hooked
    low, high = median_interval(wall)
    median = statistics.median(wall)
    print(
        f"the straggler watch's hooks, funcol.all_reduce of {options.floats} floats + its wait, {options.pairs} pairs"
    )
    print(f"  plain call: {statistics.median(base):.1f} us (median)")
    print(f"  added wall time: {median:+.1f} us (95% {low:+.1f} to {high:+.1f})")
    quartiles = statistics.quantiles(cpu, n=4)
    print(f"  added CPU time of the calling thread: {statistics.median(cpu):+.1f} us "
          f"(interquartile {quartiles[0]:+.1f} to {quartiles[2]:+.1f})")  # fmt: skip
    print(
        f"  the hooks alone, around stand-ins: {hooks_alone(record, mesh):.1f} us per collective and its wait"
    )
    print(f"  the watchdog's call log alone, around a stand-in: {call_log_alone(mesh):.1f} us per collective")
    dist.destroy_process_group()


def call_log_alone(mesh, count: int = 20000) -> float:
    """Microseconds ``launch --watchdog``'s note of a functional collective takes (`hang.functional_calls`:
    its group, sequence number, tensor and call site into the call log) around a collective that returns at
    once (best of 5)."""
    import tempfile
    import timeit
    import types

    import torch

    from torchdoctor.hang import calls, functional_calls

    def all_reduce(self, reduceOp, group, tag=""):  # noqa: N803 (torch's parameter name)
        return self

    stand_in = types.SimpleNamespace(all_reduce=all_reduce)
    with tempfile.TemporaryDirectory() as folder:
        calls.open_ring(f"{folder}/rank0.calls")
        functional_calls.record_functional_calls(stand_in)
        noted, tensor = stand_in.all_reduce, torch.ones(8)
        best = min(timeit.repeat(lambda: noted(tensor, "sum", (mesh, 0)), number=count, repeat=5))
        calls._ring.clear()
    return best / count * 1e6


def hooks_alone(record, mesh, calls: int = 20000) -> float:
    """Microseconds the two hooks take around a collective and a wait that return at once (best of 5)."""
    import timeit

    import torch

    from torchdoctor.stragglers import functional
    from torchdoctor.stragglers.hooks import group_key

    class Started:  # what a functional collective returns: its result inside
        elem = torch.ones(8)

    def all_reduce(self, reduceOp, group, tag=""):  # noqa: N803 (torch's parameter name)
        return Started

    def wait_tensor(tensor):
        return tensor

    timed = functional._timed(all_reduce, record, group_key)
    waited = functional._timed_wait(wait_tensor, record)
    tensor = torch.ones(8)

    def one() -> None:
        timed(tensor, "sum", (mesh, 0))
        waited(Started.elem)
        record.arrivals.clear()

    return min(timeit.repeat(one, number=calls, repeat=5)) / calls * 1e6


if __name__ == "__main__":
    main()
