"""A collective started with ``async_op=True`` — FSDP2 starts every all-gather and reduce-scatter so, then waits
on it — is the rank's waiting for its peers from its ``Work.wait()``: before, only the instant of starting it was
counted, and under FSDP2 on a DeviceMesh every step said "collectives 0" and a rank with a slow data loader was
not named (the real run: tests/test_stragglers_frameworks.py, LOOP=fsdp2). One gloo rank in this process."""

import time

import pytest
import torch
import torch.distributed as dist

from torchdoctor.stragglers import hooks
from torchdoctor.stragglers.record import StepRecord


@pytest.mark.usefixtures("one_rank")
@pytest.mark.parametrize("start", ["all_gather_single", "reduce_scatter_single", "all_reduce"])
def test_the_wait_on_an_async_collective_is_time_in_collectives(record, start):
    out, given = torch.empty(4), torch.ones(4)
    args = {"all_gather_single": (out, given), "reduce_scatter_single": (out, given), "all_reduce": (given,)}
    work = getattr(dist, start)(*args[start], async_op=True)
    assert isinstance(work, dist.distributed_c10d.Work)  # what FSDP2 checks before it waits
    before = record.comm
    time.sleep(0.05)  # the layer's compute while the collective runs: not waiting
    started = time.perf_counter()
    work.wait()
    waited = time.perf_counter() - started
    assert record.comm - before == pytest.approx(waited, abs=0.01)
    entry = record.arrivals[-1]
    assert len(entry) == 3 and entry[2] >= entry[1]  # arrived when started, left when waited on
    assert id(work) not in hooks._started


@pytest.mark.usefixtures("one_rank")
def test_a_wait_nobody_timed_is_left_alone_and_works_never_waited_on_are_not_kept(record):
    before = record.comm
    for _ in range(hooks.STARTED + 10):
        dist.all_reduce(torch.ones(1), async_op=True)  # never waited on
    assert len(hooks._started) == hooks.STARTED
    untimed = dist.all_reduce(torch.ones(1), async_op=False)
    assert untimed is None and record.comm >= before


def test_uninstall_puts_work_wait_back():
    original = dist.distributed_c10d.Work.wait
    hooks.install(StepRecord(window=100))
    assert dist.distributed_c10d.Work.wait is not original
    hooks.uninstall()
    assert dist.distributed_c10d.Work.wait is original and not hooks._started
