"""The fifty-eighth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2717-2766)."""

from __future__ import annotations

from explaining import certain

# transformers/trainer.py _determine_best_metric, with eval_dataset a dict: evaluate() runs per dataset with
# metric_key_prefix=f"eval_{eval_dataset_name}", so the loss is listed as eval_<name>_loss, not eval_loss
_NOT_FOUND = (
    "KeyError: \"The `metric_for_best_model` training argument is set to '{asked}', which is not found in the "
    "evaluation metrics. The available evaluation metrics are: [{available}]. Consider changing the "
    '`metric_for_best_model` via the TrainingArguments."\n'
)


def test_a_metric_printed_under_its_datasets_name_is_named_in_the_fix():
    found = certain(
        _NOT_FOUND.format(
            asked="eval_loss",
            available="'eval_sharegpt_val_loss', 'eval_sharegpt_val_runtime', 'eval_sharegpt_val_samples_per_second', "
            "'epoch'",
        ),
        "trainer_arguments",
    )
    assert "--metric_for_best_model eval_sharegpt_val_loss" in found.fix
    assert "dataset" in found.fix


def test_each_named_dataset_is_offered_when_there_are_several():
    found = certain(
        _NOT_FOUND.format(
            asked="loss",
            available="'eval_code_loss', 'eval_code_runtime', 'eval_chat_loss', 'eval_chat_runtime', 'epoch'",
        ),
        "trainer_arguments",
    )
    assert "eval_code_loss" in found.fix and "eval_chat_loss" in found.fix


def test_a_metric_compute_metrics_never_returns_keeps_the_general_fix():
    found = certain(
        _NOT_FOUND.format(asked="eval_accuracy", available="'eval_loss', 'eval_runtime', 'epoch'"),
        "trainer_arguments",
    )
    assert "dataset's name" not in found.fix
    assert "compute_metrics" in found.fix
