"""What the straggler watch costs a training step, side by side with the same run without it.

Two gloo ranks (torch's launcher) train two equal DDP models in alternating blocks of steps: one block
with the watch off (torch's own DDP all-reduce, no hooks), the next with it on (`watch_for_stragglers`:
the optimizer, DataLoader and collective hooks, DDP's timed comm hook, a store key per window, rank 0's
reader). The ratio of the blocks' median step times is the overhead; pairs of neighbouring blocks share the
machine's load. The hooks' own time per step is also measured directly, without the training around it.

    python benchmarks/straggler_overhead.py [--blocks 10] [--steps 20] [--width 768]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from intervals import median_interval  # benchmarks/intervals.py, beside this file

ROOT = Path(__file__).resolve().parent.parent


def worker(blocks: int, steps: int, width: int, layers: int, batch: int) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    import torchdoctor
    from torchdoctor.stragglers import hooks, watch

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)

    def model():
        layers_ = [torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU()) for _ in range(layers)]
        net = DistributedDataParallel(torch.nn.Sequential(*layers_))
        return net, torch.optim.SGD(net.parameters(), lr=1e-4)

    plain, watched = model(), model()
    data = torch.utils.data.TensorDataset(torch.randn(batch * 8, width), torch.randn(batch * 8, width))
    loader = torch.utils.data.DataLoader(data, batch_size=batch)

    def run_block(net, optimizer) -> tuple[float, float]:
        """The block's median step: wall-clock seconds, and the training thread's CPU seconds (unmoved by
        the time other processes hold the CPU: what the hooks cost where the machine is shared)."""
        times, cpu, done = [], [], 0
        while done < steps:
            for x, y in loader:
                start, start_cpu = time.perf_counter(), time.thread_time()
                loss = torch.nn.functional.mse_loss(net(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                times.append(time.perf_counter() - start)
                cpu.append(time.thread_time() - start_cpu)
                done += 1
                if done == steps:
                    break
        return statistics.median(times), statistics.median(cpu)

    torchdoctor.watch_for_stragglers(stream=open(os.devnull, "w"))  # noqa: SIM115 - verdicts are not the point here
    record = watch._state["record"]
    run_block(*watched)  # warm-up: DDP registers the timed hook, buckets are rebuilt
    hooks.uninstall()
    run_block(*plain)
    off, on = [], []
    for _ in range(blocks):
        off.append(run_block(*plain))
        hooks.install(record)
        on.append(run_block(*watched))
        hooks.uninstall()
    hooks.install(record)  # so that finish() reads a consistent state
    if dist.get_rank() == 0:
        ratios = sorted(b[0] / a[0] for a, b in zip(off, on, strict=True))
        cpu_ratios = sorted(b[1] / a[1] for a, b in zip(off, on, strict=True))
        print(
            f"step {statistics.median(a for a, _ in off) * 1000:.1f} ms without the watch, "
            f"{statistics.median(a for a, _ in on) * 1000:.1f} ms with it; median ratio of neighbouring blocks "
            f"{statistics.median(ratios):.4f} (95%: {_interval_text(ratios)}; blocks: "
            f"{', '.join(f'{r:.3f}' for r in ratios)}); CPU time of "
            f"the training thread per step {statistics.median(b for _, b in off) * 1000:.1f} vs "
            f"{statistics.median(b for _, b in on) * 1000:.1f} ms, median ratio {statistics.median(cpu_ratios):.4f} "
            f"(95%: {_interval_text(cpu_ratios)}; blocks: {', '.join(f'{r:.3f}' for r in cpu_ratios)})",
            flush=True,
        )
    dist.barrier()
    dist.destroy_process_group()


def _interval_text(values: list[float]) -> str:
    low, high = median_interval(values)
    return f"{low:.4f}–{high:.4f}"


def hook_cost(iterations: int = 20_000) -> float:
    """CPU seconds the hooks add to one step with one next(), one all-reduce and one optimizer step, measured
    on a process group of one (the collective itself costs ~nothing there, so what is left is ours)."""
    import tempfile

    import torch
    import torch.distributed as dist

    from torchdoctor.stragglers import hooks
    from torchdoctor.stragglers.record import StepRecord

    with tempfile.NamedTemporaryFile() as rendezvous:
        dist.init_process_group("gloo", init_method=f"file://{rendezvous.name}", rank=0, world_size=1)
        tensor = torch.zeros(1)
        parameter = torch.nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.SGD([parameter], lr=0.1)
        loader = torch.utils.data.DataLoader(range(10**9), batch_size=None)

        def loop() -> float:
            it = iter(loader)
            start = time.thread_time()  # CPU time: unmoved by other processes on a shared machine
            for _ in range(iterations):
                next(it)
                dist.all_reduce(tensor)
                optimizer.step()
            return (time.thread_time() - start) / iterations

        best_off, best_on = [], []
        record = StepRecord()
        record.publish = lambda window, text: None
        for _ in range(5):
            best_off.append(loop())
            hooks.install(record)
            best_on.append(loop())
            hooks.uninstall()
        dist.destroy_process_group()
    return min(best_on) - min(best_off)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.blocks, args.steps, args.width, args.layers, args.batch)
        return
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    cost = hook_cost()
    print(
        f"hooks alone: {cost * 1e6:.1f} µs of CPU time per step (one next(), one all_reduce, one optimizer step)",
        flush=True,
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", __file__,
               "--worker", "--blocks", str(args.blocks), "--steps", str(args.steps), "--width", str(args.width),
               "--layers", str(args.layers), "--batch", str(args.batch)]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("step ")]
    if done.returncode != 0 or not lines:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"the training run failed ({done.returncode})")
    print(lines[-1])


if __name__ == "__main__":
    main()
