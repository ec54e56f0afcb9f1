"""torch's CheckpointError when a checkpointed block recomputes unlike its first forward (kinds/activation_checkpointing.py):
both wordings of torch/utils/checkpoint.py, always likely, the counts and an emptied parameter read from the log."""

from __future__ import annotations

import io

from explaining import lead

from torchdoctor.explain.diagnose import explain


def test_a_different_number_of_saved_tensors_is_a_part_that_does_not_go_with_checkpointing():
    # train/4969.txt (jzhang38/TinyLlama#152: xformers' fused SwiGLU under Lightning's FSDP activation checkpointing)
    found = lead("4969.txt")
    assert found.id == "log.activation_checkpoint_recompute"
    assert found.details["confidence"] == "likely"
    assert "27 tensors saved in the forward, 8 in the recomputation" in found.summary
    assert "set_checkpoint_debug_enabled(True)" in found.fix
    assert "library_version_bug" in str(found.details["alternatives"])


def test_recomputed_metadata_with_an_emptied_parameter_names_parameters_released_early():
    # the other wording (check_recomputed_tensors_match), as DeepSpeed ZeRO-3 with frozen parameters printed it
    # before deepspeedai/DeepSpeed#8148: the recomputed tensors have shape [0]
    text = (
        "[rank1]: torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the "
        "following tensors have different metadata than during the forward pass.\n"
        "[rank1]: tensor at position 18:\n"
        "[rank1]: saved metadata: {'shape': torch.Size([128]), 'dtype': torch.bfloat16, 'device': device(type='cuda', "
        "index=1)}\n"
        "[rank1]: recomputed metadata: {'shape': torch.Size([0]), 'dtype': torch.bfloat16, 'device': "
        "device(type='cuda', index=1)}\n"
    )
    found = explain(["-"], stdin=io.BytesIO(text.encode()))[0]
    assert found.id == "log.activation_checkpoint_recompute" and found.details["confidence"] == "likely"
    assert "released before the recomputation (shape [0])" in found.summary


def test_another_checkpoint_error_is_not_read_as_a_recomputed_forward():
    text = (
        "torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Unpack is being triggered for a tensor "
        "that was already unpacked once.\n"
    )
    found = explain(["-"], stdin=io.BytesIO(text.encode()))[0]
    assert found.id != "log.activation_checkpoint_recompute"
