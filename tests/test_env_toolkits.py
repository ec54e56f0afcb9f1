"""Finding CUDA toolkits, the one a build uses, and torch's CUDA against it — on fake trees in tmp_path."""

import re
import shutil
import subprocess

import pytest
from env_fakes import environ, fixture, nvidia_smi, script, toolkit

from torchdoctor.env.checks import check_build_toolkit, check_toolkit_mismatch, check_toolkits
from torchdoctor.env.machine import scan
from torchdoctor.env.toolkits import build_toolkit, find_toolkits
from torchdoctor.env.torch_facts import TorchFacts

CPU_TORCH = TorchFacts("2.13.0+cpu")


def cuda_torch(cuda: str) -> TorchFacts:
    return TorchFacts(f"2.5.1+cu{cuda.replace('.', '')}", cuda=cuda, arch_list=("sm_80", "sm_90"))


@pytest.fixture
def machine(tmp_path):
    """A root with CUDA 10.2 (version.txt), 11.3 (nvcc only), /usr/local/cuda -> 11.3, 12.5 in /opt
    (version.json, no libcudart) and a conda env with nvcc 12.6."""
    root = tmp_path / "root"
    toolkit(root / "usr/local/cuda-10.2", nvcc="nvcc-10.2.txt", version_txt="10.2.89")
    toolkit(root / "usr/local/cuda-11.3", nvcc="nvcc-11.3.txt")
    (root / "usr/local/cuda").symlink_to(root / "usr/local/cuda-11.3")
    toolkit(root / "opt/cuda-12.5", nvcc="nvcc-12.5.txt", version_json="12.5.82", libcudart=False)
    conda = toolkit(tmp_path / "conda/envs/train", nvcc="nvcc-12.6.txt")
    return root, conda


def test_every_toolkit_found_with_its_version_and_source(machine, tmp_path):
    root, conda = machine
    found = find_toolkits(environ(tmp_path / "empty", CONDA_PREFIX=conda), root)
    by_version = {t.version: t for t in found}
    assert sorted(by_version) == ["10.2", "11.3", "12.5", "12.6"]
    assert by_version["10.2"].version_from == "version.txt"
    assert (by_version["11.3"].version_from, by_version["11.3"].full_version) == (
        "nvcc --version",
        "11.3.109",
    )
    assert by_version["12.5"].version_from == "version.json"
    assert by_version["12.6"].found_as == ["conda env"]
    # /usr/local/cuda is a symlink to cuda-11.3: one toolkit, found both ways
    assert by_version["11.3"].found_as == ["/usr/local/cuda", "/usr/local/cuda-*"]
    assert by_version["12.5"].missing == ["lib64/libcudart.so"]
    assert by_version["10.2"].missing == [] and by_version["10.2"].libcudart


def test_build_toolkit_follows_torchs_order(machine, tmp_path):
    root, _ = machine
    on_path = root / "opt/cuda-12.5/bin"
    # nothing set: /usr/local/cuda
    found = find_toolkits(environ(tmp_path / "empty"), root)
    assert build_toolkit(found, environ(tmp_path / "empty")).version == "11.3"
    # nvcc on PATH beats /usr/local/cuda
    env = environ(on_path)
    assert build_toolkit(find_toolkits(env, root), env).version == "12.5"
    # CUDA_HOME beats nvcc on PATH; CUDA_PATH is read when CUDA_HOME is not set
    for name in ("CUDA_HOME", "CUDA_PATH"):
        env = environ(on_path, **{name: root / "usr/local/cuda-10.2"})
        assert build_toolkit(find_toolkits(env, root), env).version == "10.2"


def test_toolkits_check_lists_them_and_says_when_there_are_none(machine, tmp_path):
    root, _ = machine
    listed = check_toolkits(scan(environ(tmp_path / "empty"), root, facts=CPU_TORCH))
    assert listed.status == "ok" and "3 CUDA toolkit(s)" in listed.summary
    assert "missing lib64/libcudart.so" in listed.summary
    none = check_toolkits(scan(environ(tmp_path / "empty"), tmp_path / "bare", facts=cuda_torch("12.1")))
    assert none.status == "warn" and "no CUDA extension" in none.summary
    assert "cuda-toolkit=12.1" in none.fix
    assert check_toolkits(scan(environ(), tmp_path / "bare", facts=CPU_TORCH)).status == "skip"


def test_nvcc_on_path_from_another_toolkit_warns_with_export_lines(machine):
    root, _ = machine
    cuda_102 = root / "usr/local/cuda-10.2"
    env = environ(root / "usr/local/cuda-11.3/bin", CUDA_HOME=cuda_102)
    finding = check_build_toolkit(scan(env, root, facts=CPU_TORCH))
    assert finding.status == "warn"
    assert f"builds use {cuda_102} (CUDA 10.2, by CUDA_HOME)" in finding.summary
    assert "nvcc on PATH is" in finding.summary and "(CUDA 11.3)" in finding.summary
    assert finding.fix.splitlines() == [
        f"export CUDA_HOME={cuda_102}",
        f"export PATH={cuda_102}/bin:$PATH",
        f"export LD_LIBRARY_PATH={cuda_102}/lib64:$LD_LIBRARY_PATH",
    ]


def test_the_printed_fix_makes_path_and_loader_agree(machine):
    """Run the fix in a real shell, read back the environment it leaves, and check again."""
    root, _ = machine
    env = environ(
        root / "usr/local/cuda-11.3/bin",
        "/usr/bin",
        "/bin",
        CUDA_HOME=root / "usr/local/cuda-10.2",
        LD_LIBRARY_PATH=root / "usr/local/cuda-11.3/lib64",
    )
    finding = check_build_toolkit(scan(env, root, facts=CPU_TORCH))
    assert finding.status == "warn" and "LD_LIBRARY_PATH finds" in finding.summary
    shell = shutil.which("bash") or "/bin/sh"
    done = subprocess.run(
        [shell, "-c", finding.fix + "\nenv"], env=env, capture_output=True, text=True, timeout=30
    )
    after = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    fixed = {k: after[k] for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME")}
    assert check_build_toolkit(scan(fixed, root, facts=CPU_TORCH)).status == "ok"


def test_same_version_elsewhere_agrees_and_a_pip_cudart_is_read_by_its_name(tmp_path):
    root = tmp_path / "root"
    chosen = toolkit(root / "usr/local/cuda-12.5", nvcc="nvcc-12.5.txt")
    toolkit(tmp_path / "other-12.5", nvcc="nvcc-12.5.txt")  # same release, another directory
    wheel_lib = tmp_path / "site-packages/nvidia/cuda_runtime/lib"
    wheel_lib.mkdir(parents=True)
    (wheel_lib / "libcudart.so.12").write_bytes(b"")
    env = environ(tmp_path / "other-12.5/bin", CUDA_HOME=chosen, LD_LIBRARY_PATH=wheel_lib)
    assert check_build_toolkit(scan(env, root, facts=CPU_TORCH)).status == "ok"
    (wheel_lib / "libcudart.so.12").rename(wheel_lib / "libcudart.so.11.0")
    finding = check_build_toolkit(scan(env, root, facts=CPU_TORCH))
    assert finding.status == "warn"
    assert finding.summary.endswith(
        f"but LD_LIBRARY_PATH finds {wheel_lib}/libcudart.so.11.0 first (CUDA 11.0)"
    )


def test_cuda_home_that_does_not_exist_fails(machine, tmp_path):
    root, _ = machine
    env = environ(tmp_path / "empty", CUDA_HOME=tmp_path / "no/cuda-11.7")
    finding = check_build_toolkit(scan(env, root, facts=cuda_torch("11.3")))
    assert finding.status == "fail" and "no/cuda-11.7 does not exist" in finding.summary
    assert f"export CUDA_HOME={root}/usr/local/cuda" in finding.fix


def test_incomplete_build_toolkit_names_a_complete_one(machine):
    root, _ = machine
    env = environ(root / "opt/cuda-12.5/bin")
    finding = check_build_toolkit(scan(env, root, facts=CPU_TORCH))
    assert finding.status == "warn" and "lacks lib64/libcudart.so" in finding.summary
    assert "cuda-toolkit=12.5" in finding.fix  # no other 12.5 here: the install hint


def test_major_mismatch_from_the_real_report_fails_and_names_the_matching_toolkit(tmp_path):
    # vllm#1060: "The detected CUDA version (12.2) mismatches the version that was used to compile PyTorch (11.7)"
    text = fixture("torch-cpp-extension-cuda-version-mismatch.txt")
    detected, torch_cuda = re.search(r"detected CUDA version \((\S+)\).*\n.*PyTorch \((\S+)\)", text).groups()
    root = tmp_path / "root"
    toolkit(root / f"usr/local/cuda-{detected}", version_json=f"{detected}.140", nvcc="nvcc-12.5.txt")
    matching = toolkit(root / f"usr/local/cuda-{torch_cuda}", version_json=f"{torch_cuda}.99")
    script(matching / "bin" / "nvcc", "exit 0")  # present; its version comes from version.json
    (root / "usr/local/cuda").symlink_to(root / f"usr/local/cuda-{detected}")
    finding = check_toolkit_mismatch(scan(environ(tmp_path / "empty"), root, facts=cuda_torch(torch_cuda)))
    assert finding.status == "fail" and "major version mismatch" in finding.summary
    assert f"is {detected}, torch is built with {torch_cuda}" in finding.summary
    assert f"export PATH={root}/usr/local/cuda-{torch_cuda}/bin:$PATH" in finding.fix.splitlines()


def test_minor_mismatch_warns_and_offers_a_matching_torch(tmp_path):
    root = tmp_path / "root"
    toolkit(root / "usr/local/cuda-12.5", nvcc="nvcc-12.5.txt")
    env = environ(root / "usr/local/cuda-12.5/bin")
    finding = check_toolkit_mismatch(scan(env, root, facts=cuda_torch("12.6")))
    assert finding.status == "warn" and "minor version mismatch" in finding.summary
    assert (
        "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu124"
        in finding.fix
    )
    assert check_toolkit_mismatch(scan(env, root, facts=cuda_torch("12.5"))).status == "ok"


def test_cpu_torch_is_said_plainly(tmp_path):
    root = tmp_path / "root"
    toolkit(root / "usr/local/cuda-12.6", nvcc="nvcc-12.6.txt")
    (root / "usr/local/cuda").symlink_to(root / "usr/local/cuda-12.6")
    no_gpu = check_toolkit_mismatch(scan(environ(tmp_path / "empty"), root, facts=CPU_TORCH))
    assert no_gpu.status == "skip"
    assert no_gpu.summary == (
        "torch 2.13.0+cpu is a CPU-only build: no CUDA extension (DeepSpeed ops, flash-attn, apex, …) "
        "can be built with it"
    )
    # the same torch on a machine whose nvidia-smi lists a GPU: it cannot use it
    nvidia_smi(tmp_path / "bin", driver="550.54.15")
    with_gpu = check_toolkit_mismatch(scan(environ(tmp_path / "bin"), root, facts=CPU_TORCH))
    assert with_gpu.status == "warn" and "cannot use the 1 GPU(s)" in with_gpu.summary
    assert with_gpu.fix.endswith("--index-url https://download.pytorch.org/whl/cu129")


def test_each_nvcc_is_asked_its_version_once_across_the_checks(tmp_path):
    from torchdoctor.checks import discover, run_checks
    from torchdoctor.runner import run_command

    home = toolkit(tmp_path / "usr/local/cuda-11.3", nvcc="nvcc-11.3.txt")
    asked = []

    def run(args, **kwargs):
        asked.append(" ".join(args))
        return run_command(args, **kwargs)

    env = environ(home / "bin", CUDA_HOME=str(home))
    facts = TorchFacts(version="2.13.0+cu113", cuda="11.3")
    machine = scan(environ=env, root=tmp_path, run=run, facts=facts)
    for check in (check_toolkits, check_build_toolkit, check_toolkit_mismatch):
        check(machine)
    assert asked.count(f"{home}/bin/nvcc --version") == 1, asked
    # a new look asks again (a changed binary is seen)
    (home / "bin" / "nvcc").write_text((home / "bin" / "nvcc").read_text() + "\n# rebuilt\n")
    check_toolkits(scan(environ=env, root=tmp_path, run=run, facts=facts))
    assert asked.count(f"{home}/bin/nvcc --version") == 2, asked
    # every env check of one `check` run shares one look: the machine's own torch, toolkits under the root
    findings = run_checks(discover(["torchdoctor.env.checks"], root=tmp_path / "bare"))
    assert [f.id for f in findings][:3] == ["env.toolkits", "env.build_toolkit", "env.toolkit_mismatch"]
