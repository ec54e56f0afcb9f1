"""The ninety-first sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4367-4416)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# aten/src/ATen/native/layer_norm.h _check_layer_norm_inputs, a vision model tuned with FSDP and reentrant
# gradient checkpointing: the recomputation meets the LayerNorm's weight as FSDP's empty view, the linear layers
# theirs as a 1-D shard
EMPTY_NORM = (
    "RuntimeError: mat2 must be a matrix, got 1-D tensor\n"
    "RuntimeError: Expected weight to be of same shape as normalized_shape, but got weight of shape [0] and "
    "normalized_shape = [1152]\n"
)


def test_a_layernorms_empty_weight_is_likely_a_sharded_parameter_used_outside_fsdps_forward():
    found = reads(EMPTY_NORM, "fsdp_params_outside_forward", "likely")
    assert "weight of shape [0] and normalized_shape = [1152]" in found.summary
    assert "'use_reentrant': False" in found.fix and "summon_full_params" in found.fix
    assert "log.zero3_partitioned_weights" in found.details["alternatives"]


def test_the_empty_bias_under_fsdps_frames_reads_the_same_way():
    found = reads(
        '[rank1]:   File "/usr/lib/python3.11/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py", '
        "line 863, in forward\n"
        "[rank1]: RuntimeError: Expected bias to be of same shape as normalized_shape, but got bias of shape [0] "
        "and normalized_shape = [4096]\n",
        "fsdp_params_outside_forward",
        "likely",
    )
    assert "bias of shape [0]" in found.summary and "rank 1" in found.summary


# a LayerNorm built for another width than its input's is the model's configuration, not a sharded parameter
def test_a_layernorm_weight_of_another_width_is_not_a_sharded_parameter():
    found = explained(
        "RuntimeError: Expected weight to be of same shape as normalized_shape, but got weight of shape [768] and "
        "normalized_shape = [1024]\n"
    )
    assert found.id != "log.fsdp_params_outside_forward", found.summary


# FSDP's freed embedding weight keeps its own reading, without ZeRO-3's named beside it
def test_fsdps_freed_embedding_weight_does_not_name_zero3():
    found = reads(
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_runtime_utils.py", line 1, in x\n'
        "RuntimeError: 'weight' must be 2-D\n",
        "fsdp_params_outside_forward",
        "likely",
    )
    assert "log.zero3_partitioned_weights" not in found.details["alternatives"]


# aten/src/ATen/native/TensorShape.cpp: MACE's statistics over a training loader that gave no batch (a training set
# smaller than its batch of 10, the incomplete batch dropped)
EMPTY_CAT = (
    'File "mace/modules/utils.py", line 549, in compute_avg_num_neighbors\n'
    "  torch.cat(num_neighbors, dim=0).type(torch.get_default_dtype())\n"
    "ValueError: torch.cat(): expected a non-empty list of Tensors\n"
)


def test_joining_an_empty_list_is_likely_a_pass_over_the_data_that_gave_no_batch():
    found = reads(EMPTY_CAT, "dataset_too_small", "likely")
    assert "torch.cat" in found.summary
    assert "batch_size" in found.fix and "drop_last=False" in found.fix and "len(loader)" in found.fix
    assert found.details["alternatives"] == ["log.bad_training_data"]


def test_stacking_an_empty_list_reads_the_same_way():
    found = reads(
        "RuntimeError: stack expects a non-empty TensorList\n",
        "dataset_too_small",
        "likely",
    )
    assert "torch.stack" in found.summary


# a zero-dimensional tensor in the list is a shape, not an empty pass
def test_concatenating_a_scalar_is_not_a_pass_that_gave_no_batch():
    found = explained("RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated\n")
    assert found.id != "log.dataset_too_small", found.summary
