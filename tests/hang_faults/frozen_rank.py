# ranks: 2
# culprit: 1
# ends: hang
"""Rank 1's process is stopped (SIGSTOP, as a debugger or a job scheduler's suspend does): it answers no
signal, so it gives no stack and no dump."""

import os
import signal

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(4)
    for step in range(4):
        if rank == 1 and step == 2:
            os.kill(os.getpid(), signal.SIGSTOP)
        dist.all_reduce(x)
    dist.destroy_process_group()


main()
