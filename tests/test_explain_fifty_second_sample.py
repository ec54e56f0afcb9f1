"""The fifty-second sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2417-2428)."""

from __future__ import annotations

from explaining import certain, explained, likely_with

# THC's THCudaCheck ("cuda runtime error (%d) : %s at %s:%d") after THCUNN's ClassNLLCriterion kernel, whose
# CUDA_KERNEL_ASSERT on each target is the only assert it has (torch 0.4 to 1.x, before the loss moved to ATen)
THCUNN_NLL = (
    '  File "/opt/conda/lib/python3.7/site-packages/torch/nn/functional.py", line 1838, in nll_loss\n'
    "    ret = torch._C._nn.nll_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index)\n"
    "RuntimeError: cuda runtime error (710) : device-side assert triggered at "
    "/opt/conda/conda-bld/pytorch_1579022060824/work/aten/src/THCUNN/generic/ClassNLLCriterion.cu:110\n"
)

# aten/src/ATen/native/cuda/Loss.cu: nll_loss_forward_reduce_cuda_kernel_2d's CUDA_KERNEL_ASSERT
ATEN_NLL = (
    "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
    "thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
    "RuntimeError: CUDA error: device-side assert triggered\n"
)


# Since session 38 a labelled real log (train 5822, a seq2seq's labels longer than its positions) printed the same
# device-side assert: with only THCudaCheck's line (the kernel's own assert not in the log) the reading is likely,
# that other cause named (seen_on.tsv); the NLL kernel's own assert names its cause and stays certain
# (test_explain_nll_target_assert.py).
def test_the_nll_loss_kernels_assert_is_a_target_outside_the_classes():
    found = likely_with(THCUNN_NLL, "device_assert", "log.sequence_too_long")
    assert "NLL loss's kernel" in found.summary
    assert "-100" in found.fix and "ignore_index" in found.fix
    found = certain(ATEN_NLL, "device_assert")
    assert "NLL loss's kernel" in found.summary
    assert "-100" in found.fix and "ignore_index" in found.fix


def test_a_device_assert_elsewhere_keeps_the_general_reading():
    found = likely_with(
        "RuntimeError: CUDA error: device-side assert triggered\n", "device_assert", "log.sequence_too_long"
    )
    assert "NLL loss" not in found.summary and "CUDA_LAUNCH_BLOCKING=1" in found.fix
    # THCudaCheck after another THCUNN kernel names that kernel's file, not the loss's
    found = likely_with(
        "RuntimeError: cuda runtime error (710) : device-side assert triggered at "
        "/pytorch/aten/src/THC/generic/THCTensorScatterGather.cu:71\n",
        "device_assert",
        "log.sequence_too_long",
    )
    assert "NLL loss" not in found.summary


def test_index_selects_assert_is_not_read_as_the_loss():
    found = explained(
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:975: indexSelectSmallIndex: block: [0,0,0], thread: [0,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed.\n"
    )
    assert "NLL loss" not in found.summary
