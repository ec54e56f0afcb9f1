"""What the hang watchdog costs a training loop: the same CPU training steps without and with
``torchdoctor.watch_for_hangs`` (its sampling thread) plus a ``heartbeat()`` per step, in one run.

Alternates the two set-ups in many short rounds, so a busy machine hurts both alike, and reports each one's
best time and the median of the per-round ratios. Prints milliseconds per step, the ratios, and what one
``heartbeat()`` call costs.

    python benchmarks/watchdog_overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import time
import timeit

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
    print(f"{'training step (2-layer MLP, CPU)':<40} {'ms/step':>10}")
    print(f"{'without watchdog':<40} {best_plain:>10.3f}")
    print(f"{'watch_for_hangs + heartbeat() per step':<40} {best_watched:>10.3f}")
    print(f"{'ratio of the best times':<40} {best_watched / best_plain:>10.3f}")
    ratios = sorted(w / p for w, p in zip(watched, plain, strict=True))
    print(f"{'median ratio over ' + str(rounds) + ' paired rounds':<40} {ratios[len(ratios) // 2]:>10.3f}")
    print(f"{'one heartbeat() call':<40} {beat_ns:>8.0f} ns")


if __name__ == "__main__":
    main()
