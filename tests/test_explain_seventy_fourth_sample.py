"""The seventy-fourth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3517-3566)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str = "certain"):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# lightning/pytorch/callbacks/model_checkpoint.py ModelCheckpoint._save_topk_checkpoint: m = (f"`ModelCheckpoint(
# monitor={self.monitor!r})` could not find the monitored key in the returned metrics: {list(monitor_candidates)}."
# f" HINT: Did you call `log({self.monitor!r}, value)` in the `LightningModule`?"), raised once validation has run
def test_a_monitor_logged_under_another_prefix_is_named():
    found = reads(
        '  File "/usr/lib/python3.11/site-packages/lightning/pytorch/callbacks/model_checkpoint.py", line 382, in '
        "_save_topk_checkpoint\n"
        "    raise MisconfigurationException(m)\n"
        "lightning.fabric.utilities.exceptions.MisconfigurationException: `ModelCheckpoint(monitor='val/acc')` could "
        "not find the monitored key in the returned metrics: ['train/loss', 'acc', 'epoch', 'step']. HINT: Did you "
        "call `log('val/acc', value)` in the `LightningModule`?\n",
        "checkpoint_monitor_missing",
    )
    assert "'acc' was logged" in found.summary and "monitor" in found.fix


# the same message as a warning, before the validation loop has run (warning_cache.warn(m))
def test_no_validation_metric_at_all_says_validation_logged_nothing():
    found = reads(
        "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/callbacks/model_checkpoint.py:384: "
        "`ModelCheckpoint(monitor='val_loss')` could not find the monitored key in the returned metrics: "
        "['train_loss', 'epoch', 'step']. HINT: Did you call `log('val_loss', value)` in the `LightningModule`?\n",
        "checkpoint_monitor_missing",
    )
    assert "no validation metric was logged" in found.summary and "val_check_interval" in found.fix


# a metric logged with on_step=True and on_epoch=True is kept as <name>_step and <name>_epoch
def test_an_epoch_suffixed_metric_is_named_first():
    found = reads(
        "MisconfigurationException: `ModelCheckpoint(monitor='val_acc')` could not find the monitored key in the "
        "returned metrics: ['val_acc_step', 'val_acc_epoch', 'epoch', 'step']. HINT: Did you call `log('val_acc', "
        "value)` in the `LightningModule`?\n",
        "checkpoint_monitor_missing",
    )
    assert "'val_acc_epoch' was logged" in found.summary


# pytorch_lightning/callbacks/model_checkpoint.py _validate_monitor_key, the wording before 1.6
def test_the_older_wording_reads_the_same():
    reads(
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: ModelCheckpoint(monitor='val_loss') not "
        "found in the returned metrics: ['train_loss', 'epoch']. HINT: Did you call self.log('val_loss', value) in "
        "the LightningModule?\n",
        "checkpoint_monitor_missing",
    )


# lightning/pytorch/callbacks/early_stopping.py EarlyStopping._validate_condition_metric (strict: RuntimeError)
def test_early_stoppings_missing_metric_reads_the_same():
    found = reads(
        "RuntimeError: Early stopping conditioned on metric `val_loss` which is not available. Pass in or modify "
        "your `EarlyStopping` callback to use any of the following: `train_loss`, `epoch`\n",
        "checkpoint_monitor_missing",
    )
    assert found.summary.startswith("EarlyStopping watched the metric 'val_loss'")


@pytest.mark.parametrize(
    "line",
    (
        # ModelCheckpoint's verbose progress lines
        "Epoch 3, global step 120: 'val_loss' reached 0.52300 (best 0.52300), saving model to "
        "'/ckpt/epoch=3-step=120.ckpt' as top 1\n",
        "Epoch 0, global step 10: 'val_loss' was not in top 1\n",
        # EarlyStopping's progress line
        "Metric val_loss improved by 0.010 >= min_delta = 0.0. New best score: 0.500\n",
    ),
)
def test_a_callbacks_progress_line_is_not_a_missing_metric(line):
    assert explained(line).id != "log.checkpoint_monitor_missing"


def test_a_scheduler_without_monitor_stays_its_own_kind():
    found = explained(
        "lightning.fabric.utilities.exceptions.MisconfigurationException: `configure_optimizers` must include a "
        'monitor when a `ReduceLROnPlateau` scheduler is used. For example: {"optimizer": optimizer, '
        '"lr_scheduler": scheduler, "monitor": "metric_to_track"}\n'
    )
    assert found.id == "log.scheduler_monitor_missing", found.summary


# example.py load (LLaMA 1, copied by pyllama): checkpoints = sorted(Path(ckpt_dir).glob("*.pth")); assert
# world_size == len(checkpoints), f"Loading a checkpoint for MP={len(checkpoints)} but world size is {world_size}"
def test_llamas_zero_shards_is_a_checkpoint_path():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "example.py", line 119, in <module>\n'
        "    fire.Fire(main)\n"
        '  File "example.py", line 79, in load\n'
        "    assert world_size == len(\n"
        "AssertionError: Loading a checkpoint for MP=0 but world size is 1\n",
        "checkpoint_path",
    )
    assert ".pth" in found.fix and "DeepSpeed" not in found.fix


# llama/generation.py Llama.build (Llama 2): assert len(checkpoints) > 0, f"no checkpoint files found in {ckpt_dir}"
def test_llama_2s_no_checkpoint_files_names_the_folder():
    found = reads("AssertionError: no checkpoint files found in llama-2-7b-chat/\n", "checkpoint_path")
    assert "llama-2-7b-chat/" in found.summary


# the same assert with shards found, another number of processes started
def test_llamas_shards_against_the_processes_is_a_world_size():
    found = reads(
        "AssertionError: Loading a checkpoint for MP=2 but world size is 1\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 2214) of "
        "binary: /usr/bin/python3\n",
        "checkpoint_world_size",
    )
    assert "--nproc_per_node 2" in found.fix


def test_llamas_model_parallel_banner_is_no_finding():
    found = explained("> initializing model parallel with size 1\n> initializing ddp with size 1\n")
    assert found.id not in ("log.checkpoint_world_size", "log.checkpoint_path")
