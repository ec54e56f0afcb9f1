"""The sixty-fifth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3067-3116)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# torch_xla's metrics analysis (PT_XLA_DEBUG=1): the UnloweredOp analyzer over the aten:: counters
def test_pt_xla_profilers_unlowered_ops_read_as_ops_run_on_the_cpu():
    found = reads(
        "pt-xla-profiler: TransferFromServerTime too frequent: 11 counts during 11 steps\n"
        "pt-xla-profiler: Op(s) not lowered: aten::_ctc_loss, aten::_ctc_loss_backward,  Please open a GitHub "
        "issue with the above op lowering requests.\n",
        "xla_op_not_lowered",
        "likely",
    )
    assert "aten::_ctc_loss_backward" in found.summary and "lowered" in found.fix


def test_nonzero_among_them_names_the_dynamic_shapes():
    found = reads(
        "pt-xla-profiler: Op(s) not lowered: aten::nonzero, aten::reflection_pad1d,  Please open a GitHub issue "
        "with the above op lowering requests.\n",
        "xla_op_not_lowered",
        "likely",
    )
    assert "data-dependent shapes" in found.summary


def test_the_profilers_compile_time_line_alone_is_not_an_unlowered_op():
    found = explained("pt-xla-profiler: CompileTime too frequent: 21 counts during 11 steps\n")
    assert found.id != "log.xla_op_not_lowered"


# torch_xla/csrc/convert_ops.cpp ConvertTo: XLA_ERROR() << "Unsupported XLA type " << from (10: F16)
def test_xla_type_10_reads_as_float16_on_the_tpu():
    found = reads(
        "RuntimeError: torch_xla/csrc/convert_ops.cpp:88 : Unsupported XLA type 10\n",
        "half_unsupported_op",
        "likely",
    )
    assert "bfloat16" in found.fix and "TPU" in found.summary


def test_another_xla_type_is_not_float16():
    found = explained("RuntimeError: torch_xla/csrc/convert_ops.cpp:88 : Unsupported XLA type 11\n")
    assert found.id != "log.half_unsupported_op"


# flash-attention 1.x csrc/flash_attn/fmha_api.cpp
def test_flash_attention_backward_head_dim_reads_as_that_gpu_limit():
    found = reads(
        "RuntimeError: FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as the "
        "implementation needs a large amount of shared memory.\n",
        "flash_attn_headdim_needs_a100",
        "likely",
    )
    assert "flash-attn" in found.fix and "A100" in found.summary


def test_flash_attentions_ampere_refusal_is_not_the_head_dim_limit():
    found = explained("RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n")
    assert found.id != "log.flash_attn_headdim_needs_a100"


# torch/csrc/generic/StorageSharing.cpp _share_cuda_: cudaIpcGetMemHandle, which Windows' CUDA refuses
def test_cuda_ipc_refused_on_a_windows_build_reads_as_windows_unsupported():
    found = reads(
        "RuntimeError: cuda runtime error (801) : operation not supported at "
        "C:\\w\\1\\s\\windows\\pytorch\\torch/csrc/generic/StorageSharing.cpp:245\n",
        "windows_unsupported",
        "likely",
    )
    assert "num_workers=0" in found.fix


def test_the_same_refusal_on_a_linux_path_is_not_windows():
    found = explained(
        "RuntimeError: cuda runtime error (801) : operation not supported at "
        "/pytorch/torch/csrc/generic/StorageSharing.cpp:245\n"
    )
    assert found.id != "log.windows_unsupported"


# megatron/fused_kernels/scaled_upper_triang_masked_softmax.h: TORCH_INTERNAL_ASSERT(attn_batches % ...)
def test_megatrons_fused_softmax_assert_reads_as_an_older_megatron():
    found = reads(
        'RuntimeError: attn_batches % batches_per_block == 0INTERNAL ASSERT FAILED at "/workspace/Megatron-LM/'
        'megatron/fused_kernels/scaled_upper_triang_masked_softmax.h":363, please report a bug to PyTorch.\n',
        "library_version_bug",
        "likely",
    )
    assert "Megatron-LM" in found.fix and "--no-masked-softmax-fusion" in found.fix


def test_torchs_own_internal_assert_is_not_megatrons_softmax():
    found = explained(
        'RuntimeError: false INTERNAL ASSERT FAILED at "../aten/src/ATen/native/cuda/Loss.cu":100, please report '
        "a bug to PyTorch.\n"
    )
    assert "Megatron" not in found.summary


# aten/src/ATen/cuda/Exceptions.h AT_CUDNN_FRONTEND_CHECK in aten/src/ATen/native/cudnn/MHA.cpp
def test_sdpas_cudnn_backend_without_a_plan_reads_as_that_release():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 41, in forward\n'
        "    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support the graph.\n",
        "library_version_bug",
        "likely",
    )
    assert "enable_cudnn_sdp(False)" in found.fix and "cuDNN" in found.summary


def test_transformer_engines_cudnn_error_is_not_sdpas_backend():
    found = explained(
        "RuntimeError: /workspace/TransformerEngine/transformer_engine/common/fused_attn/"
        "fused_attn_f16_arbitrary_seqlen.cu:373 in function operator(): cuDNN Error: [cudnn_frontend] Error: No "
        "execution plans support the graph.\n"
    )
    assert "enable_cudnn_sdp" not in found.fix


# torch/csrc/generic/StorageSharing.cpp of 0.1.x: _share_cuda_ of a storage on a non-current device
def test_sharing_a_tensor_of_another_gpu_on_torch_0_1_reads_as_that_release():
    found = reads(
        "RuntimeError: cuda runtime error (11) : invalid argument at "
        "/py/conda-bld/pytorch_1493670682084/work/torch/csrc/generic/StorageSharing.cpp:248\n",
        "library_version_bug",
        "likely",
    )
    assert "non-current" in found.summary and "#1726" in found.fix


def test_an_invalid_argument_in_thc_is_not_the_ipc_bug():
    found = explained(
        "RuntimeError: cuda runtime error (11) : invalid argument at /pytorch/aten/src/THC/THCCachingAllocator.cpp"
        ":510\n"
    )
    assert "non-current" not in found.summary
