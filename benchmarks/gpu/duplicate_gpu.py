"""Two ranks on one GPU with NCCL: each rank takes cuda:0, as a script that ignores LOCAL_RANK on a one-GPU
machine does (NCCL refuses: "Duplicate GPU detected"). For benchmarks/gpu/record.sh (issue 23).

    torchrun --nproc-per-node 2 duplicate_gpu.py
"""

import datetime

import torch
import torch.distributed as dist

torch.cuda.set_device(0)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60))
x = torch.ones(4, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {dist.get_rank()}: all_reduce gave {x.tolist()}", flush=True)
dist.destroy_process_group()
