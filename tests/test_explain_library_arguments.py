"""The libraries a training script calls on torch refusing its arguments (kinds/library_arguments.py): each
message as its source raises it, filled with plausible values, read as its kind and certainty; and the near misses
(a warning of the same words, another message that shares them) that must not be."""

from __future__ import annotations

import pytest
from explaining import explained, filled

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

TRACE = 'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    trainer.train()\n'

# (template id, values, exception, kind, certainty, words of the fix)
CASES = [
    (
        "third_party:transformers-asking-to-pad-without-pad-token",
        (),
        "ValueError",
        "tokenizer_pad_token",
        "certain",
        ["tokenizer.pad_token = tokenizer.eos_token", "pad_token_id"],
    ),
    (
        "third_party:transformers-batch-sizes-without-padding-token",
        (),
        "ValueError",
        "tokenizer_pad_token",
        "certain",
        ["model.config.pad_token_id"],
    ),
    (
        "third_party:transformers-unable-to-create-tensor-pad-truncate",
        ("labels",),
        "ValueError",
        "library_arguments",
        "certain",
        ["truncation=True", "DataCollatorWithPadding"],
    ),
    (
        "third_party:transformers-specify-either-input-ids-or-inputs-embeds",
        (),
        "ValueError",
        "library_arguments",
        "likely",
        ["model(**batch)", "remove_unused_columns"],
    ),
    (
        "third_party:transformers-specify-exactly-one-of-input-ids",
        (),
        "ValueError",
        "library_arguments",
        "likely",
        ["input_ids"],
    ),
    (
        "third_party:transformers-both-input-ids-and-inputs-embeds",
        (),
        "ValueError",
        "library_arguments",
        "likely",
        ["exactly one of input_ids"],
    ),
    (
        "third_party:transformers-generate-model-kwargs-not-used",
        ("['token_type_ids']",),
        "ValueError",
        "library_arguments",
        "likely",
        ["return_token_type_ids=False"],
    ),
    (
        "third_party:transformers-num-return-sequences-over-num-beams",
        ("4", "1"),
        "ValueError",
        "library_arguments",
        "certain",
        ["num_return_sequences <= num_beams"],
    ),
    (
        "third_party:peft-target-module-type-not-supported",
        ("model.layers.0.self_attn",),
        "ValueError",
        "library_arguments",
        "certain",
        ["named_modules()", "all-linear"],
    ),
    (
        "third_party:peft-target-module-type-not-supported-old",
        ("transformer.h.0.attn",),
        "ValueError",
        "library_arguments",
        "certain",
        ["named_modules()"],
    ),
    (
        "third_party:peft-specify-target-modules",
        (),
        "ValueError",
        "library_arguments",
        "certain",
        ["target_modules=['q_proj', 'v_proj']"],
    ),
    (
        "third_party:timm-no-pretrained-weights",
        ("resnet18d",),
        "RuntimeError",
        "library_arguments",
        "certain",
        ["pretrained=True", "pretrained=False"],
    ),
    (
        "third_party:timm-unknown-model",
        ("vit_base_patch16_224_in22k",),
        "RuntimeError",
        "library_arguments",
        "likely",
        ["timm.list_models"],
    ),
    (
        "third_party:timm-invalid-pretrained-tag",
        ("augreg_in22k", "vit_base_patch16_224"),
        "RuntimeError",
        "library_arguments",
        "likely",
        ["pretrained=True"],
    ),
    (
        "third_party:trl-sft-packing-false-without-text-field",
        (),
        "ValueError",
        "library_arguments",
        "likely",
        ["dataset_text_field='text'", "0.12"],
    ),
    (
        "third_party:transformers-collator-pad-without-pad-token",
        ("GPT2TokenizerFast",),
        "ValueError",
        "tokenizer_pad_token",
        "certain",
        ["tokenizer.pad_token = tokenizer.eos_token"],
    ),
    (
        "third_party:transformers-collator-mlm-without-mask-token",
        (),
        "ValueError",
        "library_arguments",
        "certain",
        ["mlm=False"],
    ),
    (
        "third_party:transformers-pad-without-input-ids",
        ("input_ids", "['text', 'label']"),
        "ValueError",
        "library_arguments",
        "certain",
        ["dataset.map(", "remove_unused_columns"],
    ),
    (
        "third_party:transformers-unrecognized-configuration-class",
        ("<class 'transformers.models.t5.configuration_t5.T5Config'>", "AutoModelForCausalLM"),
        "ValueError",
        "library_arguments",
        "likely",
        ["AutoModelForSeq2SeqLM"],
    ),
    (
        "third_party:diffusers-example-column-not-in-dataset",
        ("image", "img, prompt"),
        "ValueError",
        "library_arguments",
        "certain",
        ["--image_column"],
    ),
    (
        "third_party:diffusers-example-no-dataset",
        (),
        "ValueError",
        "library_arguments",
        "certain",
        ["--train_data_dir"],
    ),
    (
        "third_party:diffusers-example-class-data-dir",
        (),
        "ValueError",
        "library_arguments",
        "certain",
        ["--class_data_dir"],
    ),
    (
        "third_party:diffusers-example-weights-not-float32",
        ("torch.float16",),
        "ValueError",
        "library_arguments",
        "certain",
        ["float32", "--variant fp16"],
    ),
    (
        "third_party:diffusers-example-text-encoder-grad-accumulation",
        (),
        "ValueError",
        "library_arguments",
        "certain",
        ["--gradient_accumulation_steps 1"],
    ),
    (
        "third_party:diffusers-height-width-divisible-by-8",
        ("500", "500"),
        "ValueError",
        "library_arguments",
        "certain",
        ["multiples of 8"],
    ),
    (
        "third_party:ultralytics-not-a-valid-yolo-argument",
        ("image_weights", ""),
        "SyntaxError",
        "library_arguments",
        # likely (certainty review 8): as often a key of another ultralytics release than a misspelling
        "likely",
        ["default.yaml"],
    ),
    (
        "third_party:ultralytics-data-yaml-key-missing",
        (),
        "SyntaxError",
        "library_arguments",
        "certain",
        ["train:", "names:"],
    ),
    (
        "third_party:ultralytics-data-yaml-names-nc-differ",
        ("data.yaml", "3", "4"),
        "SyntaxError",
        "library_arguments",
        "certain",
        ["names: only"],
    ),
    (
        "third_party:sentence-transformers-eval-strategy-without-eval-dataset",
        ("steps",),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["evaluator="],
    ),
    (
        "third_party:sentence-transformers-reserved-column-names",
        ("train ", "['dataset_name']"),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["rename"],
    ),
    (
        "third_party:peft-cannot-merge-8bit",
        (),
        "ValueError",
        "library_arguments",
        "certain",
        ["merge_and_unload()", "peft >= 0.6"],
    ),
    (
        "third_party:peft-cannot-merge-gptq",
        (),
        "ValueError",
        "library_arguments",
        "certain",
        ["unquantized base model"],
    ),
    (
        "third_party:transformers-max-new-tokens-not-positive",
        ("0",),
        "ValueError",
        "library_arguments",
        "certain",
        ["max_new_tokens >= 1"],
    ),
    (
        "third_party:transformers-pipeline-unknown-task",
        ("'text-genration'", "['audio-classification', 'text-generation']"),
        "KeyError",
        "library_arguments",
        "likely",
        ["'text-generation'"],
    ),
    (
        "third_party:trl-model-init-kwargs-model-instantiated",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["model id string"],
    ),
    (
        "third_party:trl-model-kwargs-model-instantiated-old",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["from_pretrained"],
    ),
    (
        "third_party:trl-completion-collator-with-packing",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["packing=False"],
    ),
    (
        "third_party:trl-token-not-in-vocabulary",
        ("<|im_end|>", "LlamaTokenizerFast"),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["pad_token / eos_token"],
    ),
    (
        "third_party:trl-vlm-packing",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["packing=False"],
    ),
    (
        "third_party:trl-padding-free-custom-collator",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["padding_free=False"],
    ),
    (
        "third_party:trl-assistant-only-loss-not-conversational",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["'messages'"],
    ),
    (
        "third_party:trl-sft-examples-messages-or-text",
        (),
        "KeyError",
        "trainer_arguments",
        "certain",
        ["dataset_text_field"],
    ),
    (
        "third_party:trl-ref-model-same-object",
        (),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["ref_model=None"],
    ),
    (
        "third_party:trl-dpo-padding-value-without-pad-token",
        (),
        "ValueError",
        "tokenizer_pad_token",
        "certain",
        ["tokenizer.pad_token = tokenizer.eos_token"],
    ),
    (
        "third_party:trl-grpo-batch-not-divisible-by-generations",
        ("2", "4", "3", "[2, 4, 8]"),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["num_generations"],
    ),
    (
        "third_party:trl-grpo-generation-batch-not-divisible",
        ("8", "3"),
        "ValueError",
        "trainer_arguments",
        "certain",
        ["num_generations"],
    ),
]


@pytest.mark.parametrize("ident, values, exception, kind, certainty, words", CASES, ids=[c[0] for c in CASES])
def test_each_refusal_reads_as_its_kind(ident, values, exception, kind, certainty, words):
    found = explained(TRACE + f"{exception}: {filled(ident, *values)}\n")
    assert (found.id, found.details.get("confidence", "certain")) == (f"log.{kind}", certainty), found.summary
    assert by_id()[ident].kind == kind
    for word in words:
        assert word in found.fix, (word, found.fix)


def test_the_release_readings_name_dependency_version_beside():
    found = explained(
        TRACE + f"RuntimeError: {filled('third_party:timm-unknown-model', 'convnextv2_atto')}\n"
    )
    assert found.details.get("alternatives") == ["log.dependency_version"], found.details
    assert "pip install -U timm" in found.fix and "trl" not in found.fix


def test_the_refusal_is_quoted_in_the_summary():
    found = explained(
        TRACE
        + "ValueError: "
        + filled("third_party:peft-target-module-type-not-supported", "model.layers.0.mlp")
        + "\n"
    )
    assert "model.layers.0.mlp" in found.summary


NEAR_MISSES = [
    # generate()'s healthy warning that it sets the pad token for open-end generation
    "Setting `pad_token_id` to `eos_token_id`:50256 for open-end generation.\n",
    # resize_token_embeddings' own refusal of pad_to_multiple_of (another message sharing "Asking to pad")
    "ValueError: Asking to pad the embedding matrix to a multiple of `64.0`, which is not and integer. Please make "
    "sure to pass an integer\n",
    # timm's warning when a model has no weights and pretrained was not required
    "No pretrained weights exist for this model. Using random initialization.\n",
    # generate()'s warning about max_length, which the run survives
    "Input length of input_ids is 512, but `max_length` is set to 20. This can lead to unexpected behavior. You "
    "should consider increasing `max_length` or, better yet, setting `max_new_tokens`.\n",
    # the tokenizer's logged complaint when pad_token is read unset: the run goes on until something pads
    "Using pad_token, but it is not set yet.\n",
    # transformers' warning that truncation was not asked for: the run goes on
    "Truncation was not explicitly activated but `max_length` is provided a specific value, please use "
    "`truncation=True` to explicitly truncate examples to max length.\n",
    # peft's warning when it does merge into 8-bit weights (0.6+): the run goes on
    "UserWarning: Merge lora module to 8-bit linear may get different generations due to rounding errors.\n",
    # generate()'s warning without an attention mask or a pad token id: the run goes on
    "The attention mask and the pad token id were not set. As a consequence, you may observe unexpected behavior. "
    "Please pass your input's `attention_mask` to obtain reliable results.\n",
    # the weights loader's report of unused checkpoint weights: a warning, not generate()'s kwargs
    "Some weights of the model checkpoint at bert-base-uncased were not used when initializing BertModel: "
    "['cls.predictions.bias']\n",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_do_not_read_as_a_library_refusal(text):
    found = explained(text)
    assert found.id not in ("log.library_arguments", "log.tokenizer_pad_token"), (text, found.summary)


def test_a_refusal_pasted_without_its_backticks_reads_the_same():
    # an issue's prose quoting TRL's refusal as Markdown renders it: the backticks gone
    found = explained(
        "The run stops with ValueError: You passed packing=False to the SFTTrainer/SFTConfig, but you didn't pass a "
        "dataset_text_field or formatting_func argument.\n"
    )
    assert (found.id, found.details.get("confidence")) == ("log.library_arguments", "likely"), found.summary
    assert found.details.get("alternatives") == ["log.dependency_version"]
    assert "0.9.6" in found.fix and "dataset_text_field='text'" in found.fix


def test_ultralytics_names_the_argument_in_ansi_red():
    # cfg/__init__.py check_dict_alignment wraps the key in colorstr('red', 'bold', ...)
    found = explained(
        TRACE
        + "SyntaxError: '\x1b[31m\x1b[1msmoothing\x1b[0m' is not a valid YOLO argument. Similar arguments are "
        "i.e. ['label_smoothing=0.0'].\n"
    )
    # likely (certainty review 8): a key of another release reads the same
    assert (found.id, found.details.get("confidence", "certain")) == ("log.library_arguments", "likely")
    assert "label_smoothing" in found.fix


def test_llama_3_1_rope_scaling_with_a_transformers_before_4_43_is_that_release():
    # transformers 4.31-4.42 models/llama/configuration_llama.py _rope_scaling_validation
    rope = (
        "{'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192, "
        "'rope_type': 'llama3'}"
    )
    found = explained(
        TRACE + f"ValueError: {filled('third_party:transformers-rope-scaling-two-fields', rope)}\n"
    )
    assert (found.id, found.details.get("confidence", "certain")) == ("log.dependency_version", "certain")
    assert "transformers>=4.43" in found.fix
    assert by_id()["third_party:transformers-rope-scaling-two-fields"].kind == "dependency_version"
    # a two-field dict of the config's own with a field missing prints the same words: likely, both named
    own = explained(
        TRACE + "ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got "
        "{'type': 'linear'}\n"
    )
    assert (own.id, own.details.get("confidence")) == ("log.dependency_version", "likely")
    assert "both fields" in own.fix


def test_ultralytics_data_yaml_key_missing_reads_on_its_two_lines():
    # check_det_dataset: emojis(f"{dataset} 'val:' key missing ❌.\n'train' and 'val' are required in all data YAMLs.")
    found = explained(
        TRACE
        + "SyntaxError: data.yaml 'val:' key missing ❌.\n'train' and 'val' are required in all data YAMLs.\n"
    )
    assert (found.id, found.details.get("confidence", "certain")) == ("log.library_arguments", "certain")
