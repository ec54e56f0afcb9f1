"""A rank that skips a collective under a condition on the rank, then waits in the next collective of another
group with the same ranks (DeepSpeed ZeRO-2's gradient all-reduce runs on a group of its own; found with it in
session 44): each group waits for a rank that waits in the other. The culprit is the skipped call's condition,
not where the rank now waits, and not "another order". A real swap of two groups' calls (rank 0: A then B,
rank 1: B then A) keeps the order reading; a skip within one group reads as before. Real gloo jobs under
`torchdoctor launch --watchdog`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torchdoctor.hang.flight_records import has_flight_recorder
from torchdoctor.hang.folder import folder_verdict

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        not has_flight_recorder(torch._C._distributed_c10d),
        reason="the groups' records need the flight recorder",
    ),
]

SKIP_TWO = """
import torch, torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
grads = dist.new_group([0, 1])
for step in range(4):
    dist.all_reduce(torch.ones(4), group=grads)
    if step == 1:
        if rank != 1:
            dist.all_reduce(torch.ones(2))
dist.destroy_process_group()
"""

SKIP_SUBGROUP = """
import torch, torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
pair = dist.new_group([0, 1])
for step in range(4):
    if rank in (0, 1):
        dist.all_reduce(torch.ones(4), group=pair)
    if step == 1:
        if rank != 1:
            dist.all_reduce(torch.ones(2))
dist.destroy_process_group()
"""

EXTRA_ON_RANK_0 = SKIP_TWO.replace("if rank != 1:", "if rank == 0:")

SWAP = """
import torch, torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
other = dist.new_group([0, 1])
t = torch.ones(4)
dist.all_reduce(t)
dist.all_reduce(t, group=other)
order = [None, other] if rank == 0 else [other, None]
for group in order:
    dist.all_reduce(t, group=group)
dist.destroy_process_group()
"""

SWAP_BRANCHES = """
import torch, torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
other = dist.new_group([0, 1])
t = torch.ones(4)
dist.all_reduce(t)
dist.all_reduce(t, group=other)
if rank == 0:
    dist.all_reduce(t)
    dist.all_reduce(t, group=other)
else:
    dist.all_reduce(t, group=other)
    dist.all_reduce(t)
dist.destroy_process_group()
"""

ONE_GROUP = """
import torch, torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
for step in range(4):
    dist.all_reduce(torch.ones(3))
    if rank != 1:
        dist.all_reduce(torch.ones(1))
dist.barrier()
dist.destroy_process_group()
"""


def watched(folder: Path, script: str, ranks: int = 2) -> tuple[int, str, Path, dict]:
    """``script`` as ``folder/train.py`` on ``ranks`` gloo ranks under `launch --watchdog 2`: the exit status,
    the output, the folder the watchdog kept and its verdict.json."""
    (folder / "train.py").write_text(script)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "launch", "--standalone", "--nproc-per-node", str(ranks),
         "--watchdog", "2", "train.py"],
        env=environ, capture_output=True, text=True, timeout=150, cwd=folder,
    )  # fmt: skip
    output = done.stdout + done.stderr
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    assert kept, output[-3000:]
    return done.returncode, output, Path(kept[1]), json.loads((Path(kept[1]) / "verdict.json").read_text())


@pytest.fixture
def kept():
    folders: list[Path] = []
    yield folders
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_call_skipped_before_a_second_group_of_the_same_ranks_is_the_culprit_not_where_the_rank_waits(
    tmp_path, kept
):
    returncode, output, folder, found = watched(tmp_path, SKIP_TWO)
    kept.append(folder)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert "Culprit: rank(s) 1 at " in output and "train.py:10; rank(s) 0 wait because of it." in output, (
        output
    )
    assert "Each group waits" not in output and "another order" not in output, output[-3000:]
    assert (
        "train.py:11 sits under a condition on the rank, line 10: `if rank != 1:`, which rank 1 does not take"
        in (output)
    )
    assert "the call rank 1 skipped: held up by it, not a second cause" in output, output[-3000:]
    assert found["culprits"] == [1] and found["kind"] == "never_entered", found
    assert found["where"]["line"] == 10 and found["where"]["file"].endswith("train.py"), found
    # judged again from the kept folder without rank 1's dump (its noted calls cannot show the skip): rank 0
    # waits in the call under the condition, which rank 1 does not take; rank 1 is still the culprit
    (folder / "rank1.fr").unlink()
    _, _, again = folder_verdict(folder)
    assert again.culprits == [1] and again.where.line == 10, again


def test_a_call_skipped_before_a_subgroups_collective_names_the_skipped_calls_condition(tmp_path, kept):
    returncode, output, folder, found = watched(tmp_path, SKIP_SUBGROUP, ranks=3)
    kept.append(folder)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    # rank 1 waits in the pair's collective, under `if rank in (0, 1):`, which it takes: that wait is not a skip
    assert "Culprit: rank(s) 1 at " in output and "train.py:11; rank(s) 0, 2 wait because of it." in output, (
        output
    )
    assert "Each group waits" not in output, output[-3000:]
    assert found["culprits"] == [1] and found["where"]["line"] == 11, found


def test_an_extra_call_on_rank_0_before_a_second_group_blames_rank_0_as_in_one_group(tmp_path, kept):
    returncode, output, folder, found = watched(tmp_path, EXTRA_ON_RANK_0)
    kept.append(folder)
    assert "Culprit: rank(s) 0 at " in output and "train.py:10; rank(s) 1 wait because of it." in output, (
        output
    )
    assert "rank 0 took the extra path" in output and "Each group waits" not in output, output[-3000:]


def test_two_groups_called_in_swapped_order_with_nothing_skipped_keep_the_order_reading(tmp_path, kept):
    returncode, output, folder, found = watched(tmp_path, SWAP)
    kept.append(folder)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert "Each group waits for a rank that waits in another group" in output, output[-3000:]
    assert "not a second cause" not in output and found["kind"] == "order", found


def test_two_groups_called_in_swapped_order_on_the_branches_of_one_condition_keep_the_order_reading(
    tmp_path, kept
):
    returncode, output, folder, found = watched(tmp_path, SWAP_BRANCHES)
    kept.append(folder)
    assert "Each group waits for a rank that waits in another group" in output, output[-3000:]
    assert "not a second cause" not in output and found["kind"] == "order", found
    assert found["where"]["line"] == 10, found  # `if rank == 0:`, the branch that orders them differently


def test_a_call_skipped_within_one_group_reads_as_before(tmp_path, kept):
    returncode, output, folder, found = watched(tmp_path, ONE_GROUP)
    kept.append(folder)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert found["culprits"] == [1] and found["kind"] == "mismatch", found
    assert found["where"]["line"] == 8, found  # `if rank != 1:`
    assert "not a second cause" not in output, output[-3000:]
