"""transformers refusing a model load or a Trainer setting (kinds/transformers_calls.py), produced for real on CPU
(a tiny BERT built from its config, saved and loaded with from_pretrained, TrainingArguments), and near-misses that
are other kinds."""

from __future__ import annotations

import pytest
import torch
from explaining import explained, traceback_of
from transformers import BertConfig, BertModel, TrainingArguments

pytestmark = pytest.mark.usefixtures("every_message_seen")


def tiny() -> BertConfig:
    return BertConfig(
        hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16, vocab_size=50
    )


@pytest.fixture
def saved(tmp_path):
    BertModel(tiny()).save_pretrained(tmp_path)
    return tmp_path


def refused(text: str, confidence: str = "certain"):
    found = explained(text)
    assert found.id == "log.transformers_call_refused", (found.id, found.summary)
    assert found.details["confidence"] == confidence, found.summary
    return found


def test_a_model_loaded_under_an_integer_dtype(saved):
    found = refused(traceback_of(lambda: BertModel.from_pretrained(saved, dtype=torch.int8)))
    assert "BertModel" in found.summary and "torch.int8" in found.summary
    assert "torch.bfloat16" in found.fix and "quantization_config" in found.fix


def test_a_dtype_named_by_a_string_torch_does_not_have(saved):
    found = refused(traceback_of(lambda: BertModel.from_pretrained(saved, dtype="floaty")))
    assert "'auto'" in found.fix and "torch_dtype=" in found.fix


def test_a_state_dict_beside_a_checkpoint_name(saved):
    found = refused(traceback_of(lambda: BertModel.from_pretrained(saved, state_dict={})))
    assert "from_pretrained(None, config=config, state_dict=sd)" in found.fix


def test_embeddings_padded_to_a_fractional_multiple():
    found = refused(
        traceback_of(lambda: BertModel(tiny()).resize_token_embeddings(60, pad_to_multiple_of=2.5))
    )
    assert "`2.5`" in found.summary and "pad_to_multiple_of=64" in found.fix


def test_empty_cache_steps_of_zero(tmp_path):
    found = refused(
        traceback_of(lambda: TrainingArguments(output_dir=str(tmp_path), torch_empty_cache_steps=0))
    )
    assert "got 0" in found.summary and "positive integer" in found.fix


def test_a_model_class_called_with_a_checkpoint_name():
    found = refused(traceback_of(lambda: BertModel("bert-base-uncased")))
    assert "from_pretrained('name')" in found.fix


def test_dequantizing_a_model_that_is_not_quantized():
    found = refused(traceback_of(lambda: BertModel(tiny()).dequantize()))
    assert "not quantized" in found.fix


def test_a_loss_on_another_device_is_likely_and_names_each_cause():
    # trainer.py's training loop, which needs two devices to print it: the template's text
    found = refused(
        "ValueError: Calculated loss must be on the original device: cuda:0 but device in use is cuda:3\n",
        confidence="likely",
    )
    assert "cuda:3" in found.summary and "device_map" in found.fix and "4.46" in found.fix


def test_near_misses_are_not_transformers_refusals(saved):
    # a checkpoint folder without weights is a missing file, not a refused argument
    (saved / "model.safetensors").unlink()
    missing = explained(traceback_of(lambda: BertModel.from_pretrained(saved)))
    assert missing.id != "log.transformers_call_refused", missing.summary
    # bf16 on a GPU without it: its own kind (the message also names Ampere)
    bf16 = explained(
        "ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the model "
        "on CPU. You need Ampere+ GPU with cuda>=11.0\n"
    )
    assert bf16.id == "log.bf16_unsupported", bf16.summary


def test_a_load_that_failed_on_an_unexpected_error_is_likely_and_names_each_cause():
    # modeling_utils.py's catch-all around finding the weights: the template's text
    found = refused(
        "OSError: Can't load the model for 'gpt2'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, "
        "make sure 'gpt2' is the correct path to a directory containing a file named model.safetensors.\n",
        confidence="likely",
    )
    assert "'gpt2'" in found.summary and "local folder" in found.fix and "HF_HUB_OFFLINE" in found.fix
