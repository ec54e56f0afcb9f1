"""`torchdoctor report`: what goes in, and the secrets that never do."""

import functools
import importlib.metadata
import json
import os
import stat
import subprocess
import sys

import pytest
import torch

from torchdoctor.findings import Finding
from torchdoctor.report import (
    _dotted,
    package_versions,
    relevant_environment,
    render_report,
    scrub,
    versions,
)
from torchdoctor.runner import run_command

SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
    "HF_TOKEN": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567890",
    "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "NCCL_IB_AUTH_TOKEN": "nccl-s3cr3t-value",  # an allowed prefix, a secret name: value withheld
    "TORCH_API_KEY": "torch-s3cr3t-value",
    "PYTORCH_INDEX_URL": "https://alice:hunter2@mirror.example.com/simple",  # credentials inside a URL
    "TORCHDOCTOR_NOTE": "pasted hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa0987654321 by mistake",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "MY_APP_PASSWORD": "letmein-123",
}
NEVER_SHOWN = [
    "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
    "hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567890",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "nccl-s3cr3t-value",
    "torch-s3cr3t-value",
    "hunter2",
    "hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa0987654321",
    "AKIAIOSFODNN7EXAMPLE",
    "letmein-123",
    "AWS_SECRET_ACCESS_KEY",
    "HF_TOKEN",
    "MY_APP_PASSWORD",
]


def test_only_allowlisted_variables_and_no_secret_values():
    environ = {
        **SECRETS,
        "NCCL_SOCKET_IFNAME": "eth0",
        "MASTER_PORT": "29500",
        "HOME": "/home/alice",
        "USER": "a",
    }
    shown = relevant_environment(environ)
    assert shown == {
        "MASTER_PORT": "29500",
        "NCCL_IB_AUTH_TOKEN": "<redacted>",
        "NCCL_SOCKET_IFNAME": "eth0",
        "PYTORCH_INDEX_URL": "https://alice:hunter2@mirror.example.com/simple",  # scrubbed when rendered
        "TORCHDOCTOR_NOTE": SECRETS["TORCHDOCTOR_NOTE"],
        "TORCH_API_KEY": "<redacted>",
    }
    text = render_report({}, [], {}, [], shown, home="/home/alice")
    for secret in NEVER_SHOWN:
        assert secret not in text, secret
    assert "PYTORCH_INDEX_URL=https://<redacted>@mirror.example.com/simple" in text
    assert "TORCHDOCTOR_NOTE=pasted <redacted> by mistake" in text


def test_scrub_hides_the_home_directory_but_not_longer_names():
    text = scrub("/home/alice/.venv/bin:/home/alice:/home/alicia/bin", home="/home/alice")
    assert text == "~/.venv/bin:~:/home/alicia/bin"


def test_packages_come_from_metadata_with_not_installed_and_cuda_wheels():
    installed = [
        ("Flash_Attn", "2.6.3"),
        ("torch", "2.7.0"),
        ("nvidia-nccl-cu12", "2.26.2"),
        ("requests", "2"),
    ]
    found = package_versions(["torch", "flash-attn", "deepspeed"], installed)
    assert found == {"torch": "2.7.0", "flash-attn": "2.6.3", "deepspeed": None, "nvidia-nccl-cu12": "2.26.2"}
    table = render_report({}, [], found, [], {})
    assert "| deepspeed | not installed |" in table and "| flash-attn | 2.6.3 |" in table


def test_package_versions_do_not_import_the_packages():
    code = (
        "import sys; from torchdoctor.report import package_versions; found = package_versions(); "
        "print(found['transformers'], 'transformers' in sys.modules, 'accelerate' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [importlib.metadata.version("transformers"), "False", "False"], done.stderr


def test_versions_read_the_driver_and_nvcc_from_real_commands(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (
        ("nvidia-smi", "#!/bin/sh\necho 550.54.14\necho 550.54.14\n"),
        ("nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n"),
    ):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    found = versions(functools.partial(run_command, env={"PATH": str(bin_dir)}))
    assert found["NVIDIA driver"] == "550.54.14"
    assert found["nvcc (CUDA toolkit on PATH)"] == "12.4"
    assert found["torch"] == torch.__version__
    assert found["CUDA (torch built with)"] == (torch.version.cuda or "none (CPU build)")
    nothing = versions(functools.partial(run_command, env={"PATH": str(tmp_path / "empty")}))
    assert (
        nothing["NVIDIA driver"] == "no nvidia-smi answer"
        and nothing["nvcc (CUDA toolkit on PATH)"] == "not on PATH"
    )


def test_findings_and_their_fixes_are_in_the_report():
    findings = [
        Finding("sys.python", "ok", "Python 3.11.7"),
        Finding(
            "env.toolkit_mismatch",
            "fail",
            "nvcc 11.0 | torch 12.1",
            {},
            "export PATH=/usr/local/cuda-12.1/bin:$PATH",
        ),
    ]
    text = render_report(
        {"torch": "2.7.0"}, ["0: NVIDIA H100 (compute capability 9.0, 79.1 GiB)"], {}, findings, {}
    )
    assert "| torch | 2.7.0 |" in text
    assert "- 0: NVIDIA H100 (compute capability 9.0, 79.1 GiB)" in text
    assert "| ✗ | `env.toolkit_mismatch` | nvcc 11.0 \\| torch 12.1 |" in text
    assert "export PATH=/usr/local/cuda-12.1/bin:$PATH" in text


def test_cli_report_to_file_has_everything_and_no_secret(cli, tmp_path):
    out = tmp_path / "issue.md"
    env = {**SECRETS, "NCCL_SOCKET_IFNAME": "eth0"}
    result = cli("report", "-o", str(out), "--skip", "net", "--skip", "env", env=env, timeout=120)
    text = out.read_text()
    assert result.stdout == "" and result.stderr.startswith(f"wrote {out} (")
    for secret in NEVER_SHOWN:
        assert secret not in text, secret
    assert "NCCL_SOCKET_IFNAME=eth0" in text and "NCCL_IB_AUTH_TOKEN=<redacted>" in text
    assert f"| torch | {torch.__version__} |" in text
    assert f"| transformers | {importlib.metadata.version('transformers')} |" in text
    assert "`sys.python`" in text and "`net." not in text and "`env." not in text
    assert os.path.expanduser("~") + "/" not in text
    assert result.returncode == (1 if "| ✗ |" in text else 0)


def test_cli_report_bad_input_exits_2_with_one_line(cli, cli_here, tmp_path):
    # the first refusal in a real process, the second through the same `main` in this one (a process each:
    # up to 2 s of CPU, and nothing a refusal says differs between them)
    for run, args, words in (
        (cli, ["--skip", "bogus"], "--skip bogus: unknown area; choose from sys"),
        (cli_here, ["-o", str(tmp_path / "no-dir" / "r.md")], "no-dir does not exist"),
    ):
        result = run("report", *args, timeout=60)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and words in lines[0], result.stderr


def test_cudnn_version_numbers_of_both_encodings():
    assert _dotted(90100) == "9.1.0"  # cuDNN 9: major * 10000 + minor * 100 + patch
    assert _dotted(8902) == "8.9.2"  # cuDNN 8: major * 1000 + minor * 100 + patch


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_cli_report_output_that_cannot_be_written_fails_before_the_checks(cli, cli_here, tmp_path):
    # the pipe in a real process; the other refusals through the same `main` here (`cli_here`)
    pipe = tmp_path / "pipe.md"
    os.mkfifo(pipe)  # nothing reads it: writing would block forever, after every check had run
    result = cli("report", "-o", str(pipe), "--skip", "net", timeout=60)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and lines == [
        f"torchdoctor: error: -o {pipe}: a named pipe that nothing reads"
    ], result.stderr
    if os.path.exists("/proc/version"):  # cannot be written, not even by root
        result = cli_here("report", "-o", "/proc/version")
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert lines[0] == (
            "torchdoctor: error: -o /proc/version: /proc is the kernel's view of the processes, not a place for "
            "files; give a path on disk"
        ), lines
    # the probe leaves no empty file behind when the run stops for another reason
    fresh = tmp_path / "fresh.md"
    result = cli_here("report", "-o", str(fresh), "--skip", "bogus")
    assert result.returncode == 2 and "--skip bogus: unknown area" in result.stderr
    assert not fresh.exists()


def test_cli_report_json_has_the_same_facts_and_no_secret(cli_here, tmp_path, monkeypatch, capsys):
    # --json instead of markdown: through the same `main` in this process, as the report to a file above ran in
    # a real one (the environment's secrets are read from os.environ either way)
    out = tmp_path / "issue.json"
    env = {**SECRETS, "NCCL_SOCKET_IFNAME": "eth0"}
    result = cli_here(
        "report", "--json", "-o", str(out), "--skip", "net", "--skip", "env", env=env, timeout=120
    )
    text = out.read_text()
    for secret in NEVER_SHOWN:
        assert secret not in text, secret
    data = json.loads(text)
    assert set(data) == {"versions", "gpus", "packages", "status", "findings", "environment"}
    assert data["versions"]["torch"] == torch.__version__
    # packages are the installed metadata: PyPI's CUDA wheels say 2.13.0 there and 2.13.0+cu130 in __version__
    assert data["packages"]["torch"] == importlib.metadata.version("torch")
    assert data["environment"]["NCCL_SOCKET_IFNAME"] == "eth0"
    assert data["environment"]["NCCL_IB_AUTH_TOKEN"] == "<redacted>"
    ids = [f["id"] for f in data["findings"]]
    assert "sys.python" in ids and not any(i.startswith(("net.", "env.")) for i in ids)
    assert result.returncode == (1 if data["status"] == "fail" else 0)
    # to stdout: the same `main` in this process
    from torchdoctor.cli import main

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["report", "--json", "--skip", "net", "--skip", "env"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["versions"]["torch"] == torch.__version__
