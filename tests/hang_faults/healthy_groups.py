# ranks: 4
# culprit: none
# ends: ok
"""A healthy job with three process groups and a DataLoader with workers."""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    evens, odds = dist.new_group([0, 2]), dist.new_group([1, 3])
    mine = evens if rank % 2 == 0 else odds
    for batch in DataLoader(torch.ones(8, 4), batch_size=2, num_workers=1):
        dist.all_reduce(batch, group=mine)
        dist.all_reduce(batch)
    dist.barrier()
    dist.destroy_process_group()


main()
