# ranks: 3
# culprit: 2
# ends: hang
"""Uneven shards: rank 2 runs out of batches, leaves the loop and waits at the evaluation barrier while ranks
0 and 1 wait for it in the next all_reduce."""

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    samples = torch.randn(11, 4)[rank::3]  # 4, 4 and 3 samples: rank 2 has one batch fewer
    for sample in samples.split(1):  # <- culprit
        dist.all_reduce(sample)
    dist.barrier()
    dist.destroy_process_group()


main()
