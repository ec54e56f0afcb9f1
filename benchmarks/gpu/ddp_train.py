"""A small DDP training run on CUDA for benchmarks/gpu/record.sh: NCCL on one rank (``launch --debug``), or gloo
with two ranks sharing the one GPU (``launch --stragglers``, one rank given extra GPU work from SLOW_FROM, or
extra work on its CPU: a busy loop of HOST_WORK of its forward+backward's time, before the batch goes to the GPU,
while the GPU has nothing queued).

    BACKEND=nccl torchdoctor launch --debug --nproc-per-node 1 ddp_train.py
    BACKEND=gloo SLOW_RANK=1 AMOUNT=0.3 torchdoctor launch --stragglers --nproc-per-node 2 ddp_train.py
    BACKEND=gloo SLOW_RANK=1 HOST_WORK=0.3 torchdoctor launch --stragglers --nproc-per-node 2 ddp_train.py

Nothing of torchdoctor's is in it.
"""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = int(os.environ.get("STEPS", "40"))
WIDTH = int(os.environ.get("WIDTH", "2048"))
BATCH = int(os.environ.get("BATCH", "16384"))
SLOW_RANK = int(os.environ.get("SLOW_RANK", "-1"))
SLOW_FROM = int(os.environ.get("SLOW_FROM", "40"))
AMOUNT = float(os.environ.get("AMOUNT", "0"))
HOST_WORK = float(os.environ.get("HOST_WORK", "0"))

dist.init_process_group(os.environ.get("BACKEND", "nccl"))
rank = dist.get_rank()
device = torch.device("cuda", 0)  # one GPU: every rank on it
torch.cuda.set_device(device)
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(WIDTH, WIDTH) for _ in range(4)]).to(device)
ddp = DistributedDataParallel(model, device_ids=[0])
optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-6)
# four whole batches, one item each: no per-row collate (16,384 rows of 2,048 took 175 ms a step to stack)
data = torch.utils.data.TensorDataset(torch.randn(4, BATCH, WIDTH))
loader = torch.utils.data.DataLoader(data, batch_size=None)
extra = torch.randn(WIDTH, WIDTH, device=device)


def base_step() -> float:
    x = torch.randn(BATCH, WIDTH, device=device)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(3):
        model(x).sum().backward()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / 3


# extra matmuls on the slow rank: AMOUNT of a step's forward+backward (about 3 such matmuls per layer)
matmuls = round(AMOUNT * 12) if rank == SLOW_RANK else 0
base = base_step()
busy = HOST_WORK * base if rank == SLOW_RANK else 0.0  # seconds of the slow rank's CPU work per step
step = 0
start = time.perf_counter()
while step < STEPS:
    for (batch,) in loader:
        if step >= SLOW_FROM and busy:
            until = time.perf_counter() + busy
            while (
                time.perf_counter() < until
            ):  # work on the CPU (the GPU idle: the last step's loss was read)
                pass
        batch = batch.to(device, non_blocking=True)
        loss = ddp(batch).pow(2).mean()
        loss.backward()
        if step >= SLOW_FROM:
            y = batch
            for _ in range(matmuls):
                y = y @ extra
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss_value = loss.item()
        step += 1
        if step >= STEPS:
            break
print(
    f"rank {rank}: {STEPS} steps, {(time.perf_counter() - start) / STEPS * 1000:.1f} ms a step "
    f"(base forward+backward {base * 1000:.1f} ms), loss {loss_value:.3g}, extra matmuls {matmuls}, "
    f"CPU work {busy * 1000:.1f} ms a step",
    flush=True,
)
dist.destroy_process_group()
