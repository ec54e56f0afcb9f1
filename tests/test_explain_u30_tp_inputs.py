"""pytorch/examples' tensor-parallel example (distributed/tensor_parallelism/tensor_parallel_example.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause: a ToyModel of two Linear layers, ColwiseParallel then
RowwiseParallel, on a 1-D mesh) run on 2 CPU ranks, rank 1 given a batch of 16 rows where rank 0 has 20 (the
example's own comment: "For TP, input needs to be same across all TP ranks"). Under launch --debug, debug mode
named the RowwiseParallel all_reduce's shapes, but its fix and explain's were a statistic's reduction and
accelerate's padding of a gather (found for session 30). The model and loop below are the example's, shortened
(no logging helpers, a CPU mesh, 5 iterations)."""

from __future__ import annotations

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, torch.nn as nn, torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(10, 32)
        self.relu = nn.ReLU()
        self.out_proj = nn.Linear(32, 5)

    def forward(self, x):
        return self.out_proj(self.relu(self.in_proj(x)))

mesh = init_device_mesh("cpu", (2,))
rank = mesh.get_rank()
model = parallelize_module(ToyModel(), mesh, {"in_proj": ColwiseParallel(), "out_proj": RowwiseParallel()})
optimizer = torch.optim.AdamW(model.parameters(), lr=0.25, foreach=True)
for i in range(5):
    torch.manual_seed(i)
    inp = torch.rand(20 if rank == 0 or i < 2 else 16, 10)
    model(inp).sum().backward()
    optimizer.step()
dist.destroy_process_group()
"""


def test_tp_ranks_given_batches_of_different_sizes_under_debug_on_this_torch_say_the_same_input_per_tp_group(
    tmp_path,
):
    returncode, output = launch_two_ranks(
        tmp_path, SCRIPT, "--debug", env={"TORCHDOCTOR_DEBUG_TIMEOUT": "30"}
    )
    assert returncode != 0 and "Process 1: [16, 5]" in output, output[-3000:]
    assert "runs inside a tensor-parallel (DTensor) layer" in output and "drop_last" in output
    found = explained(output)
    assert found.id == "log.gathered_shapes_differ", found.summary
    assert (
        "the ranks were given different inputs" in found.summary and "pad_across_processes" not in found.fix
    )
    assert "every rank of a tensor-parallel group must be given the same input batch" in found.fix
    assert "log.rank_divergence" not in found.details.get("alternatives", [])
