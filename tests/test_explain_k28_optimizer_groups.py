"""A parameter in two optimizer parameter groups (kinds/optimizer_groups.py), as DeepSpeed's engine and torch's
Optimizer print it, and a near-miss that must not read as it."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


# deepspeed/runtime/engine.py _check_for_duplicates (volcengine/veGiantModel#6)
def test_deepspeeds_assert_names_the_parameter():
    found = explained(
        '  File "/usr/local/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1320, in '
        "_check_for_duplicates\n"
        '    assert occurrence <= 1, f"Parameter with name: {name} occurs multiple times in optimizer.param_groups. '
        'Make sure it only appears once to prevent undefined behavior."\n'
        "AssertionError: Parameter with name: tied_modules.SharedEmbedding.embedding_weight occurs multiple times in "
        "optimizer.param_groups. Make sure it only appears once to prevent undefined behavior.\n"
    )
    assert found.id == "log.param_in_two_groups" and found.details["confidence"] == "certain", found.summary
    assert "tied_modules.SharedEmbedding.embedding_weight" in found.summary
    assert "named_parameters()" in found.fix and "exactly one" in found.fix


# torch/optim/optimizer.py add_param_group (zkyseu/O2SFormer#16)
def test_torchs_refusal_reads_the_same():
    found = explained(
        '  File "/home/u/.conda/envs/lane/lib/python3.7/site-packages/torch/optim/optimizer.py", line 346, in '
        "add_param_group\n"
        '    raise ValueError("some parameters appear in more than one parameter group")\n'
        "ValueError: some parameters appear in more than one parameter group\n"
    )
    assert found.id == "log.param_in_two_groups", found.summary


# a parameter repeated inside one group is torch's warning, another (harmless) matter
def test_duplicates_within_one_group_are_not_this():
    found = explained(
        "UserWarning: optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
        "error; see github.com/pytorch/pytorch/issues/40967 for more information\n"
    )
    assert found.id != "log.param_in_two_groups", found.summary
