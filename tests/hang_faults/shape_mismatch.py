# ranks: 3
# culprit: 1
# ends: any
"""Rank 1 all-reduces a tensor of another size (its last, shorter batch); gloo refuses it or hangs."""

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for step in range(3):
        size = 3 if rank == 1 and step == 2 else 4
        batch = torch.ones(size)
        dist.all_reduce(batch)  # <- culprit
    dist.destroy_process_group()


main()
