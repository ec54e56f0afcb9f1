"""An IndexKernel device-side assert from a seq2seq run with labels (huggingface/transformers#33196, train 5822),
read with the seen_on table as it is: the lines show neither the model nor a length, so the lead is the assert,
only likely, with a sequence longer than the positions named beside it (never the sequence's kind by guess)."""

from __future__ import annotations

from explaining import lead


def test_an_index_kernel_assert_with_no_length_stays_a_likely_device_assert_naming_the_sequence():
    found = lead("5822.txt")
    assert (found.id, found.details["confidence"]) == ("log.device_assert", "likely"), found.summary
    assert "log.sequence_too_long" in found.details.get("alternatives", []), found.details
