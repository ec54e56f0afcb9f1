"""The certainty review's second part (helper V7, issue 19): recognisers that spoke with certainty on a line their
source prints for more than one cause, read against that source. Each test gives the line as its source prints
it, alone (likely, the other reading named), and beside the fact that rules the other reading out (certain).

- accelerate's "Cannot apply desired operation due to shape mismatches" (``accelerate/utils/operations.py``
  ``verify_operation``) is raised after every rank joined one ``gather_object`` of the shapes: the ranks' tensors
  differ (``gathered_shapes_differ``), not their collectives. The exchange carries the shapes only, so a rank in
  ``gather`` and another in ``reduce`` print it too: likely alone, certain where two ranks name the same
  operation or torchdoctor's own debug mode (which compares the operation first) adds its call sites.
"""

from __future__ import annotations

from explaining import explained


def likely_with(text: str, kind: str, other: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    assert other in found.details["alternatives"], found.details["alternatives"]
    return found


def certain(text: str, kind: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "certain", found.summary
    return found


SHAPES = (
    "accelerate.utils.operations.DistributedOperationException: Cannot apply desired operation due to shape "
    "mismatches. All shapes across devices must be valid.\n\nOperation: `accelerate.utils.operations.gather`\n"
    "Input shapes:\n  - Process 0: [8, 112]\n  - Process 1: [8, 97]\n"
)


def test_accelerates_shape_check_is_tensors_that_differ_not_collectives_that_differ():
    found = likely_with(SHAPES, "gathered_shapes_differ", "log.rank_divergence")
    assert "pad_across_processes" in found.fix and "use_gather_object=True" in found.fix
    assert "Process 0: [8, 112], Process 1: [8, 97]" in found.summary
    both = "".join(f"[rank{r}]: " + line + "\n" for r in (0, 1) for line in SHAPES.splitlines())
    certain(both, "gathered_shapes_differ")
    sites = SHAPES + "Called from:\n  - Process 0-1: /home/ana/project/eval.py:61 in evaluate\n"
    certain(sites, "gathered_shapes_differ")


def test_a_mismatch_of_operations_stays_rank_divergence():
    # the near miss: torchdoctor's own message for ranks in different operations is not a shape mismatch
    text = (
        "Cannot apply desired operation because the processes called different operations at the same point. "
        "All processes must call the same collectives in the same order.\n\nOperations:\n"
        "  - Process 0: `gather`\n  - Process 1: `reduce`\n"
    )
    assert explained(text).id != "log.gathered_shapes_differ"
    assert (
        explained("Cannot apply desired operation due to device mismatches.\n").id
        != "log.gathered_shapes_differ"
    )
