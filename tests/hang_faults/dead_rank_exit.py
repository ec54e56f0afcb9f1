# ranks: 2
# culprit: 1
# ends: fail
"""Rank 1 leaves with os._exit (a library calling exit on an error): no traceback, no dump."""

import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(4)
    for step in range(4):
        dist.all_reduce(x)
        if rank == 1 and step == 2:
            os._exit(3)  # <- culprit
    dist.destroy_process_group()


main()
