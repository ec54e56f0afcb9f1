"""With more than one rank, a dump says which rank and host it comes from (real processes over gloo)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_each_dump_names_its_rank_and_host(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    port = free_port()
    processes = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank))
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        processes.append(
            subprocess.Popen(
                [sys.executable, str(script)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outputs = []
    try:
        for process in processes:
            outputs.append(process.communicate(timeout=90)[0])
    finally:
        for process in processes:
            process.kill()
    rank0, rank1 = outputs
    assert "status clean; ranks that found inf/nan: 1" in rank0, rank0
    assert "Detected" not in rank0
    assert "status caught InfNanDetected in '1'; ranks that found inf/nan: 1" in rank1, rank1
    host = from_environment(os.environ).host
    header = f"Detected inf/nan during batch_number=0\non rank 1 of 2 (host {host})\nLast 2 forward"
    assert header in rank1, rank1
