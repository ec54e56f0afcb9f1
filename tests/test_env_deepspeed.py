"""DeepSpeed: not installed, installed with its build record (the file ds_report reads), the prebuild
command; and the driver and NCCL checks through a fake nvidia-smi."""

import importlib.util

import pytest
from env_fakes import environ, nvidia_smi, script, toolkit

from torchdoctor.env.checks import check_deepspeed, check_driver, check_nccl
from torchdoctor.env.deepspeed import find_deepspeed, libaio_headers, prebuild_command
from torchdoctor.env.driver import minimum_driver
from torchdoctor.env.machine import scan
from torchdoctor.env.torch_facts import TorchFacts

OPS = ["async_io", "fused_adam", "cpu_adam", "cpu_adagrad", "fused_lamb", "sparse_attn", "transformer"]


def install_deepspeed(site, version="0.14.0", prebuilt=(), torch_version="2.5", cuda="12.1"):
    """A deepspeed package directory with the build record DeepSpeed's setup.py writes."""
    package = site / "deepspeed"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('torchdoctor must not import deepspeed')\n")
    installed = {op: op in prebuilt for op in OPS}
    compatible = {op: op != "sparse_attn" for op in OPS} | {"deepspeed_not_implemented": False}
    torch_info = {
        "version": torch_version,
        "bf16_support": True,
        "cuda_version": cuda,
        "nccl_version": "2.18",
    }
    (package / "git_version_info_installed.py").write_text(
        f"version={version!r}\ngit_hash='unknown'\ngit_branch='unknown'\n"
        f"installed_ops={installed!r}\ncompatible_ops={compatible!r}\ntorch_info={torch_info!r}\n"
    )
    return package


def test_not_installed_is_said_plainly(tmp_path):
    finding = check_deepspeed(scan(facts=TorchFacts("2.13.0+cpu")), [str(tmp_path)])
    assert finding.status == "skip" and finding.summary.startswith("DeepSpeed is not installed")


@pytest.mark.skipif(importlib.util.find_spec("deepspeed") is not None, reason="DeepSpeed is installed here")
def test_not_installed_on_this_machine():
    assert check_deepspeed(scan()).summary.startswith("DeepSpeed is not installed")


def test_prebuilt_ops_listed_without_importing_deepspeed(tmp_path):
    install_deepspeed(tmp_path, prebuilt=("cpu_adam", "fused_adam"))
    facts = TorchFacts("2.5.1+cu121", cuda="12.1")
    finding = check_deepspeed(scan(facts=facts), [str(tmp_path / "elsewhere"), str(tmp_path)])
    assert finding.status == "ok"
    assert finding.summary == (
        "DeepSpeed 0.14.0: 2 of 7 ops prebuilt (cpu_adam, fused_adam); "
        "not buildable where it was installed: sparse_attn"
    )


def test_ops_prebuilt_for_another_torch_fail(tmp_path):
    install_deepspeed(tmp_path, prebuilt=("cpu_adam",), torch_version="2.1", cuda="11.8")
    finding = check_deepspeed(scan(facts=TorchFacts("2.5.1+cu121", cuda="12.1")), [str(tmp_path)])
    assert finding.status == "fail"
    assert "built against torch 2.1 (now 2.5) and CUDA 11.8 (now 12.1)" in finding.summary
    assert "--deepspeed-build" in finding.fix


def test_nothing_prebuilt_means_jit(tmp_path):
    install_deepspeed(tmp_path, torch_version="2.1", cuda="11.8")
    finding = check_deepspeed(scan(facts=TorchFacts("2.5.1+cu121", cuda="12.1")), [str(tmp_path)])
    assert (
        finding.status == "ok"
        and "0 of 7 ops prebuilt; the others compile on first use (JIT)" in finding.summary
    )
    assert find_deepspeed([str(tmp_path)]) == str(tmp_path / "deepspeed")


def test_prebuild_command_forms(tmp_path):
    assert prebuild_command("8.6", True, 16) == (
        'TORCH_CUDA_ARCH_LIST="8.6" DS_BUILD_CPU_ADAM=1 DS_BUILD_UTILS=1 DS_BUILD_AIO=1 MAX_JOBS=16 \\\n'
        "    pip install deepspeed --no-build-isolation --no-cache-dir -v 2>&1 | tee build.log"
    )
    wheel = prebuild_command("6.1;8.6", False, 8, wheel=True).splitlines()
    assert 'TORCH_CUDA_ARCH_LIST="6.1;8.6" DS_BUILD_CPU_ADAM=1 DS_BUILD_UTILS=1 \\' in wheel
    assert "    python setup.py build_ext -j8 bdist_wheel" in wheel
    assert libaio_headers(tmp_path, environ()) is None
    (tmp_path / "usr/include").mkdir(parents=True)
    (tmp_path / "usr/include/libaio.h").write_text("/* libaio */\n")
    assert libaio_headers(tmp_path, environ()) == str(tmp_path / "usr/include/libaio.h")


def test_driver_against_torch_and_toolkit_minimums(tmp_path):
    facts = TorchFacts("2.5.1+cu121", cuda="12.1")
    nvidia_smi(tmp_path, driver="535.104.05")
    ok = check_driver(scan(environ(tmp_path), tmp_path, facts=facts))
    assert ok.status == "ok" and ok.summary == "driver 535.104.05 runs CUDA 12.1"
    nvidia_smi(tmp_path, driver="470.82.01")
    old = check_driver(scan(environ(tmp_path), tmp_path, facts=facts))
    assert old.status == "fail" and "older than torch's CUDA 12.1 needs (525.60.13 or newer)" in old.summary
    assert "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu118" in old.fix
    # a torch for CUDA 11.8 runs on it, but a CUDA 12.5 toolkit's programs would not
    toolkit(tmp_path / "cuda-12.5", nvcc="nvcc-12.5.txt")
    cu118 = TorchFacts("2.5.1+cu118", cuda="11.8")
    newer_toolkit = check_driver(
        scan(environ(tmp_path, CUDA_HOME=tmp_path / "cuda-12.5"), tmp_path, facts=cu118)
    )
    assert (
        newer_toolkit.status == "warn" and "older than the toolkit's CUDA 12.5 needs" in newer_toolkit.summary
    )
    assert minimum_driver("11.8") == "450.80.02" and minimum_driver("13.0") == "580.65.06"


def test_no_driver_skips_with_the_reason(tmp_path):
    assert (
        check_driver(scan(environ(tmp_path), tmp_path)).summary
        == "no NVIDIA driver to check (not found: nvidia-smi)"
    )
    script(
        tmp_path / "nvidia-smi",
        'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."; exit 9',
    )
    broken = check_driver(scan(environ(tmp_path), tmp_path, facts=TorchFacts("2.5.1", cuda="12.1")))
    assert broken.status == "skip" and "couldn't communicate with the NVIDIA driver" in broken.summary


def test_nccl_version_torch_ships():
    assert (
        check_nccl(scan(facts=TorchFacts("2.5.1", cuda="12.1", nccl="2.21.5"))).summary
        == "torch ships NCCL 2.21.5"
    )
    assert check_nccl(scan(facts=TorchFacts("2.13.0+cpu"))).status == "skip"
    assert check_nccl(scan(facts=TorchFacts("2.5.1", cuda="12.1"))).status == "warn"


def test_another_libnccl_first_on_ld_library_path_warns_naming_both_versions(tmp_path):
    stale, wheel = tmp_path / "opt" / "nccl" / "lib", tmp_path / "site" / "nvidia" / "nccl" / "lib"
    for folder, version in ((stale, "2.18.1"), (wheel, "2.27.5")):
        folder.mkdir(parents=True)
        (folder / f"libnccl.so.{version}").write_bytes(b"\x7fELF")
        (folder / "libnccl.so.2").symlink_to(f"libnccl.so.{version}")
    facts = TorchFacts("2.13.0+cu130", cuda="13.0", nccl="2.27.5")
    found = check_nccl(scan(environ(LD_LIBRARY_PATH=f"{stale}:/usr/lib"), tmp_path, facts=facts))
    assert found.status == "warn" and f"finds {stale}/libnccl.so.2 (NCCL 2.18.1) first" in found.summary
    assert "torch ships NCCL 2.27.5" in found.summary and found.fix.startswith("export LD_LIBRARY_PATH=")
    assert str(stale) not in found.fix.split("#")[0]
    alone = check_nccl(scan(environ(LD_LIBRARY_PATH=str(stale)), tmp_path, facts=facts))
    assert alone.fix == "unset LD_LIBRARY_PATH"
    for fine in (str(wheel), "/usr/lib"):  # the wheel's own NCCL, or none on the path: nothing to say
        assert check_nccl(scan(environ(LD_LIBRARY_PATH=fine), tmp_path, facts=facts)).status == "ok", fine
