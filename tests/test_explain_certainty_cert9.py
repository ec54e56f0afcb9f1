"""Certainty, ninth round (task CERT9): readings that led with certainty on a message other causes print too.

Made likely, the other reading named:

- ATen's dispatch refusal of a reduced-precision dtype by a *CPU* kernel ("addmm_impl_cpu_" not implemented for
  'Half', "slow_conv2d_cpu", "cholesky_cpu"): the kernel's name says the half tensors were on the CPU, not why.
  The threads posting it are a model run on the CPU on purpose and, as often, a torch that sees no GPU (a CPU-only
  build installed by conda: SCIR-HI/Huatuo-Llama-Med-Chinese#43; a driver it cannot use: lyogavin/airllm#23), whose
  script's "cuda if available" fell back to the CPU. So it is likely, `cuda_unavailable` named with its check.

Kept certain, pinned below: the same refusal by a GPU kernel (a library's float32-only CUDA op, the one cause).
"""

from __future__ import annotations

import traceback

import pytest
import torch
from explaining import certain, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")


@pytest.mark.parametrize(
    "line",
    [
        # huggingface/transformers#27769, SCIR-HI/Huatuo-Llama-Med-Chinese#43 (a CPU-only torch from conda)
        "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'\n",
        # zai-org/VisualGLM-6B#30: the image encoder's convolution, next
        "RuntimeError: \"slow_conv2d_cpu\" not implemented for 'Half'\n",
    ],
    ids=["addmm", "conv2d"],
)
def test_a_cpu_kernel_refusing_half_is_only_likely_a_torch_without_gpu_named(line):
    found = likely_with(line, "half_unsupported_op", "log.cuda_unavailable")
    assert "on the CPU" in found.summary and "model.float()" in found.fix
    assert "torch.cuda.is_available()" in found.fix and "CPU-only build" in found.fix, found.fix


def test_torchs_own_cpu_kernel_refusal_is_read_the_same():
    x = torch.randn(4, 4).half()
    with pytest.raises((NotImplementedError, RuntimeError)) as raised:
        torch.linalg.cholesky(x @ x.T)  # "cholesky_cpu" not implemented for 'Half'
    log = "".join(traceback.format_exception(raised.value))
    likely_with(log, "half_unsupported_op", "log.cuda_unavailable")


def test_a_gpu_kernel_without_half_stays_certain_and_names_no_cpu_reading():
    # 300.txt's line (zzangjinsun/NLSPN_ECCV20#7): DCN's CUDA op built for float32 only, under apex O1
    found = certain(
        "RuntimeError: \"deform_conv_forward_cuda\" not implemented for 'Half'\n", "half_unsupported_op"
    )
    assert "on the GPU" in found.summary and "alternatives" not in found.details
    assert "is_available" not in found.fix
