"""benchmarks/wrapped_anchors.py: an anchor a hard wrap cut across two lines, found on the two joined."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import wrapped_anchors  # noqa: E402

# torch's device-mismatch message (tests/fixtures/logs) as an 80-column terminal wraps it
MESSAGE = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def test_a_message_wrapped_at_80_columns_inside_its_anchor_is_found_on_the_joined_lines():
    logged = "2024-05-01 10:00:00,123 - train - ERROR - " + MESSAGE  # behind a logger's header
    wrapped = [logged[:80], logged[80:]]
    assert wrapped[0].endswith("Expected all tensors to ")
    ((number, kinds, anchors),) = wrapped_anchors.split_anchors(wrapped)
    assert number == 1 and "device_mismatch" in kinds and anchors


def test_a_message_whole_on_its_line_or_a_wrap_that_splits_no_anchor_is_not_counted():
    assert wrapped_anchors.split_anchors([MESSAGE, '  File "train.py", line 3, in <module>']) == []
    # the wrap falls after the anchor: the first line holds it whole already
    long_line = MESSAGE + " " + "x" * 10
    assert wrapped_anchors.split_anchors([long_line[:110], long_line[110:]]) == []
