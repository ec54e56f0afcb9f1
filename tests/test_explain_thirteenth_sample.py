"""The knowledge the thirteenth sample by symptom (corpus files 467-490, train half) asked for, each anchored on the
message its source prints: a save that ran out of disk (CPython's ENOSPC / EDQUOT, torch.save's zip writer in
caffe2/serialize/inline_container.cc), an optimizer state saved for other parameter groups
(torch/optim/optimizer.py load_state_dict), pip / uv finding no torch build for the Python, platform or index
(pip's resolver, uv's), xformers built without CUDA (xformers/ops/fmha) and float16 weights meeting AMP's
GradScaler (torch/amp/grad_scaler.py). Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_enospc_is_a_full_disk_certain():
    found = explained("OSError: " + template("system:python-no-space-left") + ": '/ckpt/step_100/model.pt'\n")
    assert found.id == "log.disk_full" and found.details["confidence"] == "certain"
    assert "df -h" in found.fix
    found = explained("OSError: " + template("system:python-disk-quota-exceeded") + "\n")
    assert found.id == "log.disk_full" and found.details["confidence"] == "certain"


def test_torch_saves_writer_failing_is_a_full_disk_only_likely():
    # 486.txt (Sachini/ronin#51): torch.save could not create the checkpoint file; the disk had no space left
    found = lead("486.txt")
    assert found.id == "log.disk_full" and found.details["confidence"] == "likely"
    assert "checkpoint_0.pt" in found.summary and "space" in found.fix
    assert found.details["alternatives"] == ["log.checkpoint_path"]
    # the writer's short write, as inline_container.cc prints it inside torch.save's RuntimeError
    line = (
        "RuntimeError: [enforce fail at inline_container.cc:471] . "
        + template("torch_native:pytorchstreamwriter-failed-writing-file", "data/3")
        + "\n"
    )
    found = explained(line)
    assert found.id == "log.disk_full" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.concurrent_checkpoint_write"]
    line = (
        "RuntimeError: [enforce fail at inline_container.cc:319] . unexpected pos 4731266176 vs 4731266076\n"
    )
    assert explained(line).id == "log.disk_full"


def test_a_torn_archive_read_back_or_another_unopened_file_is_not_a_full_disk():
    found = explained(
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory\n"
    )
    assert found.id == "log.concurrent_checkpoint_write"
    assert explained("Warning: the file cannot be opened.\n").id != "log.disk_full"


def test_optimizer_state_for_other_parameter_groups_is_only_likely_naming_another_model():
    # 474.txt (STVIR/pysot#92): from epoch 10 the backbone joins the optimizer, so a later checkpoint has more groups
    found = lead("474.txt")
    assert found.id == "log.optimizer_group_mismatch" and found.details["confidence"] == "likely"
    assert "pretrained" in found.fix and "--arch" in found.fix
    assert found.details["alternatives"] == ["log.model_checkpoint_mismatch"]
    # torch's other wording, a count of groups that differs
    line = "ValueError: " + template("torch_native:optimizer-load-state-dict-group-count") + "\n"
    found = explained(line)
    assert (
        found.id == "log.optimizer_group_mismatch" and "different number of parameter groups" in found.summary
    )


def test_an_optimizer_built_wrong_is_not_a_saved_state_that_does_not_fit():
    found = explained("ValueError: some parameters appear in more than one parameter group\n")
    assert found.id != "log.optimizer_group_mismatch"


def test_no_torch_build_for_the_index_python_or_platform():
    # 476.txt (pytorch/pytorch#86630): a +cu111 build asked of a page of links given as an index
    found = lead("476.txt")
    assert found.id == "log.no_matching_wheel" and found.details["confidence"] == "certain"
    assert "--index-url https://download.pytorch.org/whl/cu111" in found.fix
    # 478.txt (astral-sh/uv#10236): no Python 3.13 wheels of torch 2.5.1 for Windows
    found = lead("478.txt")
    assert (
        found.id == "log.no_matching_wheel" and "Python 3.13" in found.summary and "Python 3.12" in found.fix
    )
    # pip's own words for torch, and uv's with the package it names
    line = template("third_party:pip-could-not-find-version", "torch==2.5.1", "none") + "\n"
    assert explained(line).id == "log.no_matching_wheel"
    line = (
        "  ╰─▶ Because torch==2.5.1 @ registry+https://pypi.org/simple can't be installed because it doesn't have "
        "a source distribution or wheel for the current platform\n"
    )
    found = explained(line)
    assert found.id == "log.no_matching_wheel" and "torch==2.5.1" in found.summary


def test_another_package_pip_cannot_find_is_not_a_torch_build():
    assert explained("ERROR: No matching distribution found for numpy==9.9\n").id != "log.no_matching_wheel"


def test_xformers_built_without_cuda_is_an_extension_that_does_not_load_certain():
    # 484.txt (TheLastBen/fast-stable-diffusion#1935): every memory-efficient attention operator refused
    found = lead("484.txt")
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "xformers" in found.summary and "pip install -U xformers" in found.fix


def test_xformers_refusing_a_dtype_or_a_gpu_is_not_a_build_without_cuda():
    line = (
        "NotImplementedError: No operator found for `memory_efficient_attention_backward` with inputs: query : "
        "shape=(16, 1824, 1, 80) (torch.float32) `flshattB` is not supported because: dtype=torch.float32 "
        "(supported: {torch.bfloat16, torch.float16}) `cutlassB` is not supported because: Sm86 does not have "
        "enough shared-memory to run this kernel\n"
    )
    assert explained(line).id != "log.extension_import"


def test_float16_weights_under_the_gradscaler_are_only_likely_naming_a_library_version():
    # 489.txt (yk7333/d3po#6): the U-Net moved to fp16 while training with fp16 AMP, quoted in prose
    found = lead("489.txt")
    assert found.id == "log.fp16_weights_gradscaler" and found.details["confidence"] == "likely"
    assert "float32" in found.fix and "GradScaler" in found.fix
    assert found.details["alternatives"] == ["log.dependency_version"]
    # as grad_scaler.py raises it
    line = "ValueError: " + template("torch_native:amp-attempting-to-unscale-fp16-gradients") + "\n"
    assert explained(line).id == "log.fp16_weights_gradscaler"


def test_the_gradscalers_other_refusals_are_not_float16_weights():
    line = "RuntimeError: unscale_() has already been called on this optimizer since the last update().\n"
    assert explained(line).id != "log.fp16_weights_gradscaler"
