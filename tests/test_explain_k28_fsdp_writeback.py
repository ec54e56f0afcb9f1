"""FSDP refusing to write back a parameter replaced after wrapping (kinds/fsdp_writeback.py), as
torch/distributed/fsdp/_flat_param.py prints it, and a near-miss of another FSDP cause that must not read as it."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


# _writeback_tensor under accelerate's fp32 upcast on one GPU (hiyouga/LlamaFactory#8142, pytorch/pytorch#151223)
def test_a_parameter_replaced_after_wrapping_is_likely_and_names_one_gpu():
    found = explained(
        '[rank0]:   File "/usr/local/lib/python3.11/dist-packages/torch/distributed/fsdp/_flat_param.py", line 2368, '
        "in _writeback_tensor\n"
        "[rank0]:     raise RuntimeError(\n"
        "[rank0]: RuntimeError: Cannot writeback when the parameter shape changes\n"
        "[rank0]: Expects torch.Size([525336576]) but got torch.Size([128256, 4096])\n"
    )
    assert found.id == "log.fsdp_param_replaced" and found.details["confidence"] == "likely", found.summary
    assert "torch.Size([525336576])" in found.summary and "torch.Size([128256, 4096])" in found.summary
    assert "2 or more processes" in found.fix and "before wrapping" in found.fix


# FSDP2's storage resized outside forward is another cause (fsdp_params_outside_forward)
def test_fsdp2_storage_outside_forward_is_not_a_writeback():
    found = explained(
        "RuntimeError: setStorage: sizes [4096, 4096], strides [4096, 1], storage offset 0, and itemsize 2 "
        "requiring a storage size of 33554432 are out of bounds for storage of size 0\n"
    )
    assert found.id != "log.fsdp_param_replaced", found.summary
