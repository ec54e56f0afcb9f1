"""The HF Trainer refusing a resume with nothing to resume and lengths it cannot read (kinds/trainer_resume.py), as
transformers/trainer.py prints them, and a near-miss of another cause that must not read as either."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# Trainer.train: resume_from_checkpoint=True with no checkpoint-<step> in output_dir (haotian-liu/LLaVA#901)
def test_resume_true_with_no_checkpoint_names_the_folder():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "/workspace/LLaVA/llava/train/train.py", line 966, in train\n'
        "    trainer.train(resume_from_checkpoint=True)\n"
        '  File "/usr/local/lib/python3.10/site-packages/transformers/trainer.py", line 1512, in train\n'
        '    raise ValueError(f"No valid checkpoint found in output directory ({args.output_dir})")\n'
        "ValueError: No valid checkpoint found in output directory (./checkpoints/llava-v1.5-13b-pretrain)\n",
        "no_checkpoint_to_resume",
        "certain",
    )
    assert "./checkpoints/llava-v1.5-13b-pretrain" in found.summary
    assert "checkpoint-<step>" in found.fix and "save_strategy" in found.fix


# a named checkpoint folder that is not one is checkpoint_path's, not this
def test_a_named_checkpoint_that_is_not_one_is_another_kind():
    found = explained("ValueError: Can't find a valid checkpoint at ./output/checkpoint-500\n")
    assert found.id == "log.checkpoint_path", found.summary


# _get_train_sampler: group_by_length on raw text (huggingface/trl#1288)
def test_group_by_length_on_untokenized_data_says_to_tokenize_or_drop_it():
    found = reads(
        '  File "/usr/local/lib/python3.10/site-packages/transformers/trainer.py", line 806, in _get_train_sampler\n'
        "    return LengthGroupedSampler(\n"
        '  File "/usr/local/lib/python3.10/site-packages/transformers/trainer_pt_utils.py", line 578, in __init__\n'
        "    raise ValueError(\n"
        "ValueError: Can only automatically infer lengths for datasets whose items are dictionaries with an "
        "'input_ids' key.\n",
        "group_by_length_without_input_ids",
        "certain",
    )
    assert "group_by_length=False" in found.fix and "length_column_name" in found.fix


# the DataLoader's own refusal of a dataset without a length is another cause
def test_a_dataset_without_len_is_not_this():
    found = explained("TypeError: object of type 'IterableDataset' has no len()\n")
    assert found.id != "log.group_by_length_without_input_ids", found.summary


# _load_best_model's warning, posted alone (hiyouga/LlamaFactory#5757, huggingface/transformers#28307)
def test_best_model_not_found_alone_names_both_readings():
    found = explained(
        "[WARNING|trainer.py:2606] 2024-01-02 10:11:12,345 >> Could not locate the best model at "
        "whisper-large-v2-fil/checkpoint-2000/pytorch_model.bin, if you are running a distributed training on "
        "multiple nodes, you should activate `--save_on_each_node`.\n"
    )
    assert found.id == "log.best_model_not_found" and found.details["confidence"] == "likely", found.summary
    assert "whisper-large-v2-fil/checkpoint-2000/pytorch_model.bin" in found.summary
    assert "save_on_each_node=True" in found.fix and "save_safetensors=False" in found.fix


def test_best_model_warning_beside_an_exception_is_not_the_finding():
    found = explained(
        "Could not locate the best model at out/checkpoint-500/pytorch_model.bin, if you are running a distributed "
        "training on multiple nodes, you should activate `--save_on_each_node`.\n"
        "ValueError: No valid checkpoint found in output directory (out)\n"
    )
    assert found.id == "log.no_checkpoint_to_resume", found.summary


# Lightning's restore_training_state (Lightning-AI/pytorch-lightning#4184, in 2.x words)
def test_resuming_past_max_epochs_says_to_raise_it_or_evaluate():
    found = reads(
        "lightning.fabric.utilities.exceptions.MisconfigurationException: You restored a checkpoint with "
        "current_epoch=11, but you have set Trainer(max_epochs=10).\n",
        "resume_past_max_epochs",
        "certain",
    )
    assert "epoch 11" in found.summary and "max_epochs=10" in found.summary
    assert "load_from_checkpoint" in found.fix and "validate" in found.fix


# the 1.0 wording, over two lines
def test_the_older_lowercase_wording_reads_the_same():
    found = reads(
        "pytorch_lightning.utilities.exceptions.MisconfigurationException:\n"
        "            you restored a checkpoint with current_epoch=11\n"
        "            but the Trainer(max_epochs=10)\n",
        "resume_past_max_epochs",
        "certain",
    )
    assert "max_epochs=10" in found.summary


# a resumed epoch beyond max_steps is another setting, not this refusal
def test_a_max_steps_warning_is_not_past_max_epochs():
    found = explained(
        "UserWarning: `max_epochs` was not set. Setting it to 1000 epochs. To train without an epoch limit, set "
        "`max_epochs=-1`.\n"
    )
    assert found.id != "log.resume_past_max_epochs", found.summary
