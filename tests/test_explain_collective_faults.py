"""Collectives a training script calls wrongly, found by planting the fault in pytorch/examples' DDP tutorial
(distributed/ddp-tutorial-series/multigpu_torchrun.py, gloo on CPU, 2 ranks under torchrun): a broadcast from a
src outside the world reads as the collective's refusal, and all_gather_object of a lambda as the object
collective's pickling, not as mp.spawn's. Read from a real process, its console recorded (fixtures/recorded_runs/;
benchmarks/recorded_runs.py runs it again), and as printed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from explaining import explained
from rank_runner import run_script
from recorded import recorded

from torchdoctor.explain.diagnose import explain

# one gloo rank, as the tutorial's ranks call it: a rank outside the world, then an unpicklable object
SCRIPT = """
import sys
import torch
import torch.distributed as dist



def main():
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
    if sys.argv[1] == "broadcast":
        dist.broadcast(torch.zeros(3), src=1)
    else:
        out = [None]
        dist.all_gather_object(out, {"loss_fn": lambda x: x})


main()
"""


def run_with(fault: str, folder: Path) -> str:
    script = folder / "train.py"
    script.write_text(SCRIPT)
    done = run_script([str(script), fault], timeout=60)
    assert done.returncode != 0, done.stderr[-2000:]
    return done.stderr  # what the tests read: the traceback, without the script's stdout


RECORDED_RUNS = {
    "collective_broadcast_outside_the_world": lambda folder: run_with("broadcast", folder),
    "collective_gather_object_of_a_lambda": lambda folder: run_with("gather_object", folder),
}


def lead_of(name: str):
    stderr = recorded(name)
    return explain(["-"], stdin=io.BytesIO(stderr.encode()))[0], stderr


def test_a_broadcast_from_a_rank_outside_the_world_names_the_src():
    found, stderr = lead_of("collective_broadcast_outside_the_world")
    assert found.id == "log.collective_arguments", (found.summary, stderr[-2000:])
    assert "invalid root rank: 1" in found.summary and "src / dst" in found.summary
    assert "0 to world_size - 1" in found.fix
    # the user's line the refusal came through, from the traceback (tests/test_explain_users_line.py): the
    # recording's own path to the script
    script, line = found.details["frame"].removesuffix(" in main").rsplit(":", 1)
    assert script.endswith("/train.py") and line == "11", found.details
    assert f'File "{script}", line 11, in main' in stderr, stderr[-2000:]
    assert found.fix.endswith("dist.broadcast(torch.zeros(3), src=1).")


def test_all_gather_object_of_a_lambda_is_the_object_collective_not_spawn():
    found, stderr = lead_of("collective_gather_object_of_a_lambda")
    assert found.id == "log.object_collective_pickling", (found.summary, stderr[-2000:])
    assert "main.<locals>.<lambda>" in found.summary
    assert "plain data" in found.fix and "torchrun" not in found.fix


@pytest.mark.usefixtures("every_message_seen")
@pytest.mark.parametrize(
    "line",
    [
        # ProcessGroupGloo.cpp's invalidArgument before each op's words; NCCL's gather raises the bare check
        "RuntimeError: ProcessGroupGloo::broadcast: invalid root rank: 2\n",
        "RuntimeError: ProcessGroupGloo::reduce: invalid root rank: -1\n",
        "ValueError: invalid root rank: 8\n",
    ],
)
def test_invalid_root_rank_as_printed_is_certain(line):
    found = explained(line)
    assert found.id == "log.collective_arguments" and found.details["confidence"] == "certain"
    assert "src / dst names a rank the group does not have" in found.summary


@pytest.mark.parametrize(
    "line",
    [
        # a root *tensor* index, NCCL's own rank check at init and DistributedSampler's: not a collective's src
        "RuntimeError: ProcessGroupGloo::broadcast: invalid root tensor: 1\n",
        "NCCL WARN Invalid rank requested : 3/2\n",
        "ValueError: Invalid rank 3, rank should be in the interval [0, 1]\n",
    ],
)
def test_other_invalid_ranks_are_not_a_collectives_root(line):
    found = explained(line)
    assert "src / dst names a rank" not in found.summary


TRACEBACK = """Traceback (most recent call last):
  File "/home/me/train.py", line 98, in main
    torch.distributed.all_gather_object(stats, stats_here)
  File "/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83, in wrapper
    return func(*args, **kwargs)
  File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3501, in all_gather_object
    input_tensor, local_size = _object_to_tensor(obj, current_device, group)
  File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3405, in _object_to_tensor
    _pickler(f).dump(obj)
{error}
"""


@pytest.mark.usefixtures("every_message_seen")
@pytest.mark.parametrize(
    "error",
    [
        "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'",
        "TypeError: cannot pickle '_thread.lock' object",
    ],
)
def test_pickling_under_an_object_collective_is_that_collectives_not_spawns(error):
    found = explained(TRACEBACK.format(error=error))
    assert found.id == "log.object_collective_pickling", found.summary
    assert error.split(": ", 1)[1] in found.summary
    assert "log.spawn_pickling" not in found.details.get("alternatives", [])


def test_the_same_pickling_error_without_an_object_collective_is_not_read_as_one():
    # mp.spawn pickling its arguments, and torch.save pickling a model: the same CPython words
    spawn = explained(
        '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 120, in spawn_main\n'
        "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\n"
    )
    assert spawn.id == "log.spawn_pickling"
    saved = explained(
        '  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 900, in save\n'
        "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\n"
    )
    assert saved.id == "log.unpicklable_checkpoint_object"
    # a traceback that only passes through another distributed_c10d function
    other = explained(
        '  File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 10, in broadcast\n'
        "TypeError: cannot pickle '_thread.lock' object\n"
    )
    assert other.id != "log.object_collective_pickling"


def test_torchruns_summary_below_it_names_the_refusal_without_a_second_article():
    text = (
        "[rank0]: ValueError: Invalid destination rank: destination rank should not be the same as the rank of "
        "the current process.\n"
        "E1130 10:48:56.419000 26523 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
        "local_rank: 0 (pid: 26629) of binary: /venv/bin/python\n"
    )
    found = explain(["-"], stdin=io.BytesIO(text.encode()))
    summary = next(f.summary for f in found if f.id == "log.child_failed")
    assert "a consequence of the collective torch refuses as it was called above" in summary
    assert "the a " not in summary


def test_the_reading_it_replaces_is_not_named_as_another_from_real_logs():
    # real logs showed "Can't pickle" for mp.spawn too (seen_on.tsv): a counter-evidence reading, but the object
    # collective's recogniser absorbs spawn's; naming it would send a torchrun user to "use torchrun"
    found = explained(
        TRACEBACK.format(error="AttributeError: Can't pickle local object 'main.<locals>.<lambda>'")
    )
    assert found.id == "log.object_collective_pickling"
    assert "log.spawn_pickling" not in found.details.get("alternatives", []), found.summary
