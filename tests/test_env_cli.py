"""`torchdoctor env` and `torchdoctor check` as a user runs them, in real processes."""

import dataclasses
import json
import os

import pytest
import torch
from env_fakes import nvidia_smi

from torchdoctor.env import machine, torch_facts


def test_env_json_on_this_machine(cli_here):
    # --json through the same `main` in this process; the human output below runs `env` in a real one
    result = cli_here("env", "--json")
    data = json.loads(result.stdout)
    ids = [f["id"] for f in data["findings"]]
    assert ids == [
        "env.toolkits",
        "env.build_toolkit",
        "env.toolkit_mismatch",
        "env.host_compiler",
        "env.gpu_arch",
        "env.arch_list",
        "env.deepspeed",
        "env.driver",
        "env.nccl",
    ]
    assert result.returncode == (1 if data["status"] == "fail" else 0)
    if torch.version.cuda is None:  # this CPU machine: a valid set-up, said plainly
        assert result.returncode == 0
        mismatch = next(f for f in data["findings"] if f["id"] == "env.toolkit_mismatch")
        assert "CPU-only build: no CUDA extension" in mismatch["summary"]


def test_env_human_output(cli):
    result = cli("env")
    assert "(env.toolkit_mismatch)" in result.stdout and "Traceback" not in result.stderr
    assert result.returncode in (0, 1)
    if torch.version.cuda is None:
        assert result.returncode == 0 and "is a CPU-only build: no CUDA extension" in result.stdout


def test_check_runs_every_env_check():
    from torchdoctor.checks import CHECK_MODULES, discover

    names = {fn.__name__ for fn in discover(CHECK_MODULES) if fn.__module__ == "torchdoctor.env.checks"}
    assert names == {
        "check_toolkits",
        "check_build_toolkit",
        "check_toolkit_mismatch",
        "check_host_compiler",
        "check_gpu_arch",
        "check_arch_list",
        "check_deepspeed",
        "check_driver",
        "check_nccl",
    }


@pytest.fixture
def torch_sees_no_gpu(monkeypatch):
    """The machine as torch sees it, less its GPUs: on a GPU machine the GPUs torch sees win over a fake
    nvidia-smi's, as they should."""
    seen = torch_facts.from_torch()
    monkeypatch.setattr(machine, "from_torch", lambda: dataclasses.replace(seen, gpus=()))


@pytest.mark.usefixtures("torch_sees_no_gpu")
def test_deepspeed_build_for_this_machines_gpus(cli_here, tmp_path):
    # through the same `main` here, as the --wheel variant below; `env` runs in a real process above
    nvidia_smi(tmp_path / "bin", gpus=[("NVIDIA A100-SXM4-80GB", "8.0"), ("NVIDIA GeForce RTX 3090", "8.6")])
    (tmp_path / "root/usr/include").mkdir(parents=True)
    (tmp_path / "root/usr/include/libaio.h").write_text("/* libaio */\n")
    path = f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"
    result = cli_here("env", "--deepspeed-build", "--root", str(tmp_path / "root"), env={"PATH": path})
    assert result.returncode == 0, result.stderr
    jobs = os.cpu_count()
    assert (
        f'TORCH_CUDA_ARCH_LIST="8.0;8.6" DS_BUILD_CPU_ADAM=1 DS_BUILD_UTILS=1 DS_BUILD_AIO=1 MAX_JOBS={jobs} \\'
        in result.stdout.splitlines()
    )


@pytest.mark.usefixtures("torch_sees_no_gpu")
def test_deepspeed_wheel_without_libaio(tmp_path, monkeypatch, capsys):
    from torchdoctor.cli import main

    nvidia_smi(tmp_path / "bin", gpus=[("NVIDIA A100-SXM4-80GB", "8.0"), ("NVIDIA GeForce RTX 3090", "8.6")])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert main(["env", "--deepspeed-build", "--wheel", "--json", "--root", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    jobs = os.cpu_count()
    assert data["arch_list"] == "8.0;8.6" and data["libaio"] is None
    assert f"python setup.py build_ext -j{jobs} bdist_wheel" in data["command"]
    assert "DS_BUILD_AIO" not in data["command"]
    assert any("sudo apt install libaio-dev" in note for note in data["notes"])


def test_bad_env_flags_are_one_line_and_exit_2(cli, cli_here, tmp_path):
    # the first refusal in a real process, the other through the same `main` here (nothing differs but words)
    for run, args, said in [
        (cli, ["env", "--wheel"], "--wheel only goes with --deepspeed-build"),
        (cli_here, ["env", "--root", str(tmp_path / "nowhere")], "nowhere: does not exist"),
    ]:
        result = run(*args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("torchdoctor: error:") and said in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_bad_arch_value_is_named(capsys):
    from torchdoctor.cli import main

    assert main(["env", "--deepspeed-build", "--arch", "8.0;sm_86"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "torchdoctor: error: --arch '8.0;sm_86': TORCH_CUDA_ARCH_LIST entry 'sm_86' is not a compute "
        "capability like '8.6' or '9.0+PTX', nor a name such as Ampere\n"
    )


def test_torch_facts_of_the_installed_torch():
    from torchdoctor.env.torch_facts import from_torch

    facts = from_torch()
    assert (facts.version, facts.cuda) == (torch.__version__, torch.version.cuda)
    if torch.version.cuda is None:
        assert (facts.arch_list, facts.gpus, facts.nccl, facts.build) == ((), (), None, "CPU")
    else:
        assert facts.arch_list == tuple(torch.cuda.get_arch_list())
        assert len(facts.gpus) == (torch.cuda.device_count() if torch.cuda.is_available() else 0)


def test_empty_or_sloppy_arch_lists(cli, cli_here, tmp_path):
    # one refusal of --arch in a real process, the others and the parsed list through the same `main` here
    for args, said in [
        (["--deepspeed-build", "--arch", ""], "--arch '': no compute capability in it"),
        (["--deepspeed-build", "--arch", " ; "], "--arch ' ; ': no compute capability in it"),
        (["--arch", ""], "--arch only goes with --deepspeed-build"),
        (
            ["--deepspeed-build", "--arch", "8.0;;9.1x"],
            "--arch '8.0;;9.1x': TORCH_CUDA_ARCH_LIST entry '9.1x'",
        ),
    ]:
        result = (cli if args[-1] == "" and args[0] == "--deepspeed-build" else cli_here)(
            "env", "--root", str(tmp_path), *args
        )
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, (args, result)
        assert len(lines) == 1 and lines[0].startswith(f"torchdoctor: error: {said}"), lines
    # what is printed is the parsed list: empty entries dropped, names expanded
    result = cli_here("env", "--deepspeed-build", "--json", "--root", str(tmp_path), "--arch", "8.0;;Hopper ")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["arch_list"] == "8.0;9.0+PTX" and 'TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX" ' in data["command"]


def test_env_under_an_environment_that_breaks_import_torch(cli, tmp_path):
    result = cli(
        "env", "--json", "--root", str(tmp_path), env={"TORCH_DISTRIBUTED_DEBUG": "ALL"}, timeout=180
    )
    assert result.returncode == 1 and result.stderr == "", result.stderr[-2000:]
    findings = json.loads(result.stdout)["findings"]
    assert findings[0]["id"] == "sys.torch" and "TORCH_DISTRIBUTED_DEBUG='ALL'" in findings[0]["summary"]
    ids = [f["id"] for f in findings[1:]]
    assert ids[:3] == ["env.toolkits", "env.build_toolkit", "env.toolkit_mismatch"], ids
    assert not any("crashed" in f["summary"] for f in findings)
