"""A small DDP training run over gloo for the straggler tests and benchmarks: a DataLoader, a model, an
optimizer, and nothing of torchdoctor's in it. A fault is planted on one rank from the environment
(tests/ only; nothing in src/ knows them):

    SLOW_RANK=1 FAULT=input|compute|comm|host|sleep AMOUNT=0.3   # 30% of the step more on rank 1
    STEPS=80  WIDTH=256  LAYERS=8  SLOW_FROM=0
    LAG_RANK=1 LAG=1.0   # rank 1 always leaves the loss all-reduce 100% of the base step late (healthy)

``input`` sleeps in the dataset, ``compute`` runs extra matmuls, ``comm`` delays the loss all-reduce
(tests/straggler_faults/sitecustomize.py, under torch.distributed), ``host`` shares the rank's core with a busy process
(started here), ``sleep`` sleeps in the training loop before the forward, outside next() and the collectives (a loop
that blocks on a file, a lock or a sync with the device). The base step is measured before the loop, so AMOUNT is a share of it; in
episodes (PERIOD, OFF >= 30) it is a share of the whole step measured over steps 5-24.

    PIN=1              # every rank (every thread of it) on one core of its own: core LOCAL_RANK % cores
    BUSY_SESSION=own   # host's busy process in a session of its own (default: the rank's)
    BUSY=share         # host's busy process takes AMOUNT of the rank's training thread's CPU time (sessions
                       # 24-42); BUSY=duty: busy for 2 * AMOUNT of the wall clock (earlier rounds); default
                       # (step): each step, the plant's seconds divided by the rank's share of its core

Why (the host plant; docs/stragglers-measurements.md, the round of 2026-11-28): on a 2-core VM, a busy
process pinned with the planted rank to one core made the kernel move the machine's other work to the other
core, where the peer (not pinned) ran: the planted rank waited *less* for a CPU than its peer in some runs.
Pinned, each rank keeps its core. Each rank is a session of its own (torchrun starts its workers so), and
Linux's autogroups share a core between sessions first: in the planted rank's session the busy process takes
its CPU from that rank alone (in a session of its own it took it from whoever ran on the core, and the peer
waited longer again). So with 4 ranks on 2 cores (two a core) its core-mate is not slowed either. Busy for a
share of the wall clock it slowed a loaded rank by 23-28% for "5%" (the rank's session gets a third to a half
of its core): it took AMOUNT of the rank's training thread's CPU time instead (BUSY=share), which is not
AMOUNT of the step either: the thread's CPU time is a part of its step (a fifth to a third under load, the rest
waiting for a CPU, for the peers, in the collectives), and much of the busy process's time came while the rank
waited anyway: "10%" held the peers back by 2-3% of the step at load 6, "5%" by 8-14% at load 10 (session 43).
Now (BUSY=step) the busy process is woken once each step as the rank starts its forward and spins for the
plant's seconds (AMOUNT of the measured step) times the rank's share of its core (its CPU time over its CPU
time and its waiting for a CPU while it could run, over the latest steps with the fault off): a process
sharing the rank's session slows it by its CPU seconds divided by the share the session gets of the core, so
the rank loses about the plant's seconds, whatever the load (spinning the plant's seconds themselves held the
peers back by 18-26% of the step for "5%" at load 5-7). Measured by the sweep (session 43, eight runs at load
4.7-11): the peers waited 4-9% of the step longer for "5%" and 9-17% for "10%", near AMOUNT, not exactly it. At
the end the planted rank prints what the busy process did ("busy core: woken ..."), read by
test_stragglers.py's test of the plant.
"""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = int(os.environ.get("STEPS", "80"))
WIDTH = int(os.environ.get("WIDTH", "256"))
LAYERS = int(os.environ.get("LAYERS", "8"))
BATCH = int(os.environ.get("BATCH", "64"))
SLOW_RANK = int(os.environ.get("SLOW_RANK", "-1"))
FAULT = os.environ.get("FAULT", "")
AMOUNT = float(os.environ.get("AMOUNT", "0"))
SLOW_FROM = int(os.environ.get("SLOW_FROM", "0"))
# Episodes for the sweep: in every PERIOD steps the fault is off for the first OFF steps, then on.
PERIOD = int(os.environ.get("PERIOD", "0"))
OFF = int(os.environ.get("OFF", "0"))

PIN = os.environ.get("PIN") == "1"
CORES = sorted(os.sched_getaffinity(0))
CORE = CORES[int(os.environ.get("LOCAL_RANK", "0")) % len(CORES)]


def pin_threads(core: int) -> None:
    """Every thread of this process on ``core`` (sched_setaffinity(0) pins the calling thread only, and
    torch's and gloo's threads exist by now); threads started later inherit it."""
    for task in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(task), {core})
        except OSError:  # the thread ended meanwhile
            pass


if PIN:
    pin_threads(CORE)
dist.init_process_group("gloo")
rank = dist.get_rank()
if PIN:
    pin_threads(CORE)  # and gloo's threads, started by init_process_group
# THREADS=2 THREADS_1=1: rank 1 gets fewer threads than the others (the mixed-devices case on a CPU)
torch.set_num_threads(int(os.environ.get(f"THREADS_{rank}", os.environ.get("THREADS", "1"))))
torch.manual_seed(0)
faulty = rank == SLOW_RANK
model = torch.nn.Sequential(
    *[torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()) for _ in range(LAYERS)]
)
ddp = DistributedDataParallel(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.001)


def base_step_seconds() -> float:
    """The step's compute measured here, the largest over the ranks (the script's own all-reduce)."""
    x = torch.randn(BATCH, WIDTH)
    for _ in range(3):
        model(x).sum().backward()
    start = time.perf_counter()
    for _ in range(5):
        model(x).sum().backward()
    seconds = torch.tensor([(time.perf_counter() - start) / 5])
    dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
    return seconds.item()


BASE = base_step_seconds()
# The seconds a fault adds: AMOUNT of the base step, or, in episodes (PERIOD), of the whole step as measured
# over steps 5-24 before the first episode (the slowest rank's median; under load it is far longer).
PLANT = [BASE * AMOUNT]
os.environ["STRAGGLER_DELAY"] = str(PLANT[0])  # read by straggler_faults/sitecustomize.py (FAULT=comm)
os.environ["STRAGGLER_LAG"] = str(BASE * float(os.environ.get("LAG", "0")))  # and this with LAG_RANK
started: list[float] = []
step_now = [0]
busy = None
if faulty and FAULT == "host":  # a busy process on this rank's core (module docstring)
    import multiprocessing

    if not PIN:
        os.sched_setaffinity(0, {CORE})
    on = multiprocessing.get_context("fork").Event()
    own_session = os.environ.get("BUSY_SESSION", "rank") == "own"
    by_duty = os.environ.get("BUSY", "share") == "duty"

    def thread_cpu(pid: int) -> float:
        """The CPU seconds the rank's training thread (its main thread) has had so far."""
        with open(f"/proc/{pid}/task/{pid}/schedstat", encoding="ascii") as stat:
            return int(stat.read().split()[0]) / 1e9

    by_step = os.environ.get("BUSY", "step") == "step"
    owed = multiprocessing.get_context("fork").Value("d", 0.0, lock=False)  # CPU seconds the rank owes (step)
    woken = multiprocessing.get_context("fork").Value("i", 0, lock=False)  # the busy process's spins (step)

    def spin(on, core, share, pid):
        if own_session:
            os.setsid()  # an autogroup of its own: another job's process, not one of the rank's
        os.sched_setaffinity(0, {core})
        while True:
            on.wait()
            if (
                by_step
            ):  # the plant's seconds of CPU each step, taken while the rank computes (module docstring)
                on.clear()
                woken.value += 1
                until = time.process_time() + owed.value
                while time.process_time() < until:
                    pass
                continue
            if by_duty:  # earlier rounds: busy for 2 * AMOUNT of every 10 ms of wall clock
                until = time.perf_counter() + 0.01 * min(1.0, 2 * share)
                while time.perf_counter() < until:
                    pass
                time.sleep(0.01 * (1 - min(1.0, 2 * share)))
                continue
            # AMOUNT of the rank's own CPU time, topped up every 5 ms while the fault is on: the same share
            # of the rank's session's CPU whatever the machine's load (busy for a share of the wall clock
            # slowed a loaded rank by 23-28% for "5%": its session gets a third to a half of its core)
            mine, theirs = time.process_time(), thread_cpu(pid)
            while on.is_set():
                until = mine + share * (thread_cpu(pid) - theirs)
                while time.process_time() < until:
                    pass
                time.sleep(0.005)

    busy = multiprocessing.get_context("fork").Process(
        target=spin, args=(on, CORE, AMOUNT, os.getpid()), daemon=True
    )
    busy.start()


def schedstat() -> tuple[float, float]:
    """The training thread's CPU seconds so far and its seconds waiting for a CPU while it could run."""
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat", encoding="ascii") as stat:
        cpu, waited = stat.read().split()[:2]
    return int(cpu) / 1e9, int(waited) / 1e9


SHARE = {"since": None, "share": 1.0}


def share_of_core(step: int) -> float:
    """The share of its core the training thread got while it could run, over the latest steps with the fault
    off (updated at each of them, from the first; held while the fault is on): the busy process's CPU seconds
    cost the rank themselves divided by it (module docstring)."""
    if fault_on(step):
        SHARE["since"] = None
        return SHARE["share"]
    now = schedstat()
    if SHARE["since"] is None:
        SHARE["since"] = now
    cpu, waited = now[0] - SHARE["since"][0], now[1] - SHARE["since"][1]
    if cpu > 0.05:
        SHARE["share"] = cpu / (cpu + waited)
    return SHARE["share"]


def fault_on(step: int) -> bool:
    if not faulty or step < SLOW_FROM:
        return False
    return PERIOD == 0 or step % PERIOD >= OFF


class Batches(torch.utils.data.Dataset):
    def __len__(self):
        return 10**9

    def __getitem__(self, index):
        if FAULT == "input" and fault_on(step_now[0]):
            time.sleep(PLANT[0])
        return torch.randn(BATCH, WIDTH), torch.randn(BATCH, WIDTH)


loader = torch.utils.data.DataLoader(Batches(), batch_size=None)
extra = torch.randn(WIDTH, WIDTH)
for step, (x, y) in enumerate(loader):
    step_now[0] = step
    started.append(time.perf_counter())
    if PERIOD and OFF >= 30 and step == 25:
        gaps = sorted(b - a for a, b in zip(started[5:25], started[6:26], strict=True))
        measured = torch.tensor([gaps[len(gaps) // 2]])
        dist.all_reduce(measured, op=dist.ReduceOp.MAX)
        PLANT[0] = measured.item() * AMOUNT
        os.environ["STRAGGLER_DELAY"] = str(PLANT[0])
    if step >= STEPS:
        break
    now_on = fault_on(step)
    os.environ["STRAGGLER_ON"] = "1" if now_on and FAULT == "comm" else "0"
    if busy is not None and by_step:
        if now_on:  # each step: the busy process takes PLANT times the rank's share of its core, once
            owed.value = PLANT[0] * share_of_core(step)
            on.set()
        else:
            on.clear()
            share_of_core(step)
    elif busy is not None:
        on.set() if now_on else on.clear()
    if FAULT == "sleep" and now_on:
        time.sleep(PLANT[0])
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    if FAULT == "compute" and now_on:
        with (
            torch.no_grad()
        ):  # matmuls for AMOUNT of the base step in CPU time (unmoved by the machine's load)
            until = time.thread_time() + PLANT[0]
            while time.thread_time() < until:
                torch.relu(x @ extra)
    loss.backward()
    logged = loss.detach().clone()
    dist.all_reduce(logged)  # the loss averaged for the log, as many scripts do
    optimizer.step()
    optimizer.zero_grad()
if rank == 0:
    print(f"done {STEPS} steps, base step {BASE * 1000:.1f} ms, planted {PLANT[0] * 1000:.1f} ms", flush=True)
if busy is not None and by_step:
    # what the plant did, for a test that it does it (test_stragglers.py): its CPU seconds as the kernel
    # counted them, against what the rank owed each step it was woken
    with open(f"/proc/{busy.pid}/schedstat", encoding="ascii") as stat:
        took = int(stat.read().split()[0]) / 1e9
    on_steps = sum(fault_on(step) for step in range(STEPS))
    print(
        f"busy core: woken {woken.value} of {on_steps} steps, took {took:.4f} s of CPU, owed {owed.value:.4f} s a "
        f"step (share of the core {SHARE['share']:.3f})",
        flush=True,
    )
if busy is not None:
    busy.kill()
dist.destroy_process_group()
