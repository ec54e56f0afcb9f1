"""The fakes of tests/env_fakes.py behave as the real programs they stand in for."""

from env_fakes import environ, gcc_guard_header, nvidia_smi, toolkit

from torchdoctor.runner import run_command


def test_fake_nvcc_prints_the_recorded_version(tmp_path):
    home = toolkit(tmp_path / "cuda-11.3", nvcc="nvcc-11.3.txt", gpu_codes=["sm_80", "sm_86"])
    result = run_command([str(home / "bin" / "nvcc"), "--version"])
    assert result.ok and "release 11.3, V11.3.109" in result.stdout
    listed = run_command([str(home / "bin" / "nvcc"), "--list-gpu-code"])
    assert listed.stdout.split() == ["sm_80", "sm_86"]


def test_fake_nvidia_smi_answers_both_queries(tmp_path):
    nvidia_smi(tmp_path, "470.82.01", [("Tesla T4", "7.5"), ("NVIDIA A10", "8.6")])
    env = environ(tmp_path)
    names = run_command(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"], env=env)
    assert names.stdout.splitlines() == ["Tesla T4, 7.5", "NVIDIA A10, 8.6"]
    drivers = run_command(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], env=env)
    assert drivers.stdout.split() == ["470.82.01", "470.82.01"]


def test_guard_header_quotes_the_real_error():
    assert gcc_guard_header("nvcc-gcc-too-new-cuda10-gcc9.txt").startswith("#if __GNUC__ > 8\n#error")
    assert "later than 15" in gcc_guard_header("nvcc-gcc-too-new-cuda13-gcc16.txt")
