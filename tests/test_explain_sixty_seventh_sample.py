"""The sixty-seventh sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3167-3216)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# torch/csrc/autograd/python_function.cpp PyNode::apply: "function ", name(), " returned an incorrect number of
# gradients (expected ", num_forward_inputs, ", got ", num_outputs, ")"
def test_a_custom_function_returning_too_few_gradients_names_the_function_and_the_none():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    loss.backward()\n"
        "RuntimeError: function QuantizeBackward returned an incorrect number of gradients (expected 3, got 1)\n",
        "custom_function_backward",
        "likely",
    )
    assert "Quantize" in found.summary and "None" in found.fix


def test_torch_compiles_own_function_is_not_a_custom_function():
    found = explained(
        "RuntimeError: function CompiledFunctionBackward returned an incorrect number of gradients (expected 3, "
        "got 2)\n"
    )
    assert found.id != "log.custom_function_backward"


# torch/csrc/autograd/VariableTypeManual.cpp detach_: AT_ERROR("Can't detach views in-place. Use detach() instead.
# If you are using DistributedDataParallel (DDP) for training, ...")
def test_detach_in_place_on_a_view_names_detach_and_ddps_buckets():
    found = reads(
        "RuntimeError: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
        "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
        "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
        "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.\n",
        "inplace_detach_view",
        "certain",
    )
    assert "x.detach()" in found.fix and "set_to_none=True" in found.fix


def test_the_deprecation_warning_on_detaching_a_multi_output_view_is_not_the_refusal():
    found = explained(
        "UserWarning: This view is an output of a function that returns multiple views. Detaching such views "
        "inplace is being deprecated and will be forbidden starting from version 1.8.\n"
    )
    assert found.id != "log.inplace_detach_view"


# torch/csrc/autograd/python_hook.cpp check_single_result: "hook '" << hook_name << "' has changed the size of value"
def test_a_hook_returning_a_gradient_of_another_shape_names_the_hook():
    found = reads(
        "RuntimeError: hook 'clip_grad_hook' has changed the size of value\n", "hook_gradient_size", "likely"
    )
    assert "clip_grad_hook" in found.summary and "register_full_backward_hook" in found.fix


def test_a_hook_changing_the_device_is_not_the_size_reading():
    found = explained(
        "RuntimeError: hook 'clip_grad_hook' has changed the type of value (was CUDA tensor got CPU tensor)\n"
    )
    assert found.id != "log.hook_gradient_size"


# jordan-g/PyTorch-Feedback-Alignment-Layers fa_layers.py: LinearFA's linear_fa_backward_hook, the same check
def test_the_feedback_alignment_linear_hook_reads_as_that_repositorys_bug():
    found = reads(
        "RuntimeError: hook 'linear_fa_backward_hook' has changed the size of value\n",
        "library_version_bug",
        "likely",
    )
    assert "bias=False" in found.summary and "latest commit" in found.fix


def test_the_feedback_alignment_conv_hook_is_left_to_the_hook_reading():
    found = explained("RuntimeError: hook 'conv2d_fa_backward_hook' has changed the size of value\n")
    assert found.id == "log.hook_gradient_size"


# amirgholami/adahessian instruction/adahessian.py Adahessian.step before 5e2683f: grad = deepcopy(gradsH[i].data)
def test_adahessians_undefined_name_reads_as_its_fixed_file():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "/home/user/adahessian/instruction/adahessian.py", line 210, in step\n'
        "    grad = deepcopy(gradsH[i].data)\n"
        "NameError: name 'gradsH' is not defined\n",
        "library_version_bug",
        "likely",
    )
    assert "AdaHessian" in found.summary and "optim_adahessian" in found.fix


def test_another_undefined_name_is_not_adahessians():
    found = explained("NameError: name 'grads' is not defined\n")
    assert found.id != "log.library_version_bug"


# diffusers 0.4.0's ModelMixin.enable_gradient_checkpointing (huggingface/diffusers#461); CPython's AttributeError
# on a 0.3.x model: "'{}' object has no attribute '{}'"
def test_a_diffusers_model_without_gradient_checkpointing_names_diffusers_0_4():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "train_dreambooth.py", line 511, in main\n'
        "    unet.enable_gradient_checkpointing()\n"
        "AttributeError: 'UNet2DConditionModel' object has no attribute 'enable_gradient_checkpointing'\n",
        "dependency_version",
        "likely",
    )
    assert "0.4.0" in found.summary and "diffusers>=0.4.0" in found.fix


def test_a_transformers_model_without_that_method_is_not_diffusers():
    found = explained(
        "AttributeError: 'CLIPTextModel' object has no attribute 'enable_gradient_checkpointing'\n"
    )
    assert "diffusers" not in found.summary
