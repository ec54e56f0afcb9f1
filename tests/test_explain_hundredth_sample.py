"""The hundredth sample's train miss: its reading on the line as the source raises it, filled in as a run would print
it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4817-4866)."""

from __future__ import annotations

import pytest
from explaining import certain_saying, explained, filled, read

pytestmark = pytest.mark.usefixtures("every_message_seen")

# Qwen's finetune.py, started by finetune_lora_ds.sh with ds_config_zero3.json on a base model's folder, raises
# before it loads the model, on every rank
QWEN_REFUSES_ZERO3_LORA = (
    "Traceback (most recent call last):\n"
    '  File "/data/Qwen/finetune.py", line 360, in <module>\n'
    "    train()\n"
    '  File "/data/Qwen/finetune.py", line 289, in train\n'
    "    raise RuntimeError(\n"
    "RuntimeError: " + filled("third_party:qwen-finetune-zero3-lora-base-model") + "\n"
)


# Qwen#1104: the member jklj077, ZeRO3 and LoRA cannot be used together when fine-tuning a base model
def test_the_refusal_names_the_base_model_check_and_the_ways_around_it():
    certain_saying(
        QWEN_REFUSES_ZERO3_LORA,
        "library_option_conflict",
        ["Qwen's finetune.py refuses LoRA under DeepSpeed ZeRO-3 for a base model", "'chat' is not in"],
        ["ZeRO3", "ds_config_zero2.json", "--q_lora", "keep 'chat' in the path"],
    )


def test_the_train_log_reads_as_the_option_conflict():
    read("4819.txt", "library_option_conflict")


# the same script warns, and goes on, when Q-LoRA meets FSDP or ZeRO-3: a healthy run's line, no refusal
def test_the_qlora_warning_of_the_same_script_is_not_the_refusal():
    found = explained(
        "WARNING:root:FSDP or ZeRO3 are incompatible with QLoRA.\n"
        "Loading checkpoint shards: 100%|██████████| 8/8 [00:12<00:00,  1.52s/it]\n"
        "{'loss': 1.2043, 'learning_rate': 0.0003, 'epoch': 0.01}\n"
    )
    assert found.id != "log.library_option_conflict", found.summary
