"""The seventy-fifth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3567-3616)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# transformer_engine/pytorch/utils.py assert_dim_for_fp8_exec: "FP8 execution requires 2D input matrices with "
# "height divisible by 8 and width divisible by 16, " f"but got tensor with dims={list(tensor.size())}"
def test_transformer_engines_fp8_shape_check_is_an_input_size_that_does_not_divide():
    found = reads(
        '  File "/usr/local/lib/python3.10/dist-packages/transformer_engine/pytorch/utils.py", line 231, in '
        "assert_dim_for_fp8_exec\n"
        "    assert tensor.dim() == 2 and tensor.size(0) % 8 == 0 and tensor.size(1) % 16 == 0, (\n"
        "AssertionError: FP8 execution requires 2D input matrices with height divisible by 8 and width divisible "
        "by 16, but got tensor with dims=[4100, 1000]\n",
        "input_size_not_divisible",
        "certain",
    )
    assert "4100 % 8 != 0" in found.summary and "1000 % 16 != 0" in found.summary
    assert "pad" in found.fix and "fp8_autocast(enabled=False)" in found.fix


def test_transformer_engines_missing_fp8_hardware_is_not_a_shape():
    found = explained("AssertionError: Device compute capability 8.9 or higher required for FP8 execution.\n")
    assert found.id != "log.input_size_not_divisible", found.summary


# aten/src/ATen/native/cuda/Blas.cpp _scaled_mm_out_cuda: TORCH_CHECK(mat1.sizes()[1] % 16 == 0, "Expected trailing
# dimension of mat1 to be divisible by 16 ", "but got mat1 shape: (", mat1.sizes()[0], "x", mat1.sizes()[1], ").")
def test_scaled_mms_mat1_check_is_an_input_size_that_does_not_divide():
    found = reads(
        "RuntimeError: Expected trailing dimension of mat1 to be divisible by 16 but got mat1 shape: (2048x712).\n",
        "input_size_not_divisible",
        "certain",
    )
    assert "2048x712" in found.summary and "pad_inner_dim" in found.fix


# the same file's check of the second operand: "mat2 shape (", rows, "x", cols, ") must be divisible by 16"
def test_scaled_mms_mat2_check_reads_the_same():
    found = reads(
        "RuntimeError: mat2 shape (712x4096) must be divisible by 16\n", "input_size_not_divisible", "certain"
    )
    assert "712x4096" in found.summary


def test_a_plain_matmuls_shape_mismatch_is_not_an_fp8_shape():
    found = explained("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x712 and 4096x712)\n")
    assert found.id != "log.input_size_not_divisible", found.summary


def test_scaled_mms_dtype_check_is_not_a_shape():
    found = explained("RuntimeError: Expected mat1 to be Float8 matrix got Float\n")
    assert found.id != "log.input_size_not_divisible", found.summary


# transformer_engine/pytorch/csrc/extensions/gemm.cpp: NVTE_CHECK(*out_dtype == D_tensor.dtype(), "GEMM output has
# invalid dtype (expected ", static_cast<int>(*out_dtype), ", found ", static_cast<int>(D_tensor.dtype()), ")")
def test_transformer_engines_gemm_output_dtype_is_a_release_bug():
    found = reads(
        "RuntimeError: /workspace/TransformerEngine/transformer_engine/pytorch/csrc/extensions/gemm.cpp:121 in "
        "function gemm: Assertion failed: *out_dtype == D_tensor.dtype(). GEMM output has invalid dtype (expected "
        "4, found 3)\n",
        "library_version_bug",
        "likely",
    )
    assert "fuse_wgrad_accumulation" in found.fix and "1618" in found.fix


# Transformer Engine 1.x's Python wrapper (cpp_extensions/gemm.py): the same check
def test_transformer_engines_python_gemm_check_reads_the_same():
    reads(
        "ValueError: Gemm output has invalid dtype(expected torch.float32, found torch.bfloat16)\n",
        "library_version_bug",
        "likely",
    )


def test_a_gemm_output_of_other_dims_is_not_the_dtype_bug():
    found = explained(
        "RuntimeError: GEMM output has invalid dims (expected [4096, 1024], got [1024, 4096])\n"
    )
    assert found.id != "log.library_version_bug" or "fuse_wgrad_accumulation" not in found.fix, found.summary


# torch/csrc/autograd/python_variable.cpp THPVariable_set_grad: "attempting to assign a gradient with dtype '",
# grad.dtype(), "' to a tensor with dtype '", var.dtype(), "'. Please ensure that the gradient and the tensor have
# the same dtype"
def test_a_gradient_of_another_dtype_names_a_cast_after_compiling():
    found = reads(
        "RuntimeError: attempting to assign a gradient with dtype 'float' to a tensor with dtype 'c10::Half'. "
        "Please ensure that the gradient and the tensor have the same dtype\n",
        "library_version_bug",
        "likely",
    )
    assert ".half()" in found.fix and "torch.compile" in found.fix


# the same setter for a tensor whose grad_dtype FSDP2 set at its lazy init
def test_a_gradient_of_another_grad_dtype_names_fsdp2s_lazy_init():
    found = reads(
        "RuntimeError: attempting to assign a gradient with dtype 'c10::BFloat16' to a tensor with grad_dtype "
        "'Float'. The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
        "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype.\n",
        "library_version_bug",
        "likely",
    )
    assert "FSDP2" in found.summary and "torch.no_grad()" in found.fix


def test_a_gradient_on_another_device_is_not_the_dtype_reading():
    found = explained(
        "RuntimeError: attempting to assign a gradient with device type 'cpu' to a tensor with device type "
        "'cuda'. Please ensure that the gradient and the tensor are on the same device\n"
    )
    assert "torch.compile" not in found.fix, found.summary


# lightning/fabric/plugins/precision/deepspeed.py DeepSpeedPrecision.__init__: raise ValueError(f"`precision=
# {precision!r})` is not supported in DeepSpeed. `precision` must be one of: {supported_precision}.")
@pytest.mark.parametrize(
    "line",
    (
        "ValueError: `precision='bf16-true')` is not supported in DeepSpeed. `precision` must be one of: "
        "('32-true', '16-mixed', 'bf16-mixed').",
        "ValueError: precision='16-true') is not supported in DeepSpeed. precision must be one of: ('32-true', "
        "'16-mixed', 'bf16-mixed').",
    ),
)
def test_lightnings_deepspeed_refusing_a_precision_is_an_option_conflict(line):
    found = reads(line + "\n", "library_option_conflict", "certain")
    assert "bf16-mixed" in found.fix and "'32-true', '16-mixed', 'bf16-mixed'" in found.summary


def test_lightnings_ipu_precision_refusal_is_not_deepspeeds():
    found = explained(
        "ValueError: `Trainer(accelerator='ipu', precision='bf16-mixed')` is not supported. `precision` must be one "
        "of: ('32-true', '16-mixed').\n"
    )
    assert "DeepSpeed" not in found.summary, found.summary


# transformers/quantizers/quantizer_bnb_4bit.py is_serializable (modeling_utils.py save_pretrained up to 4.38)
@pytest.mark.parametrize(
    "line",
    (
        "You are calling `save_pretrained` to a 4-bit converted model, but your `bitsandbytes` version doesn't "
        "support it. If you want to save 4-bit models, make sure to have `bitsandbytes>=0.41.3` installed.",
        "You are calling `save_pretrained` to a 8-bit converted model, but your `bitsandbytes` version doesn't "
        "support it. If you want to save 8-bit models, make sure to have `bitsandbytes>0.37.2` installed. You will "
        "most likely face errors or unexpected behaviours.",
    ),
)
def test_saving_a_quantized_model_with_an_old_bitsandbytes_is_a_dependency_version(line):
    found = reads(line + "\n", "dependency_version", "certain")
    assert "bitsandbytes>=0.41.3" in found.fix and "adapter" in found.fix


def test_transformers_4bit_loading_notice_is_not_a_version():
    found = explained(
        "[INFO|modeling_utils.py:3103] 2023-12-02 13:00:58,606 >> Detected 4-bit loading: activating 4-bit loading "
        "for this model\n"
    )
    assert found.id != "log.dependency_version", found.summary


# peft/tuners/lora.py (0.2-0.4) "Target module {target} is not supported. Currently, only `torch.nn.Linear` and
# `Conv1D` are supported."; peft's later wording lists more layers; AutoAWQ's WQLinear_GEMM named, with or without
# the parenthesis of its repr
@pytest.mark.parametrize(
    "line",
    (
        "ValueError: Target module WQLinear_GEMM is not supported. Currently, only `torch.nn.Linear` and `Conv1D` "
        "are supported.",
        "ValueError: Target module WQLinear_GEMM(in_features=4096, out_features=4096, bias=False, w_bit=4, "
        "group_size=128) is not supported. Currently, only the following modules are supported: `torch.nn.Linear`, "
        "`torch.nn.Embedding`, `torch.nn.Conv2d`, `transformers.pytorch_utils.Conv1D`.",
    ),
)
def test_peft_refusing_autoawqs_layer_names_awq_training_support(line):
    found = explained(line + "\n")
    assert found.id == "log.library_arguments", found.summary
    assert "AutoAWQ" in found.fix and "1399" in found.fix


def test_peft_refusing_another_quantized_layer_is_not_awq():
    found = explained(
        "ValueError: Target module Linear4bit(in_features=4096, out_features=4096, bias=False) is not supported. "
        "Currently, only `torch.nn.Linear` and `Conv1D` are supported.\n"
    )
    assert found.id == "log.library_arguments" and "AutoAWQ" not in found.fix, found.summary
