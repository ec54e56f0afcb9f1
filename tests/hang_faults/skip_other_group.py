# ranks: 2
# culprit: 1
# ends: hang
"""Rank 1 skips an all_reduce of the default group under a condition on the rank, then waits in the next
all_reduce of a second group of the same ranks (as DeepSpeed's gradient all-reduce runs on its own group): each
group waits for a rank that waits in the other, the consequence of one skipped call, not another order."""

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    grads = dist.new_group([0, 1])
    for step in range(4):
        dist.all_reduce(torch.ones(4), group=grads)
        if step == 1:
            metric = torch.tensor([float(step)])
            if rank != 1:  # <- culprit
                dist.all_reduce(metric)
    dist.destroy_process_group()


main()
