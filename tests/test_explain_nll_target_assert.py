"""The NLL loss's CUDA kernels (cross-entropy's on the GPU) assert one thing, each target inside 0..C-1, so their
assert names its cause outright and is read on an anchor of its own: certain once a real log showed it (train 838,
a segmentation loader's labels past the classes), while the kernel-agnostic "device-side assert triggered" and an
indexing kernel's bounds assert stay likely (train 5822 printed them for labels longer than Whisper's positions)."""

from __future__ import annotations

from explaining import certain, filled, lead, likely_with


def test_the_train_log_of_the_nll_targets_assert_is_certain_with_no_other_reading():
    found = lead("838.txt")
    assert (found.id, found.details["confidence"]) == ("log.device_assert", "certain"), found.summary
    assert "a target outside 0..C-1" in found.summary
    assert not found.details.get("alternatives"), found.details


def test_the_reducing_kernels_assert_as_loss_cu_prints_it_is_certain():
    # CUDA_KERNEL_ASSERT's __assert_fail: "<file>:<line>: <kernel>: block: [..], thread: [..] Assertion `<cond>`
    # failed.", then the host call that checks raises the runtime's error
    line = "/opt/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: "
    log = (
        line + "block: [0,0,0], thread: [7,0,0] " + filled("aten:nll-loss-cuda-target-assert") + "\n"
        "RuntimeError: CUDA error: device-side assert triggered\n"
    )
    found = certain(log, "device_assert")
    assert "ignore_index" in found.fix


def test_reduction_none_kernels_assert_is_the_same_check_read_on_the_same_anchor():
    # Loss.cu's nll_loss_forward_no_reduce_cuda_kernel (THCUNN's ClassNLLCriterion.cu before it) spells the target
    # cur_target: the same check, so the same anchor and the same certainty, no other cause named
    log = (
        "/opt/pytorch/aten/src/ATen/native/cuda/Loss.cu:171: nll_loss_forward_no_reduce_cuda_kernel: "
        "block: [0,0,0], thread: [3,0,0] " + filled("aten:nll-loss-cuda-no-reduce-target-assert") + "\n"
        "RuntimeError: CUDA error: device-side assert triggered\n"
    )
    found = certain(log, "device_assert")
    assert "NLL loss's kernel" in found.summary and "-100" in found.fix
    assert not found.details.get("alternatives"), found.details


def test_an_indexing_kernels_assert_stays_likely_naming_the_other_causes():
    # aten/src/ATen/native/cuda/IndexKernel.cu's gpu_index_kernel: the index of any tensor, not a label
    log = (
        "/opt/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [64,0,0] "
        'Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.\n'
        "RuntimeError: CUDA error: device-side assert triggered\n"
    )
    found = likely_with(log, "device_assert", "log.sequence_too_long")
    assert "NLL loss" not in found.summary
    assert lead("5822.txt").details["confidence"] == "likely"
