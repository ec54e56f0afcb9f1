# ranks: 2
# culprit: 1
# ends: hang
"""Rank 1 stalls in its teardown (an upload of its logs that never ends) while rank 0 waits in the final
barrier before destroy_process_group."""

import time

import torch
import torch.distributed as dist


def cleanup(rank):
    if rank == 1:
        time.sleep(300)  # <- culprit
        return
    dist.barrier()
    dist.destroy_process_group()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(4)
    for _ in range(3):
        dist.all_reduce(x)
    cleanup(rank)


main()
