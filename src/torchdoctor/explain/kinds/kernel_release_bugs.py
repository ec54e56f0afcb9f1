"""GPU kernels whose release had a bug for some shapes or devices, read by versions.py as a release's bug.

Megatron's fused softmax kernels (``megatron/fused_kernels/scaled_upper_triang_masked_softmax.h`` and
``scaled_masked_softmax.h``) assert ``attn_batches % batches_per_block == 0`` (and a sequence length up to 2048,
4096 later) with ``TORCH_INTERNAL_ASSERT``, which prints "...== 0INTERNAL ASSERT FAILED at ".../megatron/
fused_kernels/scaled_upper_triang_masked_softmax.h":363". Megatron-LM's fix (40becfc, 2021, in the Megatron forks
that synced it: bigscience-workshop/Megatron-DeepSpeed#151) checks the shape in ``fused_softmax.py``
(``is_kernel_available``) and falls back to torch's softmax: an older Megatron.

PyTorch's cuDNN attention backend of ``scaled_dot_product_attention`` (``aten/src/ATen/native/cudnn/MHA.cpp``
through ``AT_CUDNN_FRONTEND_CHECK``, "cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support
the graph.") was chosen for shapes cuDNN has no plan for in some releases and nightlies (head_dim > 128 on Ampere,
pytorch/pytorch#129579 fixed by #129587; torch 2.5 made the backend opt-in, #138522).

PyTorch 0.1.x shared a CUDA tensor with another process from the current device's context, so a tensor on
another GPU failed in ``torch/csrc/generic/StorageSharing.cpp`` with "cuda runtime error (11) : invalid argument"
(pytorch/pytorch#1707, fixed by #1726 in 0.2). All three are likely: the line names the kernel, not the release.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = (
    "_masked_softmax.h",
    "cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support the graph",
    "StorageSharing.cpp:",
)
REFUSED = re.compile(
    r"(?P<megatron_softmax>scaled(?:_upper_triang)?_masked_softmax)\.h\"?:\d+|"
    r"(?P<cudnn_sdpa_no_plan>cuDNN Frontend error: \[cudnn_frontend\] Error: No execution plans support the graph)|"
    r"cuda runtime error \(11\) : (?P<ipc_invalid_argument>invalid argument) at \S{0,300}?StorageSharing\.cpp:\d+"
)
TEMPLATES = (
    "third_party:megatron-fused-softmax-batches-per-block-assert",
    "torch_native:cudnn-frontend-no-execution-plans",
    "torch_native:storage-sharing-invalid-argument",
)


def megatron_softmax(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for Megatron's fused softmax kernel asserting a shape it does not handle."""
    kernel = first(hits, "megatron_softmax", "scaled_upper_triang_masked_softmax")
    return (
        f"Megatron's fused softmax kernel ({kernel}) asserted a shape it cannot run (the attention batches not a "
        "multiple of its batches per block, or a sequence too long): Megatron releases before the fix that checks "
        "the shape first and falls back to torch's softmax" + on_ranks(hits),
        "Update the Megatron code the project vendors to a Megatron-LM with the check (fused_softmax.py's "
        "is_kernel_available, Megatron-LM 40becfc; Megatron-DeepSpeed cherry-picked it in #151), or turn the "
        "fused kernel off (--no-masked-softmax-fusion), or use a batch size and head count whose product "
        "(attention batches) divides by the kernel's batches per block.",
    )


def cudnn_sdpa(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for scaled_dot_product_attention's cuDNN backend finding no plan."""
    return (
        "scaled_dot_product_attention picked PyTorch's cuDNN attention backend for shapes cuDNN has no "
        "execution plan for (such as a head dimension above 128 on Ampere): a PyTorch release or nightly that "
        "routes them there" + on_ranks(hits),
        "Turn the cuDNN backend off and let SDPA use flash, memory-efficient or math attention: "
        "torch.backends.cuda.enable_cudnn_sdp(False) before training (or with torch.nn.attention.sdpa_kernel("
        "[SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])); or install a PyTorch "
        "release with the fix (2.5 and later choose cuDNN attention only when asked; pytorch/pytorch#129587).",
    )


def ipc_noncurrent(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for PyTorch 0.1's CUDA IPC of a tensor on a non-current device."""
    return (
        "sharing a CUDA tensor with another process failed in torch's StorageSharing.cpp (invalid argument): "
        "PyTorch 0.1.x took the IPC handle from the current device, so a tensor on another GPU (a non-current "
        "device) could not be shared" + on_ranks(hits),
        "Upgrade PyTorch (0.2 and later set the tensor's own device when sharing it, pytorch/pytorch#1726, the "
        "fix for non-current devices); on that old release, torch.cuda.set_device(<the tensor's GPU>) before "
        "putting it in the queue, or share tensors of the current device only.",
    )
