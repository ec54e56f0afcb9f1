"""DeepSpeed 0.19.8 run for real on CPU (2 ranks under the deepspeed launcher, its CPU accelerator, gloo) with the
faults the corpus's deepspeed family shows planted in a small training script; explain reads each whole console
(fixtures/deepspeed_runs/, SOURCES.md says how each was recorded). None of these tests needs DeepSpeed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from torchdoctor.explain.diagnose import explain

RUNS = Path(__file__).parent / "fixtures" / "deepspeed_runs"


def lead_of(name: str):
    return explain([str(RUNS / f"ds_{name}.txt")])[0]


# recording -> (the lead's kind, what its fix must say)
READINGS = {
    "batch": ("deepspeed_config_mismatch", ["train_batch_size 8 (2 x 2 x 2)"]),
    "batch_one_process": ("deepspeed_config_mismatch", ["train_batch_size 4 (2 x 2 x 1)"]),
    "optimizer": ("deepspeed_config_mismatch", ['"zero_allow_untested_optimizer": true']),
    "offload_client": (
        "deepspeed_config_mismatch",
        ["DeepSpeedCPUAdam", '"zero_force_ds_cpu_optimizer": false'],
    ),
    "fp16": ("fp16_unsupported", ['"fp16": {"enabled": false}', "bf16"]),
    "path": ("deepspeed_config_mismatch", ["check the path"]),
    "load_other_world": ("checkpoint_world_size", ["ds_to_universal", '"load_universal": true']),
}


@pytest.mark.parametrize("name", sorted(READINGS))
def test_each_planted_fault_leads_with_its_cause_and_fix(name):
    kind, said = READINGS[name]
    lead = lead_of(name)
    assert lead.id == f"log.{kind}", lead.summary
    for words in said:
        assert words in lead.fix, lead.fix


def test_auto_given_to_deepspeed_itself_is_the_config_not_a_deepspeed_bug():
    # "auto" reaches DeepSpeed's _batch_assertion as a str and fails a comparison with an int: before, read as
    # a bug of the deepspeed release installed (library_version_bug)
    lead = lead_of("auto")
    assert lead.id == "log.deepspeed_config_mismatch", lead.summary
    assert lead.summary.startswith("likely: ")
    assert "_batch_assertion" in lead.summary
    assert "another DeepSpeed release" not in lead.summary  # a string is no number in any release
    assert "only the HF Trainer" in lead.fix and "write integers for train_batch_size" in lead.fix


@pytest.mark.parametrize("name", ["misspelled", "misspelled_torchrun"])
def test_a_misspelt_zero_key_names_the_key_it_was_meant_to_be(name):
    lead = lead_of(name)
    assert lead.id == "log.deepspeed_config_mismatch", lead.summary
    assert lead.fix.startswith(
        '"overlap_com" is not a key of "zero_optimization": did you mean "overlap_comm"?'
    )


def test_an_offload_device_deepspeed_does_not_take_names_the_ones_it_does():
    lead = lead_of("offload_device")
    assert lead.id == "log.deepspeed_config_mismatch", lead.summary
    assert lead.fix.startswith(
        "offload_optimizer.device takes only 'none', 'cpu' or 'nvme' and the config gives 'gpu': write one of those."
    )
    assert '"none" (or leaving the offload section out) keeps them on the accelerator' in lead.fix


@pytest.mark.parametrize("name", ["none", "save", "auto_zero3"])
def test_a_run_that_finished_is_not_read_as_a_failure(name):
    assert all(f.status != "fail" for f in explain([str(RUNS / f"ds_{name}.txt")]))


SITE = "/env/lib/python3.10/site-packages"


def _zero_refused(field: str, reason: str):
    # DeepSpeed's zero/config.py building DeepSpeedZeroConfig, as 0.19.8 prints it (ds_misspelled.txt)
    return explain_text(
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/deepspeed/runtime/zero/config.py", line 78, in get_zero_config\n'
        "    return DeepSpeedZeroConfig(**zero_config_dict)\n"
        f'  File "{SITE}/deepspeed/runtime/config_utils.py", line 57, in __init__\n'
        "    super().__init__(**data)\n"
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
        f"{field}\n  {reason}\n"
    )


def explain_text(text: str):
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


def test_a_key_spelt_right_for_another_release_is_no_misspelling():
    # zero_quantized_weights is a ZeRO key of 0.19.8 (ZeRO++), not of older releases: no "did you mean" itself
    lead = _zero_refused(
        "zero_quantized_weights", "Extra inputs are not permitted [type=extra_forbidden, input_value=True]"
    )
    assert lead.id == "log.deepspeed_config_mismatch", lead.summary
    assert "did you mean" not in lead.fix and "another DeepSpeed release" in lead.fix, lead.fix


def test_a_key_of_another_section_names_that_section():
    # fast_init is offload_optimizer's, not offload_param's: the key is spelt right, in the wrong place
    lead = _zero_refused(
        "offload_param.fast_init", "Extra inputs are not permitted [type=extra_forbidden, input_value=True]"
    )
    assert "did you mean" not in lead.fix, lead.fix
    assert "but of 'zero_optimization.offload_optimizer'" in lead.fix, lead.fix


def test_auto_unfilled_under_the_trainer_says_what_they_fill():
    # "auto" reaching _batch_assertion through transformers and accelerate: they were there, so "only the HF
    # Trainer and accelerate replace it" alone would send the user to the tools already in use
    lead = explain_text(
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/transformers/trainer.py", line 2000, in _inner_training_loop\n'
        f'  File "{SITE}/accelerate/accelerator.py", line 1500, in _prepare_deepspeed\n'
        f'  File "{SITE}/deepspeed/runtime/config.py", line 900, in _batch_assertion\n'
        "TypeError: '>' not supported between instances of 'str' and 'int'\n"
    )
    assert lead.id == "log.deepspeed_config_mismatch", lead.summary
    assert "runs through accelerate and transformers, yet the value reached DeepSpeed unfilled" in lead.fix
    assert "runs through" not in lead_of("auto").fix  # the recording called deepspeed.initialize itself
