"""A real two-rank gloo job that fails the way users' jobs fail, for the explain tests (fault injection).

    torchrun --nproc-per-node 2 --log-dir LOGS --redirects 3 --tee 3 tests/explain_failing_job.py MODE

MODE ``crash``: rank 1 raises in the training step while rank 0 waits for it in an all_reduce.
MODE ``dataloader``: rank 1's DataLoader worker raises in ``__getitem__``.
MODE ``restart`` (with ``--max-restarts 1``): the first attempt's rank 1 runs out of memory, the second
attempt's rank 1 never comes back from loading its data and rank 0's all_reduce times out.
"""

import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


class Shards(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        if dist.get_rank() == 1 and index == 2:
            raise ValueError(f"sample {index} has no label")  # planted: the user's data is broken
        return torch.ones(4)


def train_step(rank: int, mode: str, attempt: int) -> None:
    if mode == "crash" and rank == 1:
        raise RuntimeError("planted crash on rank 1")
    if mode == "restart" and rank == 1 and attempt == 0:
        raise torch.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which "
            "1.06 GiB is free. Of the allocated memory 60.12 GiB is allocated by PyTorch, and 17.31 GiB is "
            "reserved by PyTorch but unallocated."
        )
    if mode == "restart" and rank == 1:
        print("rank 1: loading the next shard", flush=True)
        time.sleep(300)  # planted: the data never comes; torchrun stops this rank once rank 0 fails


def main() -> None:
    mode = sys.argv[1]
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    # torchrun's store outlives a restart; the gloo addresses the last attempt's ranks left in it would be
    # read by this attempt's ranks (connection refused), so each attempt keeps its keys apart
    # torchrun's agent hosts the store where TORCHELASTIC_USE_AGENT_STORE says so (torch 2.13); torch 2.4 says
    # False: there rank 0 hosts it, as env:// would
    hosted_by_rank_0 = os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "True") == "False"
    agent_store = dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        world_size=int(os.environ["WORLD_SIZE"]) if hosted_by_rank_0 else None,
        is_master=hosted_by_rank_0 and os.environ["RANK"] == "0",
        timeout=timedelta(seconds=120),
    )
    dist.init_process_group(
        "gloo",
        store=dist.PrefixStore(f"attempt_{attempt}", agent_store),
        rank=int(os.environ["RANK"]),
        world_size=int(os.environ["WORLD_SIZE"]),
        timeout=timedelta(seconds=120),
    )
    rank = dist.get_rank()
    tensor = torch.ones(4)
    dist.all_reduce(tensor)
    print(f"rank {rank}: step 0 done", flush=True)
    # every rank is connected now (a short timeout earlier would fail the connecting on a loaded machine):
    # from here a hang is found in seconds, not minutes
    if mode == "restart":
        dist.distributed_c10d._set_pg_timeout(timedelta(seconds=8))
    if mode == "dataloader":
        loader = torch.utils.data.DataLoader(Shards(), batch_size=2, num_workers=1)
        for batch in loader:
            dist.all_reduce(batch)
    else:
        train_step(rank, mode, attempt)
        dist.all_reduce(tensor)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
