"""With more than one rank, a dump says which rank and host it comes from (real processes over gloo)."""

from __future__ import annotations

import os
import textwrap

from rank_runner import run_ranks

from torchdoctor.distributed.ranks import from_environment

WORKER = textwrap.dedent(
    """
    import sys
    import torch
    import torch.distributed as dist
    from torch import nn
    from torchdoctor import DebugUnderflowOverflow

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    if rank == 1:
        with torch.no_grad():
            model[1].weight.fill_(float("nan"))
    detector = DebugUnderflowOverflow(model)
    try:
        loss = model(torch.ones(2, 3)).sum()
        status = "clean"
    except ValueError as error:
        status = f"caught {type(error).__name__} in {error.module_name!r}"
    detector.remove()
    flags = torch.tensor([0.0 if status == "clean" else 1.0])
    dist.all_reduce(flags)  # a real collective: both ranks got this far
    print(f"status {status}; ranks that found inf/nan: {int(flags.item())}")
    dist.destroy_process_group()
    """
)


def test_each_dump_names_its_rank_and_host(tmp_path):
    outputs = [result.output for result in run_ranks(WORKER, tmp_path, nprocs=2, timeout=90)]
    rank0, rank1 = outputs
    assert "status clean; ranks that found inf/nan: 1" in rank0, rank0
    assert "Detected" not in rank0
    assert "status caught InfNanDetected in '1'; ranks that found inf/nan: 1" in rank1, rank1
    host = from_environment(os.environ).host
    header = f"Detected inf/nan during batch_number=0\non rank 1 of 2 (host {host})\nLast 2 forward"
    assert header in rank1, rank1
