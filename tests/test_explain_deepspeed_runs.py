"""DeepSpeed 0.19.8 run for real on CPU (2 ranks under the deepspeed launcher, its CPU accelerator, gloo) with the
faults the corpus's deepspeed family shows planted in a small training script; explain reads each whole console
(fixtures/deepspeed_runs/, SOURCES.md says how each was recorded). None of these tests needs DeepSpeed."""

from __future__ import annotations

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
