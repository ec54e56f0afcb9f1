# ranks: 3
# culprit: 1
# ends: any
"""Rank 1 all-reduces float64 where ranks 0 and 2 send float32."""

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(4)
    dist.all_reduce(x)
    if rank == 1:
        x = x.double()
    dist.all_reduce(x)  # <- culprit
    dist.destroy_process_group()


main()
