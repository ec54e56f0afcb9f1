# ranks: 3
# culprit: 1
# ends: fail
"""Rank 1 is killed (SIGKILL, as the kernel's out-of-memory killer does) while it builds its next batch."""

import os
import subprocess
import threading

import torch
import torch.distributed as dist


def out_of_memory_killer(rank):
    if rank == 1:  # stands for the kernel: another process kills the rank wherever it is
        threading.Timer(3.0, subprocess.run, (["kill", "-9", str(os.getpid())],)).start()


def build_batch(rank, step):
    # rank 1 is busy for seconds at its third step, all on one line: a while loop's test line was where a
    # sample found it once in a few hundred runs (the killed rank is placed by its last sample)
    work = 2 * 10**8 if rank == 1 and step == 2 else 0
    sum(i * i for i in range(work))  # <- culprit
    return torch.ones(4)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for step in range(4):
        if step == 2:
            out_of_memory_killer(rank)
        dist.all_reduce(build_batch(rank, step))
    dist.destroy_process_group()


main()
