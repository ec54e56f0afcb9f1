# ranks: 2
# culprit: 1
# ends: hang
"""Rank 1 is stuck inside destroy_process_group while rank 0 waits in the final barrier.

Rank 1 sends its last loss asynchronously (``async_op=True``), a collective rank 0 never makes, and does not
wait for it. In torch 2.13 gloo's destroy_process_group shuts the default group down, which waits for every
collective still in flight: this one pairs with rank 0's barrier (the same sequence number, another
operation) and never ends, so rank 1 never returns from the teardown and rank 0 never leaves the barrier.
"""

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    loss = torch.ones(4)
    for _ in range(3):
        dist.all_reduce(loss)
    if rank == 1:  # <- culprit
        dist.all_reduce(loss, async_op=True)  # only rank 1 reports the last loss, and never waits for it
    else:
        dist.barrier()
    dist.destroy_process_group()


main()
