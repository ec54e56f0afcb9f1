"""The knowledge the sixth sample by symptom (corpus files 298-328, train half) asked for, each anchored on the
message its source prints: an operator without a kernel for the reduced-precision dtype it was given (ATen's
dispatch refusal; an integer dtype is not this kind), pip's own words for a source build that failed (its
legacy "Command errored out" of setup.py: a prebuilt wheel named in the fix), Open MPI's mpirun summary of the
process that failed first (read as every launcher's summary is: the rank and how it ended), and autograd's in-place check failing on a BatchNorm
statistic that DDP broadcasts again at a second forward (only likely, and only with DDP or a batch norm in the
log: the same message comes from the model's own in-place operations)."""

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


INPLACE = (
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.cuda.FloatTensor [64]] is at version 3; expected version 2 instead. Hint: enable anomaly "
    "detection to find the operation that failed to compute its gradient, with torch.autograd."
    "set_detect_anomaly(True).\n"
)
DDP_FRAME = (
    'Traceback (most recent call last):\n  File "train.py", line 80, in <module>\n    out = model(x)\n'
    '  File "/usr/lib/python3/site-packages/torch/nn/parallel/distributed.py", line 1633, in forward\n'
    "    inputs, kwargs = self._pre_forward(*inputs, **kwargs)\n"
)


def test_the_sixth_samples_batch_norm_statistics_changed_in_place_under_ddp():
    # 311.txt (yaodongyu/TRADES#26): extra forwards before one backward under DDP; SyncBatchNorm fixed it
    found = lead("311.txt")
    assert found.id == "log.ddp_buffer_inplace" and found.details["confidence"] == "likely"
    assert "512 values" in found.summary and "CudnnBatchNormBackward" in found.summary
    assert "SyncBatchNorm" in found.fix and "broadcast_buffers=False" in found.fix
    assert "set_detect_anomaly" in found.fix  # the other reading: the model's own in-place operation


def test_an_inplace_error_is_read_as_ddps_buffers_only_with_ddp_in_the_log_and_a_1d_tensor():
    found = explained(DDP_FRAME + INPLACE)
    assert found.id == "log.ddp_buffer_inplace" and found.details["confidence"] == "likely"
    assert "64 values" in found.summary
    # without DDP or a batch norm in the log: the model's own code, which explain does not guess at
    assert explained(INPLACE).id != "log.ddp_buffer_inplace"
    # a 2-D tensor is an activation, not a BatchNorm statistic
    two_d = INPLACE.replace("[torch.cuda.FloatTensor [64]]", "[torch.cuda.FloatTensor [8, 64]]")
    assert explained(DDP_FRAME + two_d).id != "log.ddp_buffer_inplace"


def test_pips_legacy_setup_py_failure_is_a_source_build_and_a_prebuilt_wheel_is_the_fix():
    # 304.txt (rusty1s/pytorch_scatter#200): torch-scatter built from source on Windows; the wheels worked
    found = lead("304.txt")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "likely"
    assert found.summary.startswith("likely: a CUDA/C++ extension failed to build: torch-scatter")
    assert "prebuilt wheel" in found.fix
    command = (
        "/usr/bin/python3 -u -c 'import sys; sys.argv[0] = \"/tmp/pip-install-ab12cd/mmcv-full/setup.py\"'"
    )
    text = template("system:pip-command-errored-out", "1", command + " install --record /tmp/r.txt")
    found = explained(f"ERROR: {text}\n")
    assert found.id == "log.cuda_build" and "mmcv-full" in found.summary and "prebuilt wheel" in found.fix
    # reading the package's metadata (egg_info) is not its compile: pip's isolated build, a missing dependency
    text = template("system:pip-command-errored-out", "1", command + " egg_info --egg-base /tmp/e")
    assert explained(f"ERROR: {text}\n").id != "log.cuda_build"


def test_mpiruns_summary_names_the_rank_that_failed_first_and_how_it_ended():
    # 325.txt (open-mmlab/mmdetection#8940): mpirun's own summary, each line behind a container's prefix
    found = lead("325.txt")
    assert found.id == "log.child_failed" and found.details["confidence"] == "likely"
    assert "mpirun: a worker failed: rank 2 exited with 1" in found.summary
    assert "raised a Python exception" in found.fix
    text = template("system:openmpi-nonzero-exit", "[[4105,1],3]", "2")
    found = explained(text + "\n")
    assert found.id == "log.child_failed" and "rank 3 exited with 2" in found.summary
    assert "argparse" in found.fix  # exit status 2: the command line refused
