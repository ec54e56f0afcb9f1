"""accelerate's GPU launch on a machine without GPUs: every process trains alone, and accelerate says nothing.

`accelerate launch` with a MULTI_GPU config (or ``--multi_gpu``) starts one process per GPU through torchrun;
in each, accelerate finds no GPU and falls back to ``DistributedType.NO`` with one process: no data split, no
gradient sync, exit status 0. A MULTI_CPU config (or ``--cpu --num_processes 2``) starts one process unless
mpirun is configured. `torchdoctor check` reads accelerate's config file and says so; torchdoctor's helpers
inside such a process say it too.
"""

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchdoctor.cli import main
from torchdoctor.distributed.checks import accelerate_config_file, check_accelerate_config

config_args = pytest.importorskip("accelerate.commands.config.config_args")
SRC = str(Path(__file__).resolve().parents[1] / "src")


def write_config(hf_home, **keys):
    """accelerate's default config, written by accelerate's own class, as `accelerate config` writes it."""
    path = accelerate_config_file({"HF_HOME": str(hf_home)})
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = dict(compute_environment="LOCAL_MACHINE", mixed_precision="no", use_cpu=False, debug=False)
    settings.update(downcast_bf16="no", gpu_ids="all", **keys)
    config_args.ClusterConfig(**settings).to_yaml_file(str(path))
    return path


def test_a_multi_gpu_config_on_a_machine_without_gpus_fails_with_the_cpu_fix(tmp_path):
    path = write_config(tmp_path, distributed_type="MULTI_GPU", num_processes=2)
    found = check_accelerate_config({"HF_HOME": str(tmp_path)}, gpus=0)
    assert found.status == "fail" and "\n" not in found.summary
    assert found.summary.startswith(
        f"accelerate's config {path} says distributed_type: MULTI_GPU with num_processes: 2, and torch sees no "
        "GPU here: `accelerate launch` starts 2 processes that each train alone"
    )
    assert found.fix.startswith(
        "on CPU: ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes 2"
    )
    assert found.fix.endswith("or run on the GPUs the config expects")
    assert check_accelerate_config({"HF_HOME": str(tmp_path)}, gpus=2).status == "ok"


def test_a_multi_cpu_config_without_mpirun_is_one_process(tmp_path):
    write_config(tmp_path, distributed_type="MULTI_CPU", num_processes=2)
    found = check_accelerate_config({"HF_HOME": str(tmp_path)}, gpus=0)
    assert found.status == "fail" and "`accelerate launch` starts one process" in found.summary
    write_config(
        tmp_path, distributed_type="MULTI_CPU", num_processes=2, mpirun_config={"mpirun_hostfile": "hosts"}
    )
    assert check_accelerate_config({"HF_HOME": str(tmp_path)}, gpus=0).status == "ok"


def test_no_config_says_nothing_and_an_unreadable_one_is_named(tmp_path):
    assert check_accelerate_config({"HF_HOME": str(tmp_path)}, gpus=0) is None
    path = accelerate_config_file({"HF_HOME": str(tmp_path)})
    path.parent.mkdir(parents=True)
    path.write_text("distributed_type: [MULTI_GPU\n")
    found = check_accelerate_config({"HF_HOME": str(tmp_path)}, gpus=0)
    assert found.status == "warn" and found.summary.startswith(f"accelerate's config {path} cannot be read")


def test_fewer_gpus_than_processes_is_the_duplicate_gpu_refusal(tmp_path):
    # accelerate's PartialState.set_device: process i on GPU i % device_count(); NCCL then refuses two ranks
    # on one GPU (tests/fixtures/gpu/duplicate-gpu.txt, recorded on an H200)
    hf_home = tmp_path
    write_config(hf_home, distributed_type="MULTI_GPU", num_processes=4)
    found = check_accelerate_config({"HF_HOME": str(hf_home)}, gpus=1)
    assert found.status == "fail" and "accelerate puts process i on GPU i % 1" in found.summary
    assert "Duplicate GPU detected" in found.summary and "--num_processes 1" in found.fix
    assert check_accelerate_config({"HF_HOME": str(hf_home)}, gpus=4).status == "ok"
    assert check_accelerate_config({"HF_HOME": str(hf_home)}, gpus=8).status == "ok"


def test_check_reads_the_config_where_accelerate_does(tmp_path, monkeypatch, capsys):
    import torch

    gpus = torch.cuda.device_count()
    write_config(
        tmp_path / "cache" / "huggingface", distributed_type="MULTI_GPU", num_processes=max(4, gpus + 1)
    )
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["check", "--only", "dist.accelerate_config"]) == 1  # no GPU here, or fewer than asked for
    said = "starts 4 processes that each train alone" if gpus == 0 else "processes share a GPU"
    assert said in capsys.readouterr().out


# A tiny script under the real `accelerate launch` (its default config: MULTI_GPU, 2 processes), logging
# through torchdoctor.get_logger.
TINY = textwrap.dedent(
    """
    import logging
    import torchdoctor
    from accelerate import Accelerator

    logging.basicConfig(format="%(message)s")
    accelerator = Accelerator()
    logger = torchdoctor.get_logger("train", log_level="INFO")
    logger.info("%s of %d", accelerator.distributed_type, accelerator.num_processes, main_process_only=False)
    """
)


@pytest.mark.parametrize("use_cpu", [False, True])
def test_each_rank_accelerate_left_alone_says_so_and_the_fix_makes_one_job(tmp_path, use_cpu):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: accelerate's MULTI_GPU launch works here")
    write_config(tmp_path, distributed_type="MULTI_GPU", num_processes=2)
    (tmp_path / "tiny.py").write_text(TINY)
    env = dict(os.environ, HF_HOME=str(tmp_path), **({"ACCELERATE_USE_CPU": "1"} if use_cpu else {}))
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])  # these sources, from tmp_path too
    launcher = os.path.join(os.path.dirname(sys.executable), "accelerate")
    result = subprocess.run(
        [launcher, "launch", "--main_process_port", "0", "tiny.py"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if line.startswith("torchdoctor: ")]
    if use_cpu:  # the fix: one gloo job of two ranks, and nothing to say
        assert said == [], result.stderr
        assert (
            "[RANK 0] DistributedType.MULTI_CPU of 2" in result.stderr
            and "[RANK 1] DistributedType.MULTI_CPU of 2" in result.stderr
        )
        return
    assert (
        "[RANK 0] DistributedType.NO of 1" in result.stderr
        and "[RANK 1] DistributedType.NO of 1" in result.stderr
    )
    assert sorted(line.split(" for its launcher")[0] for line in said) == [
        "torchdoctor: this process is rank 0 of 2",
        "torchdoctor: this process is rank 1 of 2",
    ], result.stderr
    assert "but accelerate set it up alone (DistributedType.NO, num_processes 1)" in said[0]
    assert "ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes 2" in said[0]


def test_a_process_accelerate_has_not_set_up_says_nothing():
    from torchdoctor.distributed.ranks import say_if_alone_under_accelerate

    stream = io.StringIO()
    say_if_alone_under_accelerate(stream)  # no accelerate state in this process
    assert stream.getvalue() == ""
