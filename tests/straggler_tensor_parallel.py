"""Tensor parallelism as pytorch/examples writes it (distributed/tensor_parallelism/tensor_parallel_example.py:
a 2-layer MLP, ``ColwiseParallel`` then ``RowwiseParallel``, AdamW), on the CPU over gloo, for the straggler and
debug-mode tests; nothing of torchdoctor's in it. MESH=tp: a 1-D mesh of every rank (the default); MESH=2d: a
2-D mesh ("dp", "tp") of shape DP x (world size / DP), FSDP2's ``fully_shard`` on "dp" and TP on "tp".
Rank SLOW_RANK does SLOW_MS more compute per step (a matmul loop before its forward: more work on one rank)
from step SLOW_FROM on: tests/ only, nothing in src/ knows it. DIVERGE=1: after step 2, rank 0 makes a DTensor
of its shard and rank 1 of its partial sum, and both ask for the full tensor from the same line: an all-gather on
one rank, an all-reduce on the other (a functional-collective mismatch)."""

import os
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

MESH = os.environ.get("MESH", "tp")
STEPS = int(os.environ.get("STEPS", "140"))
SLOW_RANK = int(os.environ.get("SLOW_RANK", "-1"))
SLOW_MS = float(os.environ.get("SLOW_MS", "0"))
SLOW_FROM = int(os.environ.get("SLOW_FROM", "60"))
DIVERGE = os.environ.get("DIVERGE") == "1"
DP = int(os.environ.get("DP", "1"))


class ToyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = torch.nn.Linear(256, 1024)
        self.relu = torch.nn.ReLU()
        self.out_proj = torch.nn.Linear(1024, 256)

    def forward(self, x):
        return self.out_proj(self.relu(self.in_proj(x)))


def more_work(milliseconds: float) -> None:
    """Compute for about ``milliseconds`` on this rank's CPU (the same matmul, repeated)."""
    a = torch.randn(128, 128)
    end = time.perf_counter() + milliseconds / 1000
    while time.perf_counter() < end:
        a = torch.tanh(a @ a)


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = ToyModel()
    plan = {"in_proj": ColwiseParallel(), "out_proj": RowwiseParallel()}
    if MESH == "2d":
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh("cpu", (DP, world // DP), mesh_dim_names=("dp", "tp"))
        tp_mesh = mesh["tp"]
        model = parallelize_module(model, tp_mesh, plan)
        fully_shard(model, mesh=mesh["dp"])
    else:
        tp_mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",))
        model = parallelize_module(model, tp_mesh, plan)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    for step in range(STEPS):
        torch.manual_seed(step)  # the same input on every TP rank, as the example does
        x = torch.rand(64, 256)
        if rank == SLOW_RANK and step >= SLOW_FROM:
            more_work(SLOW_MS)
        model(x).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
        if DIVERGE and step == 2:  # rank 0 gathers its shard, rank 1 sums its partial value
            placements = [Shard(0) if rank == 0 else Partial()]
            DTensor.from_local(torch.ones(8, 8), tp_mesh, placements).full_tensor()
    if rank == 0:
        print(f"done {STEPS} steps", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
