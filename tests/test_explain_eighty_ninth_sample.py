"""The eighty-ninth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4267-4316)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def _unpacked(code: str, names: int, error: str = "ValueError") -> str:
    """An evaluation script's line that unpacks what it called into ``names`` names, and CPython's refusal."""
    return (
        "Traceback (most recent call last):\n"
        '  File "evaluate.py", line 41, in <module>\n'
        f"    {code}\n"
        f"{error}: not enough values to unpack (expected {names}, got 0)\n"
    )


# accelerate 0.10.0-0.18.0's honor_type swallows recursively_apply's TypeError for an item that is not a tensor and
# returns the tuple empty: the names it is unpacked into get none
def test_an_empty_tuple_from_accelerates_gather_is_an_item_that_is_not_a_tensor():
    found = explained(_unpacked("logits, count = accelerator.gather((logits, len(batch)))", 2))
    assert found.id == "log.gather_not_tensors", found.summary
    assert found.summary.startswith("likely:") and "accelerate's gather returned nothing" in found.summary
    assert "0.19.0" in found.fix and "torch.tensor(value, device=accelerator.device)" in found.fix


# two ranks printing at once double the exception's name; reduce is refused the same way
def test_two_ranks_interleaved_and_reduce_read_the_same():
    found = explained(
        _unpacked("total, seen = self.accelerator.reduce([total, seen])", 2, error="ValueErrorValueError: ")
    )
    assert found.id == "log.gather_not_tensors", found.summary
    assert "accelerate's reduce" in found.summary


# the same refusal on a line that calls no accelerate operation is a batch or a function that returned nothing
def test_unpacking_nothing_without_accelerate_is_not_this_reading():
    found = explained(_unpacked("images, labels = batch", 2))
    assert found.id != "log.gather_not_tensors", found.summary
    assert "accelerate" not in found.fix


# accelerate 0.10.0-0.18.0's own wording of the refusal, where it is not swallowed (an item of a dict, or a bare one)
def test_old_accelerates_cant_apply_is_a_gather_handed_an_object():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        '    out = accelerator.gather({"pred": names})\n'
        '  File "/usr/lib/python3.9/site-packages/accelerate/utils/operations.py", line 71, in recursively_apply\n'
        "    raise TypeError(\n"
        "TypeError: Can't apply _gpu_gather_one on object of type <class 'list'>, only of nested list/tuple/dicts of "
        "objects that satisfy is_torch_tensor.\n"
    )
    assert found.id == "log.gather_not_tensors", found.summary
    assert "accelerate's gather was handed <class 'list'>" in found.summary and "gather_object" in found.fix


# pytorch-pretrained-BERT's run_squad.py divided every gradient by the loss scale, a parameter without one included
def _grad_loop(file: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{file}", line 904, in main\n'
        "    param.grad.data = param.grad.data / args.loss_scale\n"
        "AttributeError: 'NoneType' object has no attribute 'data'\n"
    )


def test_a_repository_examples_loop_over_gradients_is_its_bug():
    found = explained(_grad_loop("examples/run_squad.py"))
    assert found.id == "log.library_version_bug", found.summary
    assert (
        "param.grad is None" in found.summary and "master" in found.fix and "is None: continue" in found.fix
    )


# the same line in the user's own script: whether the parameter should have had a gradient is the script's to say
def test_the_same_loop_in_the_users_own_script_is_not_a_library_bug():
    found = explained(_grad_loop("train.py"))
    assert found.id != "log.library_version_bug", found.summary


# None met on another attribute than the gradient's, in a repository's example, is not a parameter without gradient
def test_none_elsewhere_in_an_example_is_not_this_reading():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "examples/run_squad.py", line 310, in main\n'
        "    features = cached.data\n"
        "AttributeError: 'NoneType' object has no attribute 'data'\n"
    )
    assert "param" not in found.summary and "gradient" not in found.summary
