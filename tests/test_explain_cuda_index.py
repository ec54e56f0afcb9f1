"""A fix that upgrades torch keeps the CUDA build a Windows log shows: PyPI's Windows torch is the CPU build
(pytorch/pytorch#52662), so "pip install -U torch" there swaps torch 2.4.1+cu118 for a CPU torch. DeepSpeed's own
refusal (deepspeed/comm/torch.py: "Torch version must be 2.5 or higher to use symmetric memory. Current version: {}")
on a Windows console (collect_env's rows), its fix given PyTorch's cu118 index; on Linux, or a CPU build, as it was."""

from __future__ import annotations

import pytest
from explaining import explained

from torchdoctor.explain.cuda_index import keep_index

REFUSAL = (
    "Traceback (most recent call last):\n"
    '  File "{drive}Users\\ana\\train.py", line 12, in <module>\n'
    "    deepspeed.init_distributed()\n"
    "RuntimeError: Torch version must be 2.5 or higher to use symmetric memory. Current version: {release}\n"
)
INDEX = "--index-url https://download.pytorch.org/whl/cu118"


def _log(release: str, windows: bool) -> str:
    system = "OS: Microsoft Windows 11 Pro\n" if windows else "OS: Ubuntu 22.04.4 LTS (x86_64)\n"
    drive = "C:\\" if windows else "/home/"
    return f"PyTorch version: {release}\n{system}" + REFUSAL.format(drive=drive, release=release)


def test_an_upgrade_of_a_windows_cuda_torch_keeps_its_index():
    found = explained(_log("2.4.1+cu118", windows=True))
    assert found.id == "log.dependency_version", found.summary
    assert f"pip install -U torch {INDEX}" in found.fix and "cu1xx" not in found.fix, found.fix


@pytest.mark.parametrize(
    ("release", "windows"), [("2.4.1+cu118", False), ("2.4.1+cpu", True), ("2.4.1", True)]
)
def test_elsewhere_the_fix_is_left_as_it_is(release, windows):
    found = explained(_log(release, windows))
    assert found.id == "log.dependency_version" and INDEX not in found.fix, found.fix


@pytest.mark.parametrize(
    ("fix", "kept"),
    [
        ("(pip install -U torch)", f"(pip install -U torch {INDEX})"),
        (
            "pip install -U 'torch>=2.1.1'\npip show torch",
            f"pip install -U 'torch>=2.1.1' {INDEX}\npip show torch",
        ),
        (
            "pip install -U torch torchvision with the --index-url of your CUDA;",
            f"pip install -U torch torchvision {INDEX};",
        ),
        (
            "pip install -U torch --index-url https://download.pytorch.org/whl/cu1xx)",
            f"pip install -U torch {INDEX})",
        ),
        ("pip install -U torchmetrics", "pip install -U torchmetrics"),
        # an index given after the last package: the regex must not give torchvision back to add one after torch
        (f"pip install -U torch torchvision {INDEX}", f"pip install -U torch torchvision {INDEX}"),
        ("pip install -U torch>=2.1 torchaudio -i X", "pip install -U torch>=2.1 torchaudio -i X"),
        # a local release names its build: no index to add, and none inside the release
        ("pip install -U torch==2.1.0+cu121 now", "pip install -U torch==2.1.0+cu121 now"),
    ],
)
def test_every_spelling_of_an_upgrade_of_torch_gets_the_index_once(fix, kept):
    assert keep_index(fix, "118") == kept
