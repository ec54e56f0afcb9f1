"""Warnings that a distributed run is slower than it need be (kinds/warnings_alone.py), each as its source
prints it: read when the log shows nothing else, and never beside a failure the log does show."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

STRIDES = (
    "/opt/conda/lib/python3.10/site-packages/torch/autograd/graph.py:824: UserWarning: Grad strides do not match "
    "bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that "
    "the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.\n"
    "grad.sizes() = [256, 256, 1, 1], strides() = [256, 1, 256, 256]\n"
    "bucket_view.sizes() = [256, 256, 1, 1], strides() = [256, 1, 1, 1] (Triggered internally at "
    "/pytorch/torch/csrc/distributed/c10d/reducer.cpp:328.)\n"
    "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
)

FLUSHES = (
    "[2024-04-08 13:02:16,577] [WARNING] [stage3.py:2069:step] 27 pytorch allocator cache flushes since last step. "
    "this happens when there is high memory pressure and is detrimental to performance. if this is happening "
    "frequently consider adjusting settings to reduce memory consumption. If you are unable to make the cache "
    "flushes go away consider adding get_accelerator().empty_cache() calls in your training loop to ensure that all "
    "ranks flush their caches at the same time\n"
)


# reducer.cpp's warning, posted alone (open-mmlab/mmsegmentation#3270, naver/croco#21)
def test_grad_strides_alone_is_a_likely_performance_warning():
    found = explained(STRIDES)
    assert found.id == "log.ddp_grad_layout" and found.details["confidence"] == "likely", found.summary
    assert "[256, 256, 1, 1]" in found.summary and "not an error" in found.summary
    assert "channels_last" in found.fix and ".contiguous()" in found.fix


# beside a failure the log shows, the warning is not the finding
def test_grad_strides_beside_an_out_of_memory_is_not_the_finding():
    found = explained(
        STRIDES + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 23.69 GiB of which 1.12 GiB is free.\n"
    )
    assert found.id == "log.cuda_oom", found.summary


# ZeRO-3's step, posted alone (jzhang38/EasyContext#11, LLaVA-VL/LLaVA-NeXT#247)
def test_cache_flushes_alone_is_likely_memory_pressure():
    found = explained(FLUSHES + FLUSHES.replace("27 pytorch", "3 pytorch"))
    assert found.id == "log.zero3_memory_pressure" and found.details["confidence"] == "likely", found.summary
    assert "up to 27" in found.summary
    assert "stage3_max_live_parameters" in found.fix and "empty_cache()" in found.fix


def test_cache_flushes_before_an_out_of_memory_is_not_the_finding():
    found = explained(
        FLUSHES + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 3 has a total "
        "capacity of 79.11 GiB of which 1.05 GiB is free.\n"
    )
    assert found.id == "log.cuda_oom", found.summary
