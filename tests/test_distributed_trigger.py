"""set_trigger/check_trigger: one rank sets it, every rank sees it at the next check, then it is reset."""

import json

from rank_runner import run_ranks

import torchdoctor

STOP_TOGETHER = """
import json, torch, torch.distributed as dist
from torchdoctor import check_breakpoint, check_trigger, set_trigger

dist.init_process_group("gloo")
rank = dist.get_rank()
seen = []
for step in range(10):
    if rank == 1 and step == 3:
        set_trigger()  # say rank 1 saw loss=nan
    dist.all_reduce(torch.ones(1))  # a training step's collective
    if check_trigger():
        seen.append(step)
        break
after_reset = check_breakpoint()
if rank == 0:
    set_trigger()
    set_trigger()  # twice is still one stop
print(json.dumps({"stopped at": seen, "after reset": after_reset, "next": check_trigger(), "then": check_trigger()}))
dist.destroy_process_group()  # exiting with a live gloo group sometimes aborts (torch, not us)
"""


def test_one_rank_sets_every_rank_stops_and_it_resets(tmp_path):
    results = run_ranks(STOP_TOGETHER, tmp_path, nprocs=2, env={"TORCHDOCTOR_DEBUG_MODE": "1"}, timeout=60)
    for result in results:
        assert result.returncode == 0, result.output
        seen = json.loads(result.stdout.strip().splitlines()[-1])
        assert seen == {"stopped at": [3], "after reset": False, "next": True, "then": False}


def test_single_process_trigger():
    assert torchdoctor.set_breakpoint is torchdoctor.set_trigger
    assert torchdoctor.check_breakpoint is torchdoctor.check_trigger
    assert torchdoctor.check_trigger() is False
    torchdoctor.set_trigger()
    assert torchdoctor.check_trigger() is True
    assert torchdoctor.check_trigger() is False
