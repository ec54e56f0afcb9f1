"""torch's CheckpointError when a checkpointed block recomputes unlike its first forward (kinds/activation_checkpointing.py):
both wordings of torch/utils/checkpoint.py, always likely, the counts and an emptied parameter read from the log; led
by a library's layer or option that does not go with checkpointing (the threads' cause, train 4671 and 4969), by a
release's bug where a parameter was recomputed empty (session 43)."""

from __future__ import annotations

import io

from explaining import lead

from torchdoctor.explain.diagnose import explain


def test_a_different_number_of_saved_tensors_is_a_part_that_does_not_go_with_checkpointing():
    # train/4969.txt (jzhang38/TinyLlama#152: xformers' fused SwiGLU under Lightning's FSDP activation checkpointing)
    found = lead("4969.txt")
    assert found.id == "log.library_option_conflict"
    assert found.details["confidence"] == "likely"
    assert "log.activation_checkpoint_recompute" in found.details["alternatives"]
    assert "SwiGLU" in found.fix
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
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "released before the recomputation (shape [0])" in found.summary
    assert "log.library_option_conflict" not in found.details["alternatives"]


def test_recomputed_metadata_of_another_dtype_is_an_attention_backend_that_changed():
    # train/4671.txt (pytorch/pytorch, DTensor path: SDPA's cuDNN backend under checkpointing, its RNG seed and offset
    # recomputed as uint64): a library's option that does not go with checkpointing leads, cuDNN attention named
    found = lead("4671.txt")
    assert found.id == "log.library_option_conflict" and found.details["confidence"] == "likely"
    assert "cuDNN attention" in found.fix


def test_another_checkpoint_error_is_not_read_as_a_recomputed_forward():
    text = (
        "torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Unpack is being triggered for a tensor "
        "that was already unpacked once.\n"
    )
    found = explain(["-"], stdin=io.BytesIO(text.encode()))[0]
    assert found.id != "log.activation_checkpoint_recompute"
