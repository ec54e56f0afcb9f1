"""A shape mismatch in a collective that is not a gather: torchdoctor's debug mode and accelerate's
``verify_operation`` print the same "Cannot apply desired operation due to shape mismatches" for an ``all_reduce``,
a ``reduce`` or a ``broadcast`` as for a gather. Padding a gather's tensors is no fix there: the finding names that
collective and says every rank's shape must be the same (seen on a real 2-rank gloo run of ``dist.all_reduce`` under
``torchdoctor launch --debug``, which read as a gather to pad until session 41)."""

from __future__ import annotations

import pytest
from explaining import explained

from torchdoctor.distributed.messages import mismatch_message

pytestmark = pytest.mark.usefixtures("every_message_seen")


def _debug_mode(operation: str) -> str:
    # the text torchdoctor's debug mode raises, as a worker's traceback prints it
    entries = {
        r: {"operation": operation, "shape": [4 - r, 2], "site": "/home/ana/train.py:5 in <module>"}
        for r in (0, 1)
    }
    return "torchdoctor.distributed.DistributedOperationException: " + mismatch_message(entries) + "\n"


@pytest.mark.parametrize("operation", ["torch.distributed.all_reduce", "torch.distributed.reduce"])
def test_a_reduction_of_tensors_of_different_shapes_is_named_as_that_reduction(operation):
    found = explained(_debug_mode(operation))
    name = operation.rsplit(".", 1)[-1]
    assert found.id == "log.gathered_shapes_differ", found.summary
    assert f"different shapes to {name} ({operation})" in found.summary and "not a gather" in found.summary
    assert "Process 0: [4, 2], Process 1: [3, 2]" in found.summary
    assert "element by element" in found.fix and "pad_across_processes" not in found.fix


def test_a_broadcast_of_tensors_of_different_shapes_says_to_allocate_the_sources_shape():
    found = explained(_debug_mode("torch.distributed.broadcast"))
    assert "different shapes to broadcast (torch.distributed.broadcast)" in found.summary
    assert "source's shape" in found.fix and "pad_across_processes" not in found.fix


def test_accelerates_reduce_is_a_reduction_and_its_gather_still_a_gather():
    # accelerate/utils/operations.py verify_operation names the function it wraps: module and name
    text = (
        "accelerate.utils.operations.DistributedOperationException: Cannot apply desired operation due to shape "
        "mismatches. All shapes across devices must be valid.\n\nOperation: `accelerate.utils.operations.{}`\n"
        "Input shapes:\n  - Process 0: torch.Size([8, 112])\n  - Process 1: torch.Size([8, 97])\n"
    )
    reduced = explained(text.format("reduce"))
    assert "different shapes to reduce (accelerate.utils.operations.reduce)" in reduced.summary
    assert "element by element" in reduced.fix
    gathered = explained(text.format("gather"))
    assert "not a gather" not in gathered.summary and "pad_across_processes" in gathered.fix
