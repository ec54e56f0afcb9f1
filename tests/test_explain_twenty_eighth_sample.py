"""The knowledge the twenty-eighth sample by symptom (corpus files 1217-1257, train half) asked for, each anchored on
the message its source prints: Lightning's hooks removed in 1.8 and 2.0 (trainer/configuration_validator.py),
torchmetrics 0.11's required task (its task wrappers' __new__), transformers' tokenizer.max_len (read-only in 3.x,
gone in 4.0), peft's "all-linear" before 0.8, Pillow's PILLOW_VERSION, torch._six's container_abcs, and a NumPy
array of an unsigned type wider than a byte (torch/csrc/utils/tensor_numpy.cpp).
Beside each, a line that must stay silent, or be another kind, or only likely."""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, read, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_lightning_hooks_removed_in_1_8_and_2_0_are_code_for_an_older_lightning():
    # 1223.txt (flatironinstitute/deepblast#165): validation_epoch_end under Lightning 2.0
    found = read("1223.txt")
    assert "on_validation_epoch_end" in found.fix and "2.0" in found.summary
    # 1221.txt (JusperLee/CTCNet#8): on_epoch_end, quoted in the filer's prose
    found = read("1221.txt")
    assert "on_epoch_end" in found.summary and "1.8" in found.summary
    text = template("third_party:lightning-epoch-end-removed-in-2-0", "training_epoch_end", "LitModel", "x")
    leads_with(f"NotImplementedError: {text}", "dependency_version", "certain", ["on_train_epoch_end"])
    text = template(
        "third_party:lightning-callback-hook-removed-in-1-8", "on_batch_start", "on_train_batch_start"
    )
    leads_with(f"RuntimeError: {text}", "dependency_version", "certain", ["on_train_batch_start"])
    # a hook of some other library "removed" in another release is not Lightning's
    found = explained("RuntimeError: The `Engine.on_step` hook was removed in v3.2\n")
    assert "Lightning" not in found.summary


def test_torchmetrics_without_task_is_code_for_a_torchmetrics_before_0_11():
    # 1249.txt (rasbt/machine-learning-book#128): the wrapper's name on the line, certain
    found = read("1249.txt")
    assert "task='multiclass'" in found.fix and "num_classes" in found.fix
    # 1251.txt, 1253.txt (Lightning-AI/tutorials#211, YueYANG1996/LaBo#23): a bare __new__, only likely
    for name in ("1251.txt", "1253.txt"):
        read(name, "dependency_version", "likely")
    leads_with(
        "TypeError: AUROC.__new__() missing 1 required positional argument: 'task'",
        "dependency_version",
        "certain",
        ["torchmetrics 0.11"],
    )
    # transformers' pipeline() without its task is not a torchmetrics release
    found = explained("TypeError: pipeline() missing 1 required positional argument: 'task'\n")
    assert "torchmetrics" not in found.summary + found.fix


def test_tokenizer_max_len_read_or_assigned_is_transformers_4_or_3():
    # 1254.txt (huggingface/transformers#10220): read by transformers' own glue.py: likely, the library named
    found = read("1254.txt", "dependency_version", "likely")
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert "model_max_length" in found.fix
    # 1257.txt (CannyLab/summary_loop#1): assigned under transformers 3.x, which made it read-only
    found = read("1257.txt")
    assert "assigned" in found.summary
    # a model's own max_len attribute missing is not the tokenizer's
    found = explained("AttributeError: 'Seq2SeqModel' object has no attribute 'max_len'\n")
    assert "model_max_length" not in found.fix
    # assigning some other read-only property is not this either
    found = explained("    self.model.depth = 4\nAttributeError: can't set attribute\n")
    assert "max_len" not in found.summary


def test_peft_all_linear_is_a_peft_before_0_8():
    # 1227.txt (philschmid/deep-learning-pytorch-huggingface#43)
    found = read("1227.txt")
    assert "peft>=0.8" in found.fix and "target_modules" in found.fix
    # module names the model lacks are the configuration's mistake, not a release
    found = explained(
        "ValueError: Target modules ['q_proj', 'v_proj'] not found in the base model. Please check the target "
        "modules and try again.\n"
    )
    assert "0.8" not in found.summary + found.fix


def test_pillow_version_and_torch_six_names_are_libraries_older_than_their_dependencies():
    # 1229.txt (udacity/deep-learning-v2-pytorch#233): the closing quote lost in the filer's paste
    found = read("1229.txt")
    assert "0.5.0" in found.fix and "pillow<7" in found.fix
    # 1243.txt (ChangyaoTian/VL-LTR#7): container_abcs, its module not named
    found = read("1243.txt", "dependency_version", "likely")
    assert "0.4.12" in found.fix
    # another name PIL lacks is no Pillow release change
    found = explained(
        "ImportError: cannot import name 'ImageMagic' from 'PIL' (/usr/lib/python3/PIL/__init__.py)\n"
    )
    assert "PILLOW_VERSION" not in found.summary


def test_a_numpy_array_of_uint16_is_a_type_torch_cannot_hold():
    # 1239.txt (KaiyangZhou/deep-person-reid#506): the maintainer's prose quoting the error
    found = read("1239.txt", "numpy_dtype_unsupported")
    assert "astype(np.int32)" in found.fix and "2.3" in found.summary
    text = template(
        "aten:numpy-dtype-not-supported",
        "numpy.uint32",
        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool",
    )
    found = leads_with(f"TypeError: {text}", "numpy_dtype_unsupported", "certain", ["astype(np.int64)"])
    # an object array (ragged or non-numeric data) prints the same message for another cause
    found = explained(
        "TypeError: can't convert np.ndarray of type numpy.object_. The only supported types are: float64, "
        "float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.\n"
    )
    assert found.id != "log.numpy_dtype_unsupported"
