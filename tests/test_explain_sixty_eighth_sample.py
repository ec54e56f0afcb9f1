"""The sixty-eighth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3217-3266)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# warmup_scheduler/scheduler.py (ildoonet/pytorch-gradual-warmup-lr before #2): GradualWarmupScheduler.get_lr
def test_a_warmup_scheduler_asking_reduce_on_plateau_for_get_lr_reads_as_the_warmup_release():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "fit.py", line 88, in <module>\n'
        "    warmup.step()\n"
        '  File "/opt/env/lib/python3.7/site-packages/warmup_scheduler/scheduler.py", line 30, in get_lr\n'
        "    return self.after_scheduler.get_lr()\n"
        "AttributeError: 'ReduceLROnPlateau' object has no attribute 'get_lr'\n",
        "library_version_bug",
        "likely",
    )
    assert "warmup_scheduler" in found.summary and "metrics=" in found.fix


def test_reduce_on_plateau_without_another_member_is_not_the_warmup_release():
    found = explained("AttributeError: 'ReduceLROnPlateau' object has no attribute 'get_last_lr'\n")
    assert "GradualWarmupScheduler" not in found.summary


# wandb/wandb_torch.py TorchGraph.hook_torch_modules: a model already marked _wandb_watch_called
def test_wandb_watching_a_model_twice_reads_as_the_code_that_watches_at_every_fit():
    found = reads(
        '  File "/opt/env/lib/python3.10/site-packages/wandb/wandb_torch.py", line 301, in hook_torch_modules\n'
        "    raise ValueError(\n"
        "ValueError: You can only call `wandb.watch` once per model.  Pass a new instance of the model if you "
        "need to call wandb.watch again in your code.\n",
        "library_version_bug",
        "likely",
    )
    assert "log_graph=False" in found.fix


def test_another_once_only_wandb_call_is_not_a_model_watched_twice():
    found = explained("ValueError: You can only call `wandb.login` once per session\n")
    assert found.id != "log.library_version_bug"


# luxonis_train/callbacks/ema.py ModelEma.update (v0.3.4-beta to v0.4.4-beta): zip(..., strict=True)
def test_luxonis_trains_ema_zip_reads_as_the_ema_release_bug():
    found = reads(
        '  File "/opt/env/lib/python3.11/site-packages/luxonis_train/callbacks/ema.py", line 71, in update\n'
        "    self.state_dict_ema.values(),\n"
        "ValueError: zip() argument 2 is shorter than argument 1\n",
        "library_version_bug",
        "likely",
    )
    assert "luxonis-train" in found.fix


def test_another_strict_zip_is_not_luxonis_trains_ema():
    found = explained(
        '  File "train.py", line 12, in fit\n'
        "    for a, b in zip(self.weights, other.weights, strict=True):\n"
        "ValueError: zip() argument 2 is longer than argument 1\n"
    )
    assert found.id != "log.library_version_bug"


# diffusers' convert_from_ckpt.py took checkpoint_path_or_dict from #4653; the script passed checkpoint_path
def test_the_conversion_scripts_old_keyword_reads_as_the_script_release():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "scripts/convert_original_stable_diffusion_to_diffusers.py", line 154, in <module>\n'
        "    pipe = download_from_original_stable_diffusion_ckpt(\n"
        "TypeError: download_from_original_stable_diffusion_ckpt() got an unexpected keyword argument "
        "'checkpoint_path'\n",
        "library_version_bug",
        "likely",
    )
    assert "checkpoint_path_or_dict" in found.fix
    assert "log.dependency_version" in found.details["alternatives"]


def test_another_keyword_of_the_conversion_function_is_not_the_renamed_one():
    found = explained(
        "TypeError: download_from_original_stable_diffusion_ckpt() got an unexpected keyword argument "
        "'from_safetensors'\n"
    )
    assert "checkpoint_path_or_dict" not in found.fix


# sklearn/metrics/_classification.py classification_report: target_names given without labels
def test_a_report_with_more_names_than_classes_reads_as_classes_missing():
    found = reads(
        '  File "/opt/env/lib/python3.9/site-packages/sklearn/metrics/_classification.py", line 2110, in '
        "classification_report\n"
        "    raise ValueError(\n"
        "ValueError: Number of classes, 4, does not match size of target_names, 6. Try specifying the labels "
        "parameter\n",
        "report_classes_missing",
        "likely",
    )
    assert "labels=" in found.fix and "log.library_version_bug" in found.details["alternatives"]


def test_the_reports_warning_with_labels_given_is_not_classes_missing():
    found = explained("UserWarning: labels size, 4, does not match size of target_names, 6\n")
    assert found.id != "log.report_classes_missing"
