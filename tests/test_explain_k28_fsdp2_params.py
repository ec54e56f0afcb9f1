"""FSDP2 refusing a non-contiguous parameter and a group's mixed gradient dtypes (kinds/fsdp2_params.py), as
torch/distributed/fsdp/_fully_shard/ prints them, and near-misses of other FSDP causes."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


# _init_sharded_param (pytorch/torchtitan#1180)
def test_a_transposed_parameter_says_to_make_it_contiguous():
    found = explained(
        '[rank0]:   File "/home/u/.venv/lib/python3.10/site-packages/torch/distributed/fsdp/_fully_shard/'
        '_fsdp_param.py", line 266, in _init_sharded_param\n'
        "[rank0]:     raise NotImplementedError(\n"
        "[rank0]: NotImplementedError: FSDP does not support non-contiguous parameters yet: "
        "param.shape=torch.Size([4096, 4096]) param.stride()=(1, 4096)\n"
    )
    assert found.id == "log.fsdp2_noncontiguous_param" and found.details["confidence"] == "certain", (
        found.summary
    )
    assert "(1, 4096)" in found.summary and "contiguous()" in found.fix


# foreach_reduce under gradient accumulation (pytorch/pytorch#160279): likely, both readings in the fix
def test_mixed_gradient_dtypes_are_likely_and_name_accumulation():
    found = explained(
        "[rank0]: AssertionError: FSDP reduce-scatter expects uniform gradient dtype but got "
        "{torch.bfloat16, torch.float32}\n"
    )
    assert found.id == "log.fsdp2_mixed_grad_dtype" and found.details["confidence"] == "likely", found.summary
    assert "{torch.bfloat16, torch.float32}" in found.summary
    assert "micro-batch" in found.fix and "reduce_dtype" in found.fix


# FSDP1's flat parameter refusing mixed dtypes is fsdp_config's, not FSDP2's reduce-scatter
def test_fsdp1_uniform_dtype_is_not_the_reduce_scatter():
    found = explained(
        "ValueError: Must flatten tensors with uniform dtype but got torch.float16 and torch.float32\n"
    )
    assert found.id != "log.fsdp2_mixed_grad_dtype", found.summary
