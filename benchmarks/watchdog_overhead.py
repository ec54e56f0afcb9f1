"""What the hang watchdog costs a training loop: the same CPU training steps without and with
``torchdoctor.watch_for_hangs`` (its sampling thread) plus a ``heartbeat()`` per step, in one run; and what
the flight recorder that ``torchdoctor launch --watchdog`` turns on (``TORCH_FR_BUFFER_SIZE=2000``) costs a
collective: a real 2-rank gloo job timing ``all_reduce`` of 8 floats, with the recorder off, on, and on with
each call's site noted (`torchdoctor.hang.calls`, which ``launch --watchdog`` adds too).

Alternates the set-ups in many short rounds, so a busy machine hurts both alike, and reports each one's
best time and the median of the per-round ratios. Prints milliseconds per step, microseconds per
all_reduce, the ratios, and what one ``heartbeat()`` call costs.

    python benchmarks/watchdog_overhead.py [--quick]
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
start = time.perf_counter()
for _ in range({count}):
    dist.all_reduce(x)
elapsed = time.perf_counter() - start
if dist.get_rank() == 0:
    print(elapsed / {count} * 1e6)
dist.destroy_process_group()
"""


def all_reduce_us(recorder_entries: int, count: int, notes: bool = False) -> float:
    """Microseconds per ``all_reduce`` of 8 floats in a fresh 2-rank gloo job, the recorder holding
    ``recorder_entries`` (0: off), each call's site noted (`torchdoctor.hang.calls`) with ``notes``; the
    rank processes start as torchrun's would, on a store of ours."""
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
        env.pop("TORCH_NCCL_TRACE_BUFFER_SIZE", None)
        ranks.append(
            subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        )
    outputs = [rank.communicate(timeout=300)[0] for rank in ranks]
    del store
    return float(outputs[0].strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
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
    off, on, noted = [], [], []
    for _ in range(jobs):
        off.append(all_reduce_us(0, count))
        on.append(all_reduce_us(2000, count))
        noted.append(all_reduce_us(2000, count, notes=True))
    print()
    print(f"{'all_reduce of 8 floats, 2 ranks, gloo':<46} {'us/call':>10}")
    print(f"{'flight recorder off':<46} {min(off):>10.1f}")
    print(f"{'TORCH_FR_BUFFER_SIZE=2000 (launch --watchdog)':<46} {min(on):>10.1f}")
    print(f"{'ratio of the best times':<46} {min(on) / min(off):>10.3f}")
    ratios = sorted(b / a for a, b in zip(off, on, strict=True))
    print(f"{'median ratio over ' + str(jobs) + ' paired jobs':<46} {ratios[len(ratios) // 2]:>10.3f}")
    print(f"{'+ call sites noted (all of launch --watchdog)':<46} {min(noted):>10.1f}")
    print(f"{'ratio to recorder off, best times':<46} {min(noted) / min(off):>10.3f}")
    ratios = sorted(b / a for a, b in zip(off, noted, strict=True))
    print(f"{'median ratio over ' + str(jobs) + ' paired jobs':<46} {ratios[len(ratios) // 2]:>10.3f}")
    print(f"{'call sites alone: ratio to recorder on, best':<46} {min(noted) / min(on):>10.3f}")
    ratios = sorted(b / a for a, b in zip(on, noted, strict=True))
    print(f"{'median ratio over ' + str(jobs) + ' paired jobs':<46} {ratios[len(ratios) // 2]:>10.3f}")
    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{n:.1f}' for n in os.getloadavg())}")


if __name__ == "__main__":
    main()
