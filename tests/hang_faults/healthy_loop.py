# ranks: 2
# culprit: none
# ends: ok
"""A healthy job with slow steps and a pause in output: no verdict may blame anyone."""

import time

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    x = torch.ones(4)
    for step in range(6):
        time.sleep(0.3)
        dist.all_reduce(x)
        if step % 2 == 0:
            dist.barrier()
    dist.destroy_process_group()


main()
