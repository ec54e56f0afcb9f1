"""A real NCCL hang on one GPU: a one-rank NCCL job whose all_reduce waits behind a kernel that spins.

    torchrun --nproc-per-node 1 nccl_hang.py [TIMEOUT_SECONDS]   # NCCL's own watchdog times out after TIMEOUT
    torchdoctor launch --watchdog 10 --nproc-per-node 1 nccl_hang.py 600   # ours stops it first

With one GPU no peer can be late, so the collective is held back on the device instead: the all_reduce is queued
on its stream behind a kernel that spins (``torch.cuda._sleep``) for SPIN seconds, and the host then waits for
its result. For benchmarks/gpu/record.sh (issue 23).
"""

import datetime
import os
import sys

import torch
import torch.distributed as dist

TIMEOUT = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
SPIN = float(os.environ.get("SPIN", "150"))  # seconds the kernel spins (at about 2 GHz)

local = int(os.environ.get("LOCAL_RANK", "0"))
device = torch.device("cuda", local)
torch.cuda.set_device(device)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=TIMEOUT), device_id=device)
x = torch.ones(1 << 20, device=device)
for _ in range(3):
    dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {dist.get_rank()}: 3 all_reduces done; now a kernel that spins for {SPIN:g} s", flush=True)
torch.cuda._sleep(int(SPIN * 2e9))
dist.all_reduce(x)  # queued behind the spinning kernel
print(f"rank {dist.get_rank()}: result {x[0].item()}", flush=True)  # the host waits here
dist.destroy_process_group()
