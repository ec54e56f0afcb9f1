"""An operator without a kernel for the reduced-precision dtype it was given (ATen's dispatch refusal), read
from a real torch error and from the sixth sample's train log; the same message for an integer dtype is not
this kind."""

from __future__ import annotations

import traceback

import pytest
import torch
from explaining import explained, lead, template


def test_the_sixth_samples_custom_cuda_op_without_a_half_kernel():
    # 300.txt (zzangjinsun/NLSPN_ECCV20#7): a deformable-convolution CUDA op with no fp16 kernel under apex O1
    found = lead("300.txt")
    assert found.id == "log.half_unsupported_op" and found.details["confidence"] == "certain"
    assert "deform_conv_forward_cuda has no Half kernel on the GPU" in found.summary
    assert "float32" in found.fix and "full precision" in found.fix and "CPU" not in found.fix


def test_a_real_cpu_kernel_refusing_half_says_the_model_runs_on_the_cpu():
    x = torch.randn(4, 4).half()
    with pytest.raises((NotImplementedError, RuntimeError)) as raised:
        torch.linalg.cholesky(x @ x.T)  # torch 2.13's CPU: "cholesky_cpu" not implemented for 'Half'
    log = "".join(traceback.format_exception(raised.value))
    found = explained(log)
    assert found.id == "log.half_unsupported_op", log
    assert (
        "on the CPU" in found.summary and "model.float()" in found.fix and "GPU it was meant for" in found.fix
    )


def test_a_kernel_name_that_names_no_device_gets_both_fixes_and_bfloat16_is_read_too():
    text = template("torch_native:op-not-implemented-for-dtype", "LayerNormKernelImpl", "BFloat16")
    found = explained(f"RuntimeError: {text}\n")
    assert found.id == "log.half_unsupported_op" and "no BFloat16 kernel:" in found.summary
    assert found.fix.startswith("On the CPU: ") and "\nOn the GPU: " in found.fix


@pytest.mark.parametrize("dtype", ["Long", "Bool", "Int"])
def test_an_integer_dtype_is_not_a_mixed_precision_problem(dtype):
    text = template("torch_native:op-not-implemented-for-dtype", "index_select_out_cuda_impl", dtype)
    assert explained(f"RuntimeError: {text}\n").id != "log.half_unsupported_op"
