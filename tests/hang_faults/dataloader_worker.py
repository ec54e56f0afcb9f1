# ranks: 2
# culprit: 1
# ends: hang
"""Rank 1's DataLoader worker hangs inside the dataset's __getitem__; rank 1 waits for it in next(loader)
while rank 0 waits in all_reduce."""

import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self, rank):
        self.rank = rank

    def __len__(self):
        return 8

    def __getitem__(self, index):
        if self.rank == 1 and index == 4:
            time.sleep(300)  # <- culprit
        return torch.ones(4) * index


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    loader = DataLoader(Samples(rank), batch_size=2, num_workers=1, timeout=0)
    for batch in loader:
        dist.all_reduce(batch)
    dist.destroy_process_group()


main()
