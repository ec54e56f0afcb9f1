"""Whether a rank takes the branch of a condition on the rank (`torchdoctor.hang.source.takes_branch`): the
test worked out with the rank's number put in, and no answer where it needs more than the rank and constants."""

import pytest

from torchdoctor.hang.source import rank_condition, takes_branch

SCRIPT = """\
import torch.distributed as dist
rank = dist.get_rank()
if rank != 1:
    dist.all_reduce(t)
if rank in (0, 1):
    dist.all_reduce(t)
if dist.get_rank() == 0:
    dist.all_reduce(t)
else:
    dist.all_reduce(t)
if self.global_rank % 2 == 0 and not rank > 3:
    dist.all_reduce(t)
if rank < world_size - 1:
    dist.all_reduce(t)
if is_main_process:
    dist.all_reduce(t)
if nranks == 1:
    dist.all_reduce(t)
"""


@pytest.mark.parametrize(
    "line, ranks",
    [
        (4, [True, False, True, True]),  # if rank != 1
        (6, [True, True, False, False]),  # if rank in (0, 1)
        (8, [True, False, False, False]),  # if dist.get_rank() == 0
        (10, [False, True, True, True]),  # its else branch
        (12, [True, False, True, False]),  # % 2 == 0 and not > 3
        (14, [None] * 4),  # world_size is not known
        (16, [None] * 4),  # a flag, not a number
        (18, [None] * 4),  # a count of ranks, not the rank
    ],
)
def test_a_rank_takes_the_branch_its_number_makes_true_and_no_answer_where_the_test_needs_more(
    tmp_path, line, ranks
):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    condition = rank_condition(str(script), line)
    assert condition is not None
    assert [takes_branch(str(script), condition, rank) for rank in range(4)] == ranks
