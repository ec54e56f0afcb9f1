"""benchmarks/first_sentence_anchors.py: the recogniser/template pairs whose anchors all lie past the template's
first sentence; and a message cut after its first sentence, read where an anchor was added there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import first_sentence_anchors  # noqa: E402
from explaining import explained, filled  # noqa: E402


def test_the_first_sentence_ends_at_a_full_stop_before_a_space_not_inside_a_name():
    first = first_sentence_anchors.first_sentence
    assert (
        first("Invalid communication_data_type. Supported data types: {}")
        == "Invalid communication_data_type."
    )
    assert first("torch.cuda.set_device({}) failed, e.g. a bad ordinal. Use {}.") == (
        "torch.cuda.set_device({}) failed, e.g. a bad ordinal."
    )
    assert first("assert update_successful\nAssertionError") == "assert update_successful"
    assert first("No full stop at all") == "No full stop at all"


def test_a_pair_counted_has_no_anchor_in_its_first_sentence():
    pairs = first_sentence_anchors.unread_pairs()
    assert pairs
    for kind, ident, head, _ in pairs:
        assert ident and head and kind
    # a pair this session anchored on its first sentence is no longer counted
    assert not [p for p in pairs if p[1] == "deepspeed:check-batch-related-parameters-train-batch"]


@pytest.mark.parametrize(
    ("ident", "values", "kind"),
    [
        # DeepSpeed's batch check, cut after "Check batch related parameters."
        (
            "deepspeed:check-batch-related-parameters-train-batch",
            ("8", "2", "2", "1"),
            "deepspeed_config_mismatch",
        ),
        # torch's DDP reducer, its message cut after the parameter's first use
        ("torch_cpp:then-got-used-in-the-second", (), "ddp_unused_parameters"),
        # datasets' load of a folder written by save_to_disk
        ("datasets:you-are-trying-to-load-dataset", (), "dataset_saved_to_disk"),
    ],
)
def test_a_message_cut_after_its_first_sentence_is_read(ident, values, kind):
    text = filled(ident, *values)
    head = first_sentence_anchors.first_sentence(text)
    assert head != text  # the message goes on past it
    found = explained(head + "\n")
    assert found.id == f"log.{kind}", (head, found.summary)
