"""The seventieth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3317-3366)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# peft/tuners/lora.py (0.2-0.4) LoraModel._find_and_replace: f"Target module {target} is not supported. "
# f"Currently, only `torch.nn.Linear` and `Conv1D` are supported.", here a model-parallel layer's repr
def test_peft_refusing_a_column_parallel_layer_is_lora_without_model_parallel_layers():
    found = reads(
        '  File "/opt/conda/lib/python3.8/site-packages/peft/tuners/lora.py", line 181, in _find_and_replace\n'
        "    raise ValueError(\n"
        "ValueError: Target module RowParallelLinear() is not supported. Currently, only `torch.nn.Linear` and "
        "`Conv1D` are supported.\n",
        "library_arguments",
        "likely",
    )
    assert (
        "RowParallelLinear" in found.summary
        and "model parallel" in found.fix
        and "megatron_core" in found.fix
    )


def test_the_refusal_wrapped_over_two_lines_names_the_layer_from_its_first():
    found = reads(
        "ValueError: Target module ColumnParallelLinear() is not supported. \n"
        "Currently, only `torch.nn.Linear` and `Conv1D` are supported.\n",
        "library_arguments",
        "likely",
    )
    assert "ColumnParallelLinear" in found.summary


def test_a_quantized_layer_refused_is_not_a_model_parallel_one():
    found = reads(
        "ValueError: Target module Linear4bit() is not supported. \n"
        "Currently, only `torch.nn.Linear` and `Conv1D` are supported.\n",
        "library_arguments",
        "likely",
    )
    assert "model-parallel" not in found.summary and "model parallel" not in found.fix


# deepspeed/runtime/zero/stage3.py _create_fp16_sub_groups: sum(param.partition_numel() for ...), a method that
# partition_parameters.py _convert_to_deepspeed_param sets; CPython's AttributeError on a plain parameter
def test_a_plain_parameter_in_zero3s_optimizer_is_a_deepspeed_release_bug_or_a_stale_optimizer():
    found = reads(
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py", line 1166, in '
        "_create_fp16_sub_groups\n"
        "    params_group_numel = sum([param.partition_numel() for param in params_group])\n"
        "AttributeError: 'Parameter' object has no attribute 'partition_numel'\n",
        "library_version_bug",
        "likely",
    )
    assert "never partitioned" in found.summary and "deepspeed" in found.fix and "optimizer" in found.fix


def test_another_zero3_attribute_missing_is_not_read_so():
    # ds_tensor is read by ZeRO-3's hooks on the model's own parameters too (a module added after initialize)
    found = explained("AttributeError: 'Parameter' object has no attribute 'ds_tensor'\n")
    assert "never partitioned" not in found.summary
