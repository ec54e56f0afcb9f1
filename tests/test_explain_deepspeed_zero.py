"""DeepSpeed ZeRO's own refusals read from its sources (issue 19, DeepSpeed): the parameter coordinator's state
(kinds/zero3_prefetch.py) and a parameter group with nothing to train (kinds/zero_frozen_groups.py).

``deepspeed/runtime/zero/partitioned_param_coordinator.py`` (``reset_step``, ``fetch_sub_module``, the in-flight
registry and the trace), ``partition_parameters.py`` and ``parameter_offload.py``'s backward hooks raise these on a
step that ran other submodules than the trace, a case DeepSpeed releases got wrong: each is a likely
``library_version_bug`` with the upgrade, the release that changed it and the workaround. ``stage_1_and_2.py`` and
``stage3.py`` fail on an empty list where an optimizer group has no trainable parameter: a likely
``optimizer_no_params``. Each case is the template as the catalog holds it, filled as the source fills it
(``param.ds_summary()``'s dict), under the frame that raises it; near-misses are DeepSpeed's healthy lines about the
same trace, the same frames with another error, and other tools' words.
"""

from __future__ import annotations

import pytest
from explaining import explained, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero"
# partition_parameters.py ds_summary() as CPython prints the dict it returns
SUMMARY = (
    "{'id': 918, 'status': 'INFLIGHT', 'numel': 0, 'ds_numel': 5120, 'shape': (0,), 'ds_shape': (5120,), "
    "'requires_grad': False, 'grad_shape': None, 'persist': True, 'active_sub_modules': {578}, "
    "'ds_tensor.shape': torch.Size([1707])}"
)


def raised(frame: str, code: str, error: str, message: str) -> str:
    """A traceback ending in ``frame`` of ZeRO's coordinator, its source line, and the exception."""
    return (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    loss = engine(batch)\n"
        f'  File "{SITE}/{frame}\n'
        f"    {code}\n"
        f"{error}: {message}\n"
    )


CASES = [
    # reset_step, DeepSpeed 0.6.7-0.15.2
    (
        raised(
            'partitioned_param_coordinator.py", line 204, in reset_step',
            'raise RuntimeError(f"still have inflight params "',
            "RuntimeError",
            template("deepspeed:still-have-inflight-params", f"[{SUMMARY}]"),
        ),
        ["still have inflight params"],
        ["0.15.3", "#6557", '"stage3_prefetch_bucket_size": 0'],
    ),
    # fetch_sub_module's assert: its source line and the ds_summary() dict it prints
    (
        raised(
            'partitioned_param_coordinator.py", line 328, in fetch_sub_module',
            template("third_party:deepspeed-zero3-fetch-assert-available"),
            "AssertionError",
            SUMMARY,
        ),
        ["not AVAILABLE"],
        ["pip install -U deepspeed", "#6662"],
    ),
    # the AssertionError alone, as a reporter pastes it
    (
        "AssertionError: " + SUMMARY.replace("'INFLIGHT'", "'NOT_AVAILABLE'") + "\n",
        ["not AVAILABLE"],
        ["stage3_prefetch_bucket_size"],
    ),
    (
        raised(
            'partitioned_param_coordinator.py", line 412, in __all_gather_params',
            'raise RuntimeError(f"param {param.ds_summary()} still in flight")',
            "RuntimeError",
            template("deepspeed:param-still-in-flight", SUMMARY),
        ),
        ["ZeRO-3's parameter coordinator"],
        ["generate() or evaluation between training steps"],
    ),
    (
        raised(
            'partitioned_param_coordinator.py", line 56, in push',
            'raise RuntimeError(f"{param.ds_summary()} already in registry")',
            "RuntimeError",
            template("deepspeed:already-in-registry", SUMMARY),
        ),
        ["ZeRO-3's parameter coordinator"],
        ["pip install -U deepspeed"],
    ),
    (
        raised(
            'partition_parameters.py", line 1180, in _all_gather',
            'raise RuntimeError(f"expected param {param.ds_summary()} to be available")',
            "RuntimeError",
            template("deepspeed:expected-param-to-be-available", SUMMARY),
        ),
        ["not AVAILABLE"],
        ["pip install -U deepspeed"],
    ),
    (
        raised(
            'partitioned_param_coordinator.py", line 185, in record_module',
            'raise RuntimeError(f"attempted to record trace when status = {self.__trace_mode}")',
            "RuntimeError",
            template("deepspeed:attempted-to-record-trace-when-status", "ZeRoTraceMode.COMPLETE"),
        ),
        ["its trace of the submodules' order did not hold"],
        ["pip install -U deepspeed"],
    ),
    (
        raised(
            'partitioned_param_coordinator.py", line 490, in __params_to_release',
            'raise RuntimeError("expected trace to be complete")',
            "RuntimeError",
            template("deepspeed:expected-trace-to-be-complete"),
        ),
        ["expected trace to be complete"],
        ["pip install -U deepspeed"],
    ),
    # parameter_offload.py's backward hook, DeepSpeed 0.9.5-0.15.3
    (
        raised(
            'parameter_offload.py", line 447, in _run_before_backward_function',
            'assert sub_module.training, "backward pass is invalid for module in evaluation mode"',
            "AssertionError",
            template("deepspeed:backward-pass-is-invalid-for-module"),
        ),
        ["evaluation mode", "before 0.15.4"],
        ["model.train()", "'deepspeed>=0.15.4'", "#6662"],
    ),
]


@pytest.mark.parametrize(("text", "said", "fix"), CASES)
def test_the_coordinators_refusal_is_a_likely_deepspeed_release_bug(text, said, fix):
    found = explained(text)
    assert found.id == "log.library_version_bug", (found.id, found.summary)
    assert found.details["confidence"] == "likely", found.summary
    for words in said:
        assert words in found.summary, (words, found.summary)
    for words in fix:
        assert words in found.fix, (words, found.fix)


def test_the_catalog_maps_the_coordinators_templates():
    for ident in (
        "deepspeed:still-have-inflight-params",
        "deepspeed:param-still-in-flight",
        "deepspeed:cannot-partition-param-in-flight",
        "deepspeed:tracing-error-at-step-module-id",
        "deepspeed:backward-pass-is-invalid-for-module",
        "third_party:deepspeed-zero3-fetch-assert-available",
    ):
        assert by_id()[ident].kind == "library_version_bug", ident


NEAR_MISSES = [
    # the coordinator's own warning when the trace is re-recorded: the run goes on
    template("deepspeed:invalidate-trace-cache-step-expected-module", "271", "2", "271") + "\n",
    # DeepSpeed's debug line once the trace is recorded
    "[INFO] completed record trace of 12 sub modules: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n",
    # another tool's dict in an AssertionError, and other words about parameters and flights
    "AssertionError: {'id': 3, 'name': 'layer1'}\n",
    "RuntimeError: expected param groups to be available before step()\n",
    "WARNING: flight recorder dump still in flight, waiting 5s\n",
    "ValueError: module is in evaluation mode; call .train() to fine-tune it\n",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_do_not_read_as_the_coordinator(text):
    found = explained(text)
    assert "ZeRO-3" not in found.summary, (text, found.id, found.summary)


# DeepSpeed ZeRO's optimizer given a group with no trainable parameter (kinds/zero_frozen_groups.py): torch's and
# CPython's empty-list errors under ZeRO's own frames, read as optimizer_no_params (likely)
FROZEN = [
    (
        '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1419, in '
        "_configure_zero_optimizer\n"
        "    optimizer = DeepSpeedZeroOptimizer(\n"
        f'  File "{SITE}/stage_1_and_2.py", line 312, in __init__\n'
        "    self.flatten_dense_tensors_aligned(\n"
        + template(
            "third_party:deepspeed-zero12-flatten-frozen-group", SITE.rsplit("/deepspeed/", 1)[0], "840"
        )
        + "\n    return self.flatten(align_dense_tensors(tensor_list, alignment))\n"
        "RuntimeError: torch.cat(): expected a non-empty list of Tensors\n",
        "ZeRO stage 1/2",
    ),
    (
        f'  File "{SITE}/stage3.py", line 923, in initialize_optimizer_states\n'
        "    " + template("third_party:deepspeed-zero3-largest-numel-partitioned-groups") + "\n"
        "ValueError: max() arg is an empty sequence\n",
        "ZeRO-3",
    ),
    (
        f'  File "{SITE}/stage3.py", line 307, in _create_fp16_partitions_with_defragmentation\n'
        "    " + template("third_party:deepspeed-zero3-largest-partitioned-param-numel") + "\n"
        "ValueError: max() iterable argument is empty\n",
        "ZeRO-3",
    ),
]


@pytest.mark.parametrize(("text", "stage"), FROZEN)
def test_zeros_empty_list_errors_are_a_group_with_nothing_to_train(text, stage):
    found = explained(text)
    assert found.id == "log.optimizer_no_params", (found.id, found.summary)
    assert found.details["confidence"] == "likely", found.summary
    assert f"DeepSpeed {stage}" in found.summary
    assert "if p.requires_grad" in found.fix and "no optimizer" in found.fix


def test_the_same_frames_with_another_error_or_the_same_error_elsewhere_are_not_read_so():
    # ZeRO's flatten running out of memory, and a data loop's empty join: not a frozen group
    oom = (
        f'  File "{SITE}/stage_1_and_2.py", line 840, in flatten_dense_tensors_aligned\n'
        "    return self.flatten(align_dense_tensors(tensor_list, alignment))\n"
        "RuntimeError: [enforce fail at alloc_cpu.cpp:83] . DefaultCPUAllocator: can't allocate memory: you tried "
        "to allocate 26843545600 bytes. Error code 12 (Cannot allocate memory)\n"
    )
    assert explained(oom).id != "log.optimizer_no_params"
    loop = (
        '  File "eval.py", line 40, in evaluate\n'
        "    preds = torch.cat(outputs)\n"
        "RuntimeError: torch.cat(): expected a non-empty list of Tensors\n"
    )
    assert explained(loop).id == "log.dataset_too_small"


# ZeRO-3's attributes read off a plain torch parameter (kinds/zero3_params.py): transformers' Trainer counting
# parameters (trainer_pt_utils.py get_model_param_count, 4.28-4.31), and ZeRO-3's coordinator reading ds_status of
# a parameter the model's own code assigned after zero.Init; likely either way
HF = "/opt/conda/lib/python3.10/site-packages/transformers"
COUNTED = (
    "Traceback (most recent call last):\n"
    '  File "/kaggle/working/train.py", line 78, in <module>\n'
    "    trainer.train()\n"
    f'  File "{HF}/trainer.py", line 1793, in _inner_training_loop\n'
    '    logger.info(f"  Number of trainable parameters = {get_model_param_count(model, trainable_only=True):,}")\n'
    f'  File "{HF}/trainer_pt_utils.py", line 1053, in get_model_param_count\n'
    "    return sum(numel(p) for p in model.parameters() if not trainable_only or p.requires_grad)\n"
    f'  File "{HF}/trainer_pt_utils.py", line 1046, in numel\n'
    "    return p.ds_numel\n"
    "AttributeError: " + template("third_party:transformers-zero3-parameter-no-ds-numel") + "\n"
)
REPLACED = (
    "Traceback (most recent call last):\n"
    '  File "eval.py", line 51, in <module>\n'
    "    out = engine(batch)\n"
    f'  File "{SITE}/partitioned_param_coordinator.py", line 290, in fetch_sub_module\n'
    "    params_to_fetch = frozenset(iter_params(current_submodule))\n"
    "AttributeError: " + template("third_party:deepspeed-zero3-parameter-no-ds-status") + "\n"
)


def test_the_trainers_parameter_count_under_zero3_names_the_transformers_release():
    found = explained(COUNTED)
    assert found.id == "log.library_version_bug", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "get_model_param_count" in found.summary and "4.28 to 4.31" in found.summary
    assert "transformers>=4.32" in found.fix


def test_a_parameter_zero3_never_converted_names_the_model_code_that_replaced_it():
    found = explained(REPLACED)
    assert found.id == "log.library_version_bug", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "log.zero3_partitioned_weights" in found.details["alternatives"]
    assert "ds_status" in found.summary and "GatheredParameters" in found.fix


def test_the_catalog_maps_the_unconverted_parameter_templates():
    for ident in (
        "third_party:transformers-zero3-parameter-no-ds-numel",
        "third_party:deepspeed-zero3-parameter-no-ds-status",
    ):
        assert by_id()[ident].kind == "library_version_bug", ident


@pytest.mark.parametrize(
    "text",
    [
        # another object's ds_ attribute (DeepSpeed's op not built), and a parameter lacking a plain attribute
        "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n",
        "AttributeError: 'Parameter' object has no attribute 'main_grad'\n",
    ],
)
def test_other_missing_attributes_are_not_read_as_an_unconverted_parameter(text):
    assert "ZeRO-3" not in explained(text).summary
