# ranks: 4
# culprit: 0
# ends: hang
"""Rank 0 saves a checkpoint that never ends (a full disk, a hung NFS) while ranks 1-3 wait in a barrier."""

import time

import torch
import torch.distributed as dist


def save_checkpoint(state, step):
    time.sleep(300)  # <- culprit
    torch.save(state, f"/tmp/never-{step}.pt")


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    weights = torch.zeros(8)
    for step in range(4):
        grads = torch.ones(8)
        dist.all_reduce(grads)
        weights -= 0.1 * grads
        if step == 2:
            if rank == 0:
                save_checkpoint(weights, step)
            dist.barrier()
    dist.destroy_process_group()


main()
