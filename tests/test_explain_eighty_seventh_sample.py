"""The eighty-seventh sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4167-4216)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# torch/nn/modules/_functions.py SyncBatchNorm.forward -> batch_norm_gather_stats_with_counts, whose CUDA kernel
# (aten/src/ATen/native/cuda/Normalization.cuh) reads the counts in the running statistics' dtype: a model converted
# to half before torch 2.1 (its counts float32)
SYNCBN_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/batchnorm.py", line 732, in forward\n'
    "    return sync_batch_norm.apply(\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/_functions.py", line 91, in forward\n'
    "    mean, invstd = torch.batch_norm_gather_stats_with_counts(\n"
)


def test_syncbn_counts_refused_beside_half_statistics_is_a_model_converted_to_half():
    found = reads(
        SYNCBN_FRAMES + "RuntimeError: Expected counts to have type Half but got Float\n",
        "syncbn_half_precision",
        "certain",
    )
    assert "float32" in found.summary and "Half (float16)" in found.summary
    assert "torch 2.1" in found.fix and "m.float()" in found.fix and "autocast" in found.fix


def test_syncbn_counts_refused_beside_bfloat16_statistics_names_bfloat16():
    found = reads(
        "[rank1]: RuntimeError: Expected counts to have type BFloat16 but got Float\n",
        "syncbn_half_precision",
        "certain",
    )
    assert "BFloat16 (bfloat16)" in found.summary and "model.to(bfloat16)" in found.fix


# a plain BatchNorm given half input against float statistics (apex's network_to_half) is F.batch_norm's own
# dtype check, not SyncBatchNorm's gather
def test_batch_norms_scalar_type_refusal_is_not_syncbns_counts():
    found = explained(
        '  File "/usr/local/lib/python3.5/dist-packages/torch/nn/functional.py", line 1623, in batch_norm\n'
        "    training, momentum, eps, torch.backends.cudnn.enabled\n"
        "RuntimeError: expected scalar type Half but found Float\n"
    )
    assert found.id != "log.syncbn_half_precision", found.summary


# bitsandbytes' CUDA_CHECK_RETURN in csrc/pythonInterface.c: cudaMallocManaged (cget_managed_ptr) refused where
# the device offers no managed memory; line 380 in 0.40.0-0.42.0 (InternLM/xtuner#247, 0.41.2)
def test_paged_state_allocation_not_supported_is_the_platforms_managed_memory():
    found = reads(
        "Error operation not supported at line 380 in file "
        "/mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/pythonInterface.c\n",
        "library_version_bug",
        "likely",
    )
    assert "cudaMallocManaged in bitsandbytes 0.40.0-0.42.0" in found.summary
    assert "adamw_torch" in found.fix and "enable_uvm=1" in found.fix


def test_the_cpp_interfaces_allocation_line_names_its_release():
    found = reads(
        "Error operation not supported at line 387 in file /src/csrc/pythonInterface.cpp\n",
        "library_version_bug",
        "likely",
    )
    assert "bitsandbytes 0.45.x" in found.summary


# 0.39.1 and 0.40.0 prefetched without asking the device (0.41.0 checks cudaDevAttrConcurrentManagedAccess)
def test_the_unguarded_prefetch_of_0_40_is_fixed_by_0_41():
    found = reads(
        "Error operation not supported at line 388 in file /src/csrc/pythonInterface.c\n",
        "library_version_bug",
        "likely",
    )
    assert "bitsandbytes 0.40.0 prefetched" in found.summary and "0.41.0" in found.fix


# the same check out of memory at the allocation is the host's memory, not paging the platform lacks
def test_the_paged_allocation_out_of_memory_is_not_unsupported_paging():
    found = explained("Error out of memory at line 380 in file /src/csrc/pythonInterface.c\n")
    assert "managed (unified) memory" not in found.summary, found.summary
