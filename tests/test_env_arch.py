"""GPU architecture: torch's kernels, what nvcc can target, and TORCH_CUDA_ARCH_LIST — fed with the GPUs
and arch lists of real "not compatible" reports, and fake nvcc/nvidia-smi on PATH."""

import re

import pytest
from env_fakes import environ, fixture, nvidia_smi, toolkit

from torchdoctor.env.arch import covers, has_kernel, nvcc_can_target, parse_arch_list, recommended_arch_list
from torchdoctor.env.checks import check_arch_list, check_gpu_arch
from torchdoctor.env.machine import scan
from torchdoctor.env.torch_facts import TorchFacts


def report_facts(name: str) -> TorchFacts:
    """The torch and GPU a real 'sm_XX is not compatible with the current PyTorch installation' report shows."""
    text = fixture(name)
    gpu, sm = re.search(r"^(.+) with CUDA capability sm_(\d+) is not compatible", text, re.MULTILINE).groups()
    supported = re.search(r"supports CUDA capabilities (.+)\.$", text, re.MULTILINE).group(1).split()
    capability = f"{int(sm) // 10}.{int(sm) % 10}"
    return TorchFacts("2.5.0+cu121", cuda="12.1", arch_list=tuple(supported), gpus=((gpu, capability),))


@pytest.mark.parametrize(
    "report, wheel",
    [
        ("torch-sm86-not-compatible-cu102.txt", "cu118"),  # RTX 3070, torch 1.7.1+cu102
        ("torch-sm120-not-compatible-no-kernel-image.txt", "cu128"),  # RTX 5090, torch 2.5.0+cu121
    ],
)
def test_no_kernel_image_reports_fail_like_torch_said(tmp_path, report, wheel):
    facts = report_facts(report)
    ((name, capability),) = facts.gpus
    finding = check_gpu_arch(scan(environ(tmp_path), tmp_path, facts=facts))
    assert finding.status == "fail"
    assert f"GPU 0 {name} (sm_{capability.replace('.', '')})" in finding.summary
    assert "no kernel image is available for execution on the device" in finding.summary
    assert finding.fix == f"pip install --upgrade torch --index-url https://download.pytorch.org/whl/{wheel}"


def test_nvcc_too_old_for_the_gpu_names_an_installed_toolkit_that_can(tmp_path):
    root = tmp_path / "root"
    old = toolkit(root / "usr/local/cuda-11.0", nvcc="nvcc-11.0.txt")
    newer = toolkit(root / "usr/local/cuda-11.1", nvcc="nvcc-11.1.txt")
    facts = TorchFacts(
        "2.5.1+cu118", cuda="11.8", arch_list=("sm_80", "sm_86", "sm_90"), gpus=(("NVIDIA A10", "8.6"),)
    )
    finding = check_gpu_arch(scan(environ(tmp_path, CUDA_HOME=old), root, facts=facts))
    assert finding.status == "fail"
    assert (
        "CUDA 11.0's nvcc" in finding.summary
        and "cannot compile for sm_86 (needs CUDA 11.1 or newer)" in finding.summary
    )
    assert f"export CUDA_HOME={newer}" in finding.fix.splitlines()
    assert check_gpu_arch(scan(environ(tmp_path, CUDA_HOME=newer), root, facts=facts)).status == "ok"


def test_what_nvcc_lists_wins_over_the_table(tmp_path):
    # a CUDA 13 nvcc lists sm_75 and up: Volta (7.0) is gone although the GPU would run torch's kernels
    home = toolkit(tmp_path / "cuda-13.0", nvcc="nvcc-12.6.txt", gpu_codes=["sm_75", "sm_80", "sm_90"])
    facts = TorchFacts(
        "2.5.1+cu126", cuda="12.6", arch_list=("sm_70", "sm_80"), gpus=(("Tesla V100-SXM2-16GB", "7.0"),)
    )
    finding = check_gpu_arch(scan(environ(tmp_path, CUDA_HOME=home), tmp_path, facts=facts))
    assert finding.status == "fail" and "cannot compile for sm_70" in finding.summary
    assert finding.details["nvcc_targets"] == ["7.5", "8.0", "9.0"]


def test_cpu_torch_reads_gpus_from_nvidia_smi(tmp_path):
    nvidia_smi(tmp_path, gpus=[("NVIDIA GeForce GTX 1080", "6.1"), ("NVIDIA GeForce RTX 3090", "8.6")])
    finding = check_gpu_arch(scan(environ(tmp_path), tmp_path, facts=TorchFacts("2.13.0+cpu")))
    assert finding.status == "ok" and finding.details["seen_by"] == "nvidia-smi"
    assert "0: NVIDIA GeForce GTX 1080 (sm_61), 1: NVIDIA GeForce RTX 3090 (sm_86)" in finding.summary
    assert (
        check_gpu_arch(scan(environ(tmp_path / "none"), tmp_path, facts=TorchFacts("2.13.0+cpu"))).status
        == "skip"
    )


def test_kernel_and_target_rules():
    assert has_kernel("8.6", ["sm_80"]) and has_kernel("8.9", ["sm_80", "sm_86"])
    assert not has_kernel("7.5", ["sm_80"]) and not has_kernel("9.0", ["sm_80", "sm_86"])
    assert has_kernel("12.0", ["sm_90", "compute_90"])  # PTX is JIT-compiled upwards
    assert nvcc_can_target("8.6", "11.1") and not nvcc_can_target("8.6", "11.0")
    assert nvcc_can_target("9.0", "11.8") and not nvcc_can_target("12.0", "12.6")
    assert nvcc_can_target("6.1", "12.9") and not nvcc_can_target("6.1", "13.0")
    assert nvcc_can_target("42.0", "13.0") is None


def test_arch_list_parsing():
    assert recommended_arch_list(["8.6"]) == "8.6"
    assert recommended_arch_list(["8.6", "6.1", "8.6"]) == "6.1;8.6"
    assert parse_arch_list("7.5 8.0;9.0+PTX") == ["7.5", "8.0", "9.0+PTX"]
    assert parse_arch_list("Ampere+Tegra;Ampere") == ["8.7", "8.0", "8.6+PTX"]
    assert covers("8.9", ["8.0", "8.6"]) and not covers("9.0", ["8.6"]) and covers("9.0", ["8.6+PTX"])
    with pytest.raises(ValueError, match="'sm_86'"):
        parse_arch_list("8.0;sm_86")


@pytest.fixture
def mixed(tmp_path):
    nvidia_smi(
        tmp_path / "bin", gpus=[("NVIDIA GeForce GTX 1080 Ti", "6.1"), ("NVIDIA GeForce RTX 3090", "8.6")]
    )
    home = toolkit(tmp_path / "cuda-11.3", nvcc="nvcc-11.3.txt")
    facts = TorchFacts("2.1.2+cu118", cuda="11.8", arch_list=("sm_60", "sm_70", "sm_80", "sm_86"))
    return tmp_path, home, facts


def test_unset_arch_list_warns_with_the_value_for_mixed_gpus(mixed):
    tmp_path, home, facts = mixed
    finding = check_arch_list(scan(environ(tmp_path / "bin", CUDA_HOME=home), tmp_path, facts=facts))
    assert finding.status == "warn" and "unset" in finding.summary
    assert finding.fix == 'export TORCH_CUDA_ARCH_LIST="6.1;8.6"'


@pytest.mark.parametrize(
    "value, status, said",
    [
        ("6.1;8.6", "ok", "covers the GPUs here"),
        ("Pascal;Ampere", "ok", "covers the GPUs here"),
        ("8.6", "fail", "no kernel for NVIDIA GeForce GTX 1080 Ti (sm_61)"),
        ("6.1;8.6;8.9", "fail", "cannot compile for 8.9"),
        ("6.1;eight", "fail", "'eight' is not a compute capability"),
        ("native", "ok", "native"),
    ],
)
def test_set_arch_list_is_checked(mixed, value, status, said):
    tmp_path, home, facts = mixed
    env = environ(tmp_path / "bin", CUDA_HOME=home, TORCH_CUDA_ARCH_LIST=value)
    finding = check_arch_list(scan(env, tmp_path, facts=facts))
    assert finding.status == status and said in finding.summary
    if status == "fail":
        assert finding.fix == 'export TORCH_CUDA_ARCH_LIST="6.1;8.6"'


def test_cpu_torch_needs_no_arch_list(tmp_path):
    finding = check_arch_list(scan(environ(tmp_path), tmp_path, facts=TorchFacts("2.13.0+cpu")))
    assert finding.status == "skip" and "CPU-only" in finding.summary
