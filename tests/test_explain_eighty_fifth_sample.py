"""The eighty-fifth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4067-4116)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# slime/ray/rollout.py start_engines placing an engine at a GPU index its Ray placement group does not have:
# CPython 3.11's traceback with the caret line under the code line, then the IndexError
ROLLOUT_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/root/slime/train.py", line 96, in <module>\n'
    "    train(args)\n"
    '  File "/root/slime/slime/ray/rollout.py", line 134, in start_engines\n'
    "    base_gpu_id = int(reordered_gpu_ids[gpu_index])\n"
)


def test_a_rollout_engine_indexed_past_its_placement_group_is_likely_slimes_gpu_count():
    found = reads(
        ROLLOUT_FRAMES
        + "                      ~~~~~~~~~~~~~~~~~^^^^^^^^^^^\nIndexError: list index out of range\n",
        "library_version_bug",
        "likely",
    )
    assert "placement group" in found.summary
    assert "--rollout-num-gpus" in found.fix and "critic" in found.fix


# the same frames cut at the code line say nothing of what failed there
def test_the_rollout_frames_cut_before_the_error_are_not_the_gpu_count():
    found = explained(ROLLOUT_FRAMES)
    assert found.id != "log.library_version_bug", found.summary


# the all-gather's dtype refusal on a line that says the gather was DeepSpeed ZeRO-3's (PEFT's fp32 adapters beside
# bf16 weights, DeepSpeed 0.19.2 and later)
def test_the_dtype_refusal_on_a_line_naming_zero3_is_deepspeeds_mixed_dtype_gather():
    found = reads(
        "[rank0]: step 1 failed under DeepSpeed ZeRO-3 with LoRA: TypeError: output tensor must have the same "
        "type as input tensor\n",
        "library_version_bug",
        "likely",
    )
    assert "autocast_adapter_dtype=False" in found.fix and "0.19.2" in found.fix


# the same refusal raised in a script's own all_gather_into_tensor (torch/distributed/distributed_c10d.py) is that
# call's: its output buffer was built in another dtype
def test_the_dtype_refusal_of_a_scripts_own_all_gather_is_the_calls_arguments():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "/workspace/gather_embeddings.py", line 52, in <module>\n'
        "    dist.all_gather_into_tensor(out, emb)\n"
        '  File "/usr/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3733, in '
        "all_gather_into_tensor\n"
        "    work = group._allgather_base(output_tensor, input_tensor, opts)\n"
        "TypeError: output tensor must have the same type as input tensor\n",
        "collective_arguments",
        "certain",
    )
    assert "dtype=input.dtype" in found.fix


# Megatron-Core's async save (async_strategy="mcore") warning, then its spawned writer process failing
MCORE_WARNING = (
    "WARNING | megatron.core.dist_checkpointing.strategies.torch:async_save:675 - MCore's async save is deprecated "
    "and will be removed in the future releases. Please, use NVRx async solution by setting `async_strategy` to "
    "`nvrx`.\n"
)


def test_the_mcore_async_save_writer_failing_is_likely_that_saves_release():
    found = reads(
        MCORE_WARNING + "Process SpawnProcess-1:\nTraceback (most recent call last):\n",
        "library_version_bug",
        "likely",
    )
    assert "nvrx" in found.fix and "async" in found.summary


# the warning alone is printed by every run that saves with MCore's async strategy, healthy ones too
def test_the_async_save_warning_alone_is_no_failure():
    found = explained(MCORE_WARNING + "[2026-07-28 13:31:05] iteration 200 | loss 2.314\n")
    assert found.id != "log.library_version_bug", found.summary


# wandb/sdk/lib/preinit.py: wandb.log on a rank where the logger never ran wandb.init (it starts on rank 0 only)
def test_wandb_log_before_init_is_a_rank_without_a_wandb_run():
    found = reads(
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/home/u/proj/models/base_model.py", line 267, in log_info\n'
        '[rank1]:     wandb.log({"prediction": [wandb.Image(img)]})\n'
        '[rank1]:   File "/opt/conda/lib/python3.11/site-packages/wandb/sdk/lib/preinit.py", line 36, in '
        "preinit_wrapper\n"
        '[rank1]:     raise wandb.Error(f"You must call wandb.init() before {name}()")\n'
        "[rank1]: wandb.errors.Error: You must call wandb.init() before wandb.log()\n",
        "tracker_log_before_init",
        "certain",
    )
    assert "wandb.log()" in found.summary and "rank 1" in found.summary and "is_global_zero" in found.fix


# PreInitObject's form for wandb.config reads the same way
def test_wandb_config_before_init_names_the_attribute():
    found = reads(
        "wandb.errors.Error: You must call wandb.init() before wandb.config.lr\n",
        "tracker_log_before_init",
        "certain",
    )
    assert "wandb.config.lr" in found.summary


# wandb refusing to start for want of a key is the login, not a call before init
def test_wandb_without_a_key_is_not_a_call_before_init():
    found = explained(
        "wandb.errors.UsageError: api_key not configured (no-tty). call wandb.login(key=[your_api_key])\n"
    )
    assert found.id == "log.wandb_api_key_missing", found.summary
