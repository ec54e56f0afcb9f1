# ranks: 4
# culprit: 3
# ends: hang
"""Two process groups (data and tensor parallel); rank 3 calls them in the other order."""

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    data_group = dist.new_group([0, 1, 2, 3])
    model_group = dist.new_group([2, 3])
    x = torch.ones(4)
    for _ in range(3):
        dist.all_reduce(x, group=data_group)
        if rank in (2, 3):
            dist.all_reduce(x, group=model_group)
    if rank == 3:  # <- culprit
        dist.all_reduce(x, group=model_group)
        dist.all_reduce(x, group=data_group)
    else:
        dist.all_reduce(x, group=data_group)
        if rank == 2:
            dist.all_reduce(x, group=model_group)
    dist.destroy_process_group()


main()
