# ranks: 2
# culprit: 1
# ends: hang
"""A rank stuck loading its next batch (a stalled network filesystem) while the other waits in all_reduce."""

import time

import torch
import torch.distributed as dist


def load_batch(rank, step):
    if rank == 1 and step == 2:
        time.sleep(300)  # <- culprit
    return torch.ones(4) * step


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for step in range(5):
        batch = load_batch(rank, step)
        dist.all_reduce(batch)
    dist.destroy_process_group()


main()
