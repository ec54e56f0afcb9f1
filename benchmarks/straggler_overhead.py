"""What the straggler watch costs a training step, side by side with the same run without it.

Two gloo ranks (torch's launcher) train one DDP model in pairs of short blocks of steps (`--block`, 25): one
block with the watch off (no hooks), the next with it on (`watch_for_stragglers`: the optimizer, DataLoader,
collective, DDP forward/backward and last-gradient hooks, a store key per window; installed before the block
and taken off after it, outside the timing), in alternating order. A step is the DataLoader's ``next()``, the
forward, the backward (DDP's own all-reduce either way: no comm hook) and the optimizer step. The k-th
steps of the two blocks of a pair are paired: the median of those differences is the cost, with a 95%
interval that resamples whole pairs of blocks (neighbouring steps share the machine's load; the medians of
blocks of 10 steps spread by ±20% on this VM, so blocks alone cannot resolve 0.5%). The first step after
installing costs ~0.2 ms more (hooks set up again; a run installs once), so the figure errs high by about
that over the block. Measured both in wall-clock time and in the training thread's CPU time. Rank 0's judge
(a process of its own since 2026-11-29, `torchdoctor.stragglers.judge`, polling every 0.5 s) runs throughout;
it judges the windows the watched blocks publish, so most of its work falls in those blocks (or just after):
on a machine whose cores are all busy it competes with the ranks for them. Each rank gives the CPU time of all
its process's threads per step, with the watch against without (the publisher thread's is in it), and rank 0
the judge's CPU time over the run per watched step. The README also gives the reader's CPU per window
judged. The hooks' own time per step is also measured directly, without the training around it.

With ``--nodes 2`` the two ranks are two agents of one rank each (two "nodes" on this machine): rank 0 has a core
beyond one per rank, so its judge runs in a process of its own, as on a machine with a core to spare (where
``launch --watchdog`` turns the watch on), and each rank pays only the hooks and its publisher thread.

    python benchmarks/straggler_overhead.py [--pairs 80] [--block 25] [--width 512] [--nodes 2]

With ``--device cuda`` the model, its batches and the hooks' all-reduce are on the GPU (both ranks on GPU 0,
gloo): the watch then also notes CUDA events at each step boundary and around each collective
(`torchdoctor.stragglers.device`), and reads them when they are done.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from intervals import clustered_median_interval, median_interval  # benchmarks/intervals.py, beside this file

ROOT = Path(__file__).resolve().parent.parent


def worker(pairs: int, block: int, width: int, layers: int, batch: int, device: str = "cpu") -> None:
    import itertools

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
        if device == "cuda":
            torch.cuda.set_device(0)
            return _cuda_model(layers_)
        net = DistributedDataParallel(torch.nn.Sequential(*layers_))
        return net, torch.optim.SGD(net.parameters(), lr=1e-4)

    net, optimizer = model()
    data = torch.utils.data.TensorDataset(torch.randn(batch * 8, width), torch.randn(batch * 8, width))
    loader = torch.utils.data.DataLoader(data, batch_size=batch)
    batches = itertools.chain.from_iterable(
        itertools.repeat(loader)
    )  # a new iterator (hooked or not) per epoch

    def step(net, optimizer) -> tuple[float, float]:
        """One step: wall-clock seconds, and the training thread's CPU seconds (unmoved by the time other
        processes hold the CPU: what the hooks cost where the machine is shared)."""
        start, start_cpu = time.perf_counter(), time.thread_time()
        x, y = (t.to(device) for t in next(batches))
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return time.perf_counter() - start, time.thread_time() - start_cpu

    torchdoctor.watch_for_stragglers(stream=open(os.devnull, "w"))  # noqa: SIM115 - verdicts are not the point here
    record = watch._state["record"]
    for _ in range(20):  # warm-up: the watched model's last gradient is learned, buckets are rebuilt
        step(net, optimizer)
    hooks.uninstall()
    judge = watch._state.get("judge")
    judge_before = _settled_cpu_seconds(judge.pid) if judge is not None else 0.0  # after its start-up
    dist.barrier()
    off, wall, cpu, process = [], [], [], []
    for pair in range(pairs):
        blocks, spent = {}, {}
        for watching in (False, True) if pair % 2 else (True, False):  # the same order on every rank
            if watching:
                hooks.install(record)
            start = time.process_time()
            blocks[watching] = [step(net, optimizer) for _ in range(block)]
            spent[watching] = (time.process_time() - start) / block
            if watching:
                hooks.uninstall()
        off += blocks[False]
        process.append(spent[True] - spent[False])
        wall.append([b[0] - a[0] for a, b in zip(blocks[False], blocks[True], strict=True)])
        cpu.append([b[1] - a[1] for a, b in zip(blocks[False], blocks[True], strict=True)])
    hooks.install(record)  # so that finish() reads a consistent state
    if judge is not None:  # rank 0's judge, a process of its own: its CPU over the pairs, per watched step
        spent = _cpu_seconds(judge.pid) - judge_before
        print(f"rank 0's judge (pid {judge.pid}): {spent / (pairs * block) * 1e6:.0f} µs of CPU per watched step, "
              "in a process of its own", flush=True)  # fmt: skip
    if dist.get_rank() == 0:
        base, base_cpu = (statistics.median(t[i] for t in off) for i in (0, 1))
        print(
            f"step {base * 1000:.1f} ms without the watch ({pairs} pairs of {block} steps), CPU "
            f"{base_cpu * 1000:.1f} ms; "
            f"with it: wall {_ratio(wall, base)}, the training thread's CPU {_ratio(cpu, base_cpu)}",
            flush=True,
        )
    print(
        f"rank {dist.get_rank()}: the training thread's CPU "
        f"{_ratio(cpu, statistics.median(t[1] for t in off))}",
        flush=True,
    )
    low, high = median_interval(process)
    print(
        f"rank {dist.get_rank()}: all the process's threads (the publisher's too; the reader's where it judges) "
        f"{statistics.median(process) * 1e6:+.0f} µs of CPU per step (95%: {low * 1e6:+.0f} to {high * 1e6:+.0f})",
        flush=True,
    )
    dist.barrier()
    dist.destroy_process_group()


def _cuda_model(layers: list) -> tuple:
    """The worker's model on GPU 0 (every rank's), DDP over it, and its optimizer."""
    import torch
    from torch.nn.parallel import DistributedDataParallel

    net = DistributedDataParallel(torch.nn.Sequential(*layers).to("cuda:0"), device_ids=[0])
    return net, torch.optim.SGD(net.parameters(), lr=1e-4)


def _cpu_seconds(pid: int) -> float:
    """The user and system CPU seconds process ``pid`` used so far (Linux: /proc; 0.0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _settled_cpu_seconds(pid: int, timeout: float = 60.0) -> float:
    """Process ``pid``'s CPU seconds once its start-up is over (less than 20 ms more in half a second)."""
    deadline = time.monotonic() + timeout
    before = _cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _cpu_seconds(pid)
        if now - before < 0.02:
            return now
        before = now
    return before


def _ratio(blocks: list[list[float]], base: float) -> str:
    """The median difference as a ratio to ``base``, with its 95% interval and the difference in µs."""
    low, high = clustered_median_interval(blocks)
    median = statistics.median([value for block in blocks for value in block])
    return (
        f"{1 + median / base:.4f}x (95%: {1 + low / base:.4f}–{1 + high / base:.4f}; "
        f"{median * 1e6:+.0f} µs per step)"
    )


windows: list[dict] = []  # the windows the hooks' record published in `hook_cost`, for `publisher_cost`


def publisher_cost() -> float:
    """CPU seconds of the publisher's work per window (`torchdoctor.stragglers.publisher`: the window's rows
    as JSON, set under its key in the job's TCPStore), for the windows `hook_cost` recorded: the median over
    them, in this thread, against a TCPStore whose server is another process (as torchrun's agent is)."""
    import json

    import torch.distributed as dist

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-c", "import sys, time, torch.distributed as d; "
                               f"s = d.TCPStore('127.0.0.1', {port}, 2, True); sys.stdin.read()"],
                              stdin=subprocess.PIPE)  # fmt: skip
    try:
        store = dist.PrefixStore("torchdoctor/run/0", dist.TCPStore("127.0.0.1", port, 2, False))
        spent = []
        for number, payload in enumerate(windows):
            start = time.thread_time()
            store.set(f"torchdoctor/straggler/w{number}/r0", json.dumps(payload, separators=(",", ":")))
            spent.append(time.thread_time() - start)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    return statistics.median(spent)


def hook_cost(
    iterations: int = 500, pairs: int = 60, device: str = "cpu"
) -> tuple[float, tuple[float, float]]:
    """CPU seconds the hooks add to one step with one next(), one all-reduce, a DDP forward and backward and
    one optimizer step, measured on a process group of one (the collectives cost little there, and the
    same with and without the hooks: what is left is ours): the median over ``pairs`` pairs of loops of
    ``iterations`` steps without and with the hooks, in alternating order, and its 95% interval."""
    import tempfile

    import torch
    import torch.distributed as dist

    from torchdoctor.stragglers import hooks
    from torchdoctor.stragglers.record import StepRecord

    with tempfile.NamedTemporaryFile() as rendezvous:
        dist.init_process_group("gloo", init_method=f"file://{rendezvous.name}", rank=0, world_size=1)
        tensor = torch.zeros(1, device=device)
        ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(1, 1).to(device))
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
        loader = torch.utils.data.DataLoader(range(10**9), batch_size=None)
        x = torch.ones(1, 1, device=device)
        record = StepRecord()
        record.publish = lambda window, payload: windows.append(payload)

        def loop(watched: bool) -> float:
            if watched:
                hooks.install(record)
            it = iter(loader)
            start = time.thread_time()  # CPU time: unmoved by other processes on a shared machine
            for _ in range(iterations):
                next(it)
                dist.all_reduce(tensor)
                ddp(x).sum().backward()
                optimizer.step()
            seconds = (time.thread_time() - start) / iterations
            if watched:
                hooks.uninstall()
            return seconds

        loop(True)  # the DDP model's last gradient learned
        differences = []
        for pair in range(pairs):
            order = (False, True) if pair % 2 else (True, False)
            seconds = dict(zip(order, (loop(watched) for watched in order), strict=True))
            differences.append(seconds[True] - seconds[False])
        dist.destroy_process_group()
    return statistics.median(differences), median_interval(differences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=80, help="pairs of blocks")
    parser.add_argument("--block", type=int, default=25, help="steps per block")
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument(
        "--nodes",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: two agents of one rank each, as two nodes (rank 0 judges in a process of its own)",
    )
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="cuda: both ranks on GPU 0")
    parser.add_argument("--hook-pairs", type=int, default=60, help="pairs of loops timing the hooks alone")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.pairs, args.block, args.width, args.layers, args.batch, args.device)
        return
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.device}", flush=True)
    cost, (low, high) = hook_cost(pairs=args.hook_pairs, device=args.device)
    print(
        f"hooks alone: {cost * 1e6:.1f} µs of CPU time per step (95%: {low * 1e6:.1f}–{high * 1e6:.1f}; one next(), "
        "one all_reduce, a DDP forward and backward, one optimizer step)",
        flush=True,
    )
    from torchdoctor.stragglers.record import WINDOW

    publishing = publisher_cost()
    per_step = cost + publishing / WINDOW
    print(
        f"the publisher: {publishing * 1e6:.0f} µs of CPU per window of {WINDOW} steps (the rows as JSON, set in "
        f"a TCPStore; {len(windows)} windows). Where rank 0's judge has a core of its own (launch --watchdog "
        f"turns the watch on only there) a rank pays the two: {per_step * 1e6:.0f} µs of CPU per step, "
        f"{per_step / 0.05:.2%} of a 50 ms step",
        flush=True,
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    worker_args = [__file__, "--worker", "--pairs", str(args.pairs), "--block", str(args.block), "--width",
                   str(args.width), "--layers", str(args.layers), "--batch", str(args.batch),
                   "--device", args.device]  # fmt: skip
    run = [sys.executable, "-m", "torch.distributed.run"]
    if args.nodes == 1:
        commands = [[*run, "--standalone", "--nproc-per-node", "2", *worker_args]]
    else:  # two agents of one rank each: rank 0 sees a core to spare and judges in a process of its own
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = str(probe.getsockname()[1])
        commands = [[*run, "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "1", "--master-addr",
                     "127.0.0.1", "--master-port", port, *worker_args] for node in (0, 1)]  # fmt: skip
    agents = [
        subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    outputs = [agent.communicate(timeout=3600) for agent in agents]
    stdout = "\n".join(out for out, _ in outputs)
    lines = [line for line in stdout.splitlines() if line.startswith("step ")]
    if any(agent.returncode for agent in agents) or not lines:
        sys.stderr.write("\n".join(err[-3000:] for _, err in outputs))
        raise SystemExit(f"the training run failed ({[agent.returncode for agent in agents]})")
    print(lines[-1])
    print("\n".join(sorted(line for line in stdout.splitlines() if line.startswith("rank "))))


if __name__ == "__main__":
    main()
