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
