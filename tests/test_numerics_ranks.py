"""With more than one rank, a dump says which rank and host it comes from (real processes over gloo).

Both tests read one 2-rank job that runs the two scenarios in turn (a module of SHARED_JOB_MODULES in
conftest): each rank process costs seconds of CPU for its ``import torch`` alone.
"""

from __future__ import annotations

import os
import textwrap

import pytest
from rank_runner import run_ranks

from torchdoctor.distributed.ranks import from_environment

WORKER = textwrap.dedent(
    """
    import io
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
    print("--- headroom ---", flush=True)

    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.0)).half()
    with torch.no_grad():
        model[0].weight.copy_(torch.eye(2) * (1.5e4 if rank == 1 else 1.0))
        model[0].bias.zero_()
    with DebugUnderflowOverflow(model, file=io.StringIO()) as detector:
        for _ in range(2):
            model(torch.tensor([[4.0, 1.0]], dtype=torch.float16))
    print(f"warnings {detector.warnings}")
    dist.barrier()
    dist.destroy_process_group()
    """
)


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> list[tuple[str, str]]:
    """Each rank's output: (the dump scenario's with the job's stderr, the headroom scenario's)."""
    results = run_ranks(WORKER, tmp_path_factory.mktemp("numerics-ranks"), nprocs=2, timeout=90)
    parts = [result.stdout.partition("--- headroom ---") for result in results]
    return [
        (before + result.stderr, after) for (before, _, after), result in zip(parts, results, strict=True)
    ]


def test_each_dump_names_its_rank_and_host(job):
    (rank0, _), (rank1, _) = job
    assert "status clean; ranks that found inf/nan: 1" in rank0, rank0
    assert "Detected" not in rank0
    assert "status caught InfNanDetected in '1'; ranks that found inf/nan: 1" in rank1, rank1
    host = from_environment(os.environ).host
    header = f"Detected inf/nan during batch_number=0\non rank 1 of 2 (host {host})\nLast 2 forward"
    assert header in rank1, rank1


def test_headroom_warnings_name_their_rank_and_host(job):
    (_, rank0), (_, rank1) = job
    host = from_environment(os.environ).host
    assert "warnings []" in rank0, rank0
    # once, for the Linear that made the tensor (not for the Dropout and the Sequential passing it on)
    expected = f"0 output reached 6.00e+04 = 92% of float16 max on rank 1 of 2 (host {host})"
    assert f"warnings [{expected!r}]" in rank1, rank1
