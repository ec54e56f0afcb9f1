"""What the hang watchdog costs a training loop: the same CPU training steps without and with
``torchdoctor.watch_for_hangs`` (its sampling thread) plus a ``heartbeat()`` per step, in one run; and what
the flight recorder that ``torchdoctor launch --watchdog`` turns on (``TORCH_FR_BUFFER_SIZE=2000``) costs a
collective: a real 2-rank gloo job timing ``all_reduce`` of 8 floats, with the recorder off, on, and on with
each call's site noted (`torchdoctor.hang.calls`, which ``launch --watchdog`` adds too).

Alternates the set-ups in many short rounds, so a busy machine hurts both alike, and reports each one's
best time and the median of the per-round ratios. Prints milliseconds per step, microseconds per
all_reduce (wall, and CPU of the calling thread: on a busy machine the wall time is mostly scheduling), the
ratios, what one ``heartbeat()`` call costs, and the load average.

    python benchmarks/watchdog_overhead.py [--quick] [--other-source ../main/src]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import timeit
from datetime import timedelta

import torch

import torchdoctor


def steps(model: torch.nn.Module, optimizer, data: torch.Tensor, count: int, beat: bool) -> float:
    """Seconds for ``count`` training steps of ``model`` on ``data``."""
    start = time.perf_counter()
    for _ in range(count):
        optimizer.zero_grad()
        loss = model(data).square().mean()
        loss.backward()
        optimizer.step()
        if beat:
            torchdoctor.heartbeat()
    return time.perf_counter() - start


RANK_SCRIPT = """
import sys, tempfile, time, torch, torch.distributed as dist
if {notes}:  # what `launch --watchdog` adds besides the recorder: each call's site noted
    from torchdoctor.hang import calls
    calls.open_ring(tempfile.mkstemp(prefix="watchdog-overhead-")[1])
    calls.record_calls(dist)
dist.init_process_group("gloo")
x = torch.ones(8)
for _ in range(200):
    dist.all_reduce(x)
dist.barrier()
start, cpu = time.perf_counter(), time.thread_time()
for _ in range({count}):
    dist.all_reduce(x)
elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
if dist.get_rank() == 0:
    print(elapsed / {count} * 1e6, cpu / {count} * 1e6)
dist.destroy_process_group()
"""


def all_reduce_us(
    recorder_entries: int, count: int, notes: bool = False, source: str | None = None
) -> tuple[float, float]:
    """Microseconds per ``all_reduce`` of 8 floats in a fresh 2-rank gloo job, and of them, the CPU time of
    rank 0's calling thread (what the Python around the call costs; on a busy machine the wall time is
    mostly waiting for the other rank to be scheduled). The recorder holds ``recorder_entries`` (0: off),
    each call's site is noted (`torchdoctor.hang.calls`) with ``notes``, by the torchdoctor in ``source``
    (a ``src`` folder; default: this one); the rank processes start as torchrun's would, on a store of
    ours."""
    import torch.distributed as dist

    store = dist.TCPStore("127.0.0.1", 0, 2, True, timedelta(seconds=120), wait_for_workers=False)
    code = RANK_SCRIPT.format(count=count, notes=notes)
    ranks = []
    for rank in range(2):
        env = {
            **os.environ,
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(store.port),
            "RANK": str(rank),
            "WORLD_SIZE": "2",
            "TORCHELASTIC_USE_AGENT_STORE": "True",
            "OMP_NUM_THREADS": "1",
            "TORCH_FR_BUFFER_SIZE": str(recorder_entries),
        }
        if source:
            env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")])
        env.pop("TORCH_NCCL_TRACE_BUFFER_SIZE", None)
        ranks.append(
            subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        )
    outputs = [rank.communicate(timeout=300)[0] for rank in ranks]
    del store
    wall, cpu = outputs[0].strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    parser.add_argument(
        "--other-source",
        metavar="SRC",
        help="also note call sites with the torchdoctor in this src folder (an older checkout), side by side",
    )
    args = parser.parse_args()
    count, rounds = (100, 6) if args.quick else (150, 20)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = torch.randn(64, 256)
    steps(model, optimizer, data, 20, beat=False)  # warm-up

    plain, watched = [], []
    for _ in range(rounds):
        plain.append(steps(model, optimizer, data, count, beat=False))
        watch = torchdoctor.watch_for_hangs(600)  # samples the main thread every second
        try:
            watched.append(steps(model, optimizer, data, count, beat=True))
        finally:
            watch.stop()
    beat_ns = min(timeit.repeat(torchdoctor.heartbeat, number=100_000, repeat=3)) / 100_000 * 1e9

    best_plain, best_watched = min(plain) / count * 1e3, min(watched) / count * 1e3
    print(f"{'training step (2-layer MLP, CPU)':<46} {'ms/step':>10}")
    print(f"{'without watchdog':<46} {best_plain:>10.3f}")
    print(f"{'watch_for_hangs + heartbeat() per step':<46} {best_watched:>10.3f}")
    print(f"{'ratio of the best times':<46} {best_watched / best_plain:>10.3f}")
    ratios = sorted(w / p for w, p in zip(watched, plain, strict=True))
    print(f"{'median ratio over ' + str(rounds) + ' paired rounds':<46} {ratios[len(ratios) // 2]:>10.3f}")
    print(f"{'one heartbeat() call':<46} {beat_ns:>8.0f} ns")

    jobs, count = (2, 2000) if args.quick else (5, 5000)
    setups = {
        "flight recorder off": (0, False, None),
        "TORCH_FR_BUFFER_SIZE=2000 (launch --watchdog)": (2000, False, None),
        "+ call sites noted (all of launch --watchdog)": (2000, True, None),
    }
    if args.other_source:
        setups[f"+ call sites noted by {args.other_source}"] = (2000, True, args.other_source)
    times: dict[str, list] = {name: [] for name in setups}
    for _ in range(jobs):
        for name, (entries, notes, source) in setups.items():
            times[name].append(all_reduce_us(entries, count, notes, source))
    off = times["flight recorder off"]
    for column, label in ((0, "us/call"), (1, "us CPU/call")):
        print()
        print(f"{'all_reduce of 8 floats, 2 ranks, gloo':<52} {label:>11} {'ratio':>7} {'median':>7}")
        for name, measured in times.items():
            best = min(m[column] for m in measured) / min(o[column] for o in off)
            ratios = sorted(m[column] / o[column] for m, o in zip(measured, off, strict=True))
            print(
                f"{name:<52} {min(m[column] for m in measured):>11.1f} {best:>7.3f} "
                f"{ratios[len(ratios) // 2]:>7.3f}"
            )
    print(f"\n(ratio: of the best times to the recorder off; median: of the {jobs} paired jobs' ratios)")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{n:.1f}' for n in os.getloadavg())}")


if __name__ == "__main__":
    main()
