# ranks: 3
# culprit: 1
# ends: hang
"""Rank 1 skips the metric all_reduce under a condition on the rank, in the same function: its next
all_reduce pairs with the others' metric all_reduce (another size), and the job hangs."""

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    loss = torch.ones(3)
    for step in range(3):
        dist.all_reduce(loss)
        metric = torch.tensor([float(step)])
        if rank != 1:  # <- culprit
            dist.all_reduce(metric)
    dist.barrier()
    dist.destroy_process_group()


main()
