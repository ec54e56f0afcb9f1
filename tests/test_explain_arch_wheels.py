"""`no_kernel_image` names the first wheel line and torch release with kernels for the newest GPUs (helper T58,
session 39; kinds/arch_wheels.py).

Train 6068.txt (OpenRAL/openral#167): a Jetson Thor given torch 2.9.1+cu128, whose printed arch list has no
sm_110; the merged change routes torch to the cu130 wheels. Train 6070.txt (LoRA_Easy_Training_Scripts#290): an RTX
50 card under an installer's CUDA 12.6 libraries, no capability printed; the cu128 wheels are the first for it.
Where the log prints the GPU's capability, the fix names its wheels; where it prints the build's kernels, the newest
GPUs that run none of them; where it prints neither, each of the newest GPUs' first wheels.
"""

from __future__ import annotations

from explaining import explained, read

from torchdoctor.explain.kinds import arch_wheels


def test_train_6068_the_arch_list_without_sm_110_names_thors_cu130_wheels():
    found = read("6068.txt", "no_kernel_image", "certain")
    assert "sm_80, sm_90, sm_100, sm_120" in found.fix, found.fix
    assert "Jetson Thor (sm_110)" in found.fix and "whl/cu130" in found.fix, found.fix
    # B300 and GB10 run this build's sm_100 and sm_120 kernels: not named as lacking
    assert "sm_103" not in found.fix and "sm_121" not in found.fix, found.fix


def test_train_6070_no_capability_printed_names_each_newest_gpus_first_wheels():
    found = read("6070.txt", "no_kernel_image", "certain")
    assert "RTX 50 series" in found.fix and "PyTorch 2.7+ cu128" in found.fix, found.fix
    assert "PyTorch 2.9+ cu130" in found.fix, found.fix


def test_the_gpus_capability_printed_names_its_wheels():
    # torch/cuda/__init__.py's warning, as torch 2.6+cu126 prints it on an RTX 5090
    found = explained(
        "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    assert "PyTorch 2.7 or newer, built with CUDA 12.8 or newer (the cu128 wheels)" in found.fix, found.fix
    found = explained(
        "UserWarning: NVIDIA GB10 with CUDA capability sm_121 is not compatible with the current PyTorch "
        "installation.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    assert "its sm_120 kernels run on sm_121" in found.fix and "whl/cu128" in found.fix, found.fix


def test_an_older_gpu_or_a_build_that_has_the_newest_kernels_names_no_newest_wheel():
    found = explained(
        "UserWarning: NVIDIA A100-SXM4-40GB with CUDA capability sm_80 is not compatible with the current "
        "PyTorch installation.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    assert "cu130" not in found.fix and "Jetson" not in found.fix, found.fix
    found = explained(
        "torch 2.9.1+cu130   arch_list: ['sm_80', 'sm_90', 'sm_100', 'sm_110', 'sm_120']\n"
        ">>> a @ b  ->  CUDA error: no kernel image is available for execution on the device\n"
    )
    assert "which the newest GPUs run" in found.fix and "pip install" not in found.fix, found.fix


def test_the_table_follows_the_binary_compatibility_rule():
    assert arch_wheels.runs_on("103", ("100",)) and arch_wheels.runs_on("121", ("120",))
    assert not arch_wheels.runs_on("110", ("100", "120")) and not arch_wheels.runs_on("100", ("103",))
    for part in arch_wheels.NEWEST:
        assert arch_wheels.runs_on(part.sm, (part.runs,)), part
