"""The knowledge the twenty-second sample by symptom (corpus files 917-948, train half) asked for, each anchored on
the message its source prints: the NumPy bridge's refusal of a tensor that requires grad (tensor_numpy.cpp), the
optimizer's refusal of a non-leaf tensor (torch/optim/optimizer.py), a tensor of several elements turned into a
number (python_variable_methods.cpp, ATen's Scalar.cpp), and two messages made likely because their source prints
them for a second cause: a floating loss target (ATen's Utils.h check) and random_split's sum of lengths
(torch/utils/data/dataset.py before and after 1.13). Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_a_tensor_that_requires_grad_handed_to_numpy():
    # 922.txt (zhuangdizhu/FedGen#1): np.sum over losses that still require grad
    found = lead("922.txt")
    assert found.id == "log.numpy_requires_grad" and found.details["confidence"] == "certain"
    assert "detach()" in found.fix
    # a CUDA tensor is the other refusal of the same function
    found = explained(f"TypeError: {template('torch_native:cuda-tensor-to-numpy', 'cuda:0')}\n")
    assert found.id == "log.cuda_tensor_to_numpy"


def test_an_optimizer_given_a_non_leaf_tensor():
    # 942.txt (mazzzystar/randomCNN-voice-transfer#16): requires_grad=True set before .cuda()
    # the line quoted in prose, no traceback: only likely, a library building the optimizer named
    found = lead("942.txt")
    assert found.id == "log.optimizer_non_leaf" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert "requires_grad" in found.fix
    line = template("torch_native:optimizer-non-leaf")
    assert explained(f'    raise ValueError("{line}")\nValueError: {line}\n').id == "log.optimizer_non_leaf"
    # a non-leaf handed to distribute_tensor is DTensor's refusal, not the optimizer's
    found = explained(
        "AssertionError: `distribute_tensor` should be used to distribute leaf tensors! but found non-leaf tensor!\n"
    )
    assert found.id != "log.optimizer_non_leaf"


def test_a_tensor_of_several_elements_used_as_a_number():
    # 929.txt (mrdbourke/pytorch-deep-learning#626): an accuracy never summed, ATen's wording with the count
    found = lead("929.txt")
    assert found.id == "log.item_non_scalar" and found.details["confidence"] == "likely"
    assert "800 elements" in found.summary and ".sum()" in found.fix
    # 927.txt (zhaozhengChen/ReCAM#4): the older wording, where DataParallel's per-GPU losses were the cause
    found = lead("927.txt")
    assert found.id == "log.item_non_scalar" and found.details["alternatives"] == ["log.dp_nonscalar_loss"]
    assert "DataParallel" in found.fix
    # a 0-dim tensor indexed is another message
    found = explained(
        "IndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim tensor to a Python "
        "number\n"
    )
    assert found.id != "log.item_non_scalar"


def test_a_floating_loss_target_is_likely_and_names_soft_labels():
    # 943.txt (WhirlFirst/STEM#3): class probabilities as the target on a torch before 1.10
    found = lead("943.txt")
    assert found.id == "log.loss_target_dtype" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.dependency_version"] and "1.10" in found.fix
    # an int32 target has one cause: certain, no other reading
    line = template("torch_native:expected-scalar-type-for-argument", "Long", "Int", "2", "target")
    found = explained(f"RuntimeError: {line}\n")
    assert found.id == "log.loss_target_dtype" and found.details["confidence"] == "certain"


def test_random_split_lengths_are_likely_and_name_the_torch_version():
    # 939.txt (HUST-NingKang-Lab/MGM#2): int() lengths that do not add up to the dataset's
    found = lead("939.txt")
    assert found.id == "log.dataloader_options" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.dependency_version"] and "1.13" in found.fix
    # the other checks of the same recogniser name their own cause: still certain
    found = explained("ValueError: Fraction at index 1 is not between 0 and 1\n")
    assert found.id == "log.dataloader_options" and found.details["confidence"] == "certain"
    assert "log.dependency_version" not in found.details.get("alternatives", [])
