"""What the hundred-and-fifty-third and -fourth samples' train files showed explain lacked, each read as a class
from the code that prints the message (session 44, T67): PEFT's missing adapter keys, LLaMA-Factory's and Unsloth's
refusals of several GPUs, torchvision's CUDA check wrapped onto two lines, FSDP flattening bitsandbytes' packed
4-bit weights. Each with the source's own line and the train file's lines."""

from __future__ import annotations

from explaining import explained, lead

# torchvision/extension.py _check_cuda_version: one line as torchvision raises it
TORCHVISION = (
    "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
    "PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1. Please reinstall the torchvision that "
    "matches your PyTorch install.\n"
)


def test_torchvisions_cuda_check_as_it_prints_it_names_both_versions():
    found = explained(TORCHVISION)
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "torchvision was built for CUDA 12.1 and torch for CUDA 11.8" in found.summary
    assert "torchvision" in found.fix


def test_torchvisions_cuda_check_wrapped_onto_two_lines_reads_the_versions_from_the_next():
    # train/7378.txt (Roblox/FAI-RL#47: PyPI's cu128 torch beside the image's cu130 torchvision), the message's
    # second sentence posted on a line of its own
    found = lead("7378.txt")
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "torchvision was built for CUDA 13.0 and torch for CUDA 12.8" in found.summary


def test_torchvisions_cuda_check_cut_before_its_versions_still_names_the_mismatch():
    found = explained(
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions.\n"
    )
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "torchvision was built for another CUDA major version than torch" in found.summary


def test_fsdp_flattening_uint8_beside_a_float_names_bitsandbytes_quant_storage():
    # train/7321.txt (axolotl#1494, FSDP + QLoRA): torch/distributed/fsdp/_flat_param.py's check, as it printed it
    found = lead("7321.txt")
    assert found.id == "log.fsdp_wrap_config" and found.details["confidence"] == "likely"
    assert "(torch.float32 and torch.uint8)" in found.summary and "4-bit" in found.summary
    assert "bnb_4bit_quant_storage=torch.bfloat16" in found.fix and "bitsandbytes 0.43" in found.fix
    # the other reading, the library release's bug its thread named, stays named
    assert "log.library_version_bug" in found.details["alternatives"]


def test_fsdp_flattening_uint8_first_is_read_the_same_way():
    # _flat_param.py names the unit's first dtype, then the one that differs: the packed weight may come first
    found = explained(
        "ValueError: Must flatten tensors with uniform dtype but got torch.uint8 and torch.bfloat16\n"
    )
    assert found.id == "log.fsdp_wrap_config"
    assert "bnb_4bit_quant_storage" in found.fix


def test_fsdp_flattening_two_float_dtypes_keeps_the_cast():
    found = explained(
        "ValueError: Must flatten tensors with uniform dtype but got torch.float16 and torch.float32\n"
    )
    assert found.id == "log.fsdp_wrap_config"
    assert "bnb_4bit_quant_storage" not in found.fix and "model.to(torch.bfloat16)" in found.fix
