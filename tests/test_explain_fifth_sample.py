"""The knowledge the fifth sample by symptom (corpus files 279-297, train half) asked for, each anchored on a
message its source prints: a launcher or a package missing from the environment the job runs in (every shell's
"not found", CPython's "No module named"), init_process_group's store-based barrier timing out, torch's "No CUDA
runtime is found" while an extension builds, a scheduler given DeepSpeed's optimizer wrapper, pybind11's
"incompatible function arguments" of an extension from another release; and the rule for certainty: a message
printed beside the error that stopped the run, or one of two known causes that no exception tells apart, is
only likely.

Each input is a real log from the train half of the corpus (tests/fixtures/corpus/train, its SOURCES.md names the
thread and what it established), or a message template quoted from the catalog (the id is named beside it).
"""

from __future__ import annotations

import io

import pytest
from explaining import CORPUS, explained, lead, template

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_a_package_the_job_cannot_import_names_the_launchers_environment():
    # 280.txt (pytorch/pytorch#92132): torchrun came from a system install, not the virtual env
    found = lead("280.txt")
    assert found.id == "log.broken_install" and found.details["confidence"] == "likely"
    assert "'datasets'" in found.summary
    assert "virtual env" in found.fix and "python -m torch.distributed.run" in found.fix
    assert "pip install datasets" in found.fix
    text = template("system:python-no-module-named", "deepspeed")
    found = explained(f"Traceback (most recent call last):\n{text}\n")
    assert found.id == "log.broken_install" and "pip install deepspeed" in found.fix
    # a submodule missing means the package itself was found (Python names the first part that is not there):
    # its release, or a broken or shadowed install, lacks it (kinds/versions.py, the generic rules' round)
    text = template("system:python-no-module-named", "deepspeed.launcher")
    found = explained(f"Traceback (most recent call last):\n{text}\n")
    assert found.id == "log.dependency_version" and found.details["alternatives"] == ["log.broken_install"]
    # torch itself missing is the isolated build's (or an unknown error), not this reading
    assert explained("ModuleNotFoundError: No module named 'torch'\n").id != "log.broken_install"


def test_a_launcher_not_found_in_any_shell():
    # 282.txt (awslabs/awsome-distributed-ai#245): the job script did not activate the conda env
    found = lead("282.txt")
    assert found.id == "log.broken_install" and found.details["confidence"] == "certain"
    assert "torchrun" in found.summary and "conda env" in found.fix
    for text, command in (
        (
            template("system:dash-command-not-found", "1", "/home/u/miniconda/envs/ct/bin/torchrun"),
            "torchrun",
        ),
        (template("system:zsh-command-not-found", "deepspeed"), "deepspeed"),
        (template("system:ubuntu-command-not-found", "accelerate"), "accelerate"),
    ):
        found = explained(text + "\n")
        assert found.id == "log.broken_install" and found.summary.startswith(command), text
    # a script of the user's that is not found is not a launcher missing
    assert explained("sh: 1: ./prepare_data.sh: not found\n").id != "log.broken_install"


def test_store_based_barrier_timeout_is_a_rank_late_or_missing():
    # 286.txt (SpongebBob/Finetune-ChatGLM2-6B#6): a big dataset prepared before init outlasted the timeout;
    # the user retyped the message in lower case
    found = lead("286.txt")
    assert found.id == "log.collective_timeout" and found.details["confidence"] == "likely"
    assert "timeout=timedelta" in found.fix and "ddp_timeout" in found.fix
    text = template(
        "torch:timed-out-initializing-process-group-in",
        "1",
        "store_based_barrier_key:1",
        "2",
        "1",
        "0:30:00",
        "None",
    )
    found = explained(f"RuntimeError: {text}\n")
    assert found.id == "log.collective_timeout"
    assert "1 of 2 processes arrived" in found.summary and "0:30:00" in found.summary
    assert "store was reachable" in found.summary  # not an endpoint the ranks cannot reach


def test_no_cuda_runtime_while_an_extension_builds():
    # 289.txt (junhyung-SPALab/D-Align#1): the container was created without GPU access
    found = lead("289.txt")
    assert found.id == "log.cuda_unavailable" and found.details["confidence"] == "likely"
    assert "nvidia-docker" in found.fix and "--gpus all" in found.fix
    # the setup.py's own error that stopped the build is named beside it
    assert found.details["initiating_error"] == "NotImplementedError: Cuda is not availabel"
    text = template("torch:no-cuda-runtime-is-found-using").replace("%s", "/usr/local/cuda")
    assert explained(text + "\n").id == "log.cuda_unavailable"


def test_a_scheduler_given_deepspeeds_optimizer_wrapper():
    # 293.txt (deepspeedai/DeepSpeed#118): DeepSpeed's OneCycle refused its own ZeRO fp16 optimizer
    found = lead("293.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "FP16_DeepSpeedZeroOptimizer" in found.summary
    assert "pip install -U deepspeed" in found.fix and "scheduler" in found.fix
    newer = template("deepspeed:is-not-subclass-of-torch-optim", "DeepSpeedZeroOptimizer_Stage3")
    assert explained(f"TypeError: {newer}\n").id == "log.library_version_bug"
    # another library's wrapper handed to torch's scheduler: the same reading, a fix without DeepSpeed
    other = template("torch_native:lr-scheduler-is-not-an-optimizer", "AcceleratedOptimizer")
    found = explained(f"TypeError: {other}\n")
    assert found.id == "log.library_version_bug" and "deepspeed" not in found.fix.lower()
    # the 8-bit refusal the same kind reads keeps its own fix and its other reading
    eight = template("third_party:accelerate-8bit-on-multiple-devices")
    found = explained(f"ValueError: {eight}\n")
    assert "0.20.0" in found.fix and found.details["alternatives"] == ["log.device_map_distributed"]


def test_a_compiled_function_called_with_arguments_of_another_release():
    # 296.txt (Jiaxin-Ye/DepMamba#8): causal-conv1d and mamba-ssm from releases that disagree
    found = lead("296.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "causal_conv1d_fwd()" in found.summary and "version" in found.fix
    text = template("third_party:pybind11-incompatible-function-arguments", "flash_attn_2_cuda.fwd")
    assert explained(f"TypeError: {text}\n").id == "log.dependency_version"


def test_a_message_printed_beside_the_error_that_stopped_the_run_is_only_likely():
    # 128.txt (a no-kernel-image warning, certain alone) above 201.txt's AttributeError in the user's model:
    # the warning does not say it stopped the run, and the error that did is named beside it
    alone = lead("128.txt")
    assert alone.id == "log.no_kernel_image" and alone.details["confidence"] == "certain"
    text = (CORPUS / "128.txt").read_text() + (CORPUS / "201.txt").read_text()
    found = explained(text)
    assert found.id == "log.no_kernel_image" and found.details["confidence"] == "likely"
    assert found.details["initiating_error"] == "AttributeError: 'GCN' object has no attribute 'device2'"
    assert "the run stopped on AttributeError" in found.summary and "read it first" in found.fix
    # the message that is the error itself stays certain (fixture-like: the exception line is the anchor)
    assert lead("296.txt").details.get("initiating_error") is None


def test_two_known_causes_without_an_exception_are_both_likely():
    # 068.txt (ninja missing, quoted with "> ": no exception line is read) and 101.txt (NVML driver/library
    # mismatch): each is certain alone, together no exception says which one stopped the run
    assert lead("068.txt").details["confidence"] == "certain"
    assert lead("101.txt").details["confidence"] == "certain"

    text = (CORPUS / "068.txt").read_text() + (CORPUS / "101.txt").read_text()
    found = [f for f in explain(["-"], stdin=io.BytesIO(text.encode())) if f.status == "fail"]
    assert [f.id for f in found] == ["log.cuda_build", "log.driver_mismatch"]
    assert all(f.details["confidence"] == "likely" for f in found)
    assert found[0].details["alternatives"] == ["log.driver_mismatch"]
    assert found[1].details["alternatives"] == ["log.cuda_build"]
