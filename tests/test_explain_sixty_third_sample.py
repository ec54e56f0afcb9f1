"""The sixty-third sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2967-3016)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# uma-pi1/kge (LibKGE) kge/job/eval_entity_ranking.py, the tie check of #224 (2021-09-13), which raised until
# 302c5a6 (2021-11-02) made entity_ranking.tie_handling.warn_only the default:
#     error_message = "Error in tie-handling. The scores assigned to a triple by the SPO and SP_/_PO scoring
#     implementations were not 'equal' given the configured tolerances. Verify ..."
#     raise ValueError(error_message)
def test_libkge_tie_handling_names_transe_cdist_fix_and_warn_only():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "/home/u/kge/kge/job/eval_entity_ranking.py", line 274, in _evaluate\n'
        "    raise ValueError(error_message)\n"
        "ValueError: Error in tie-handling. The scores assigned to a triple by the SPO and SP_/_PO scoring "
        "implementations were not 'equal' given the configured tolerances. Verify the model's scoring "
        "implementations or consider increasing tie-handling tolerances.\n",
        "library_version_bug",
        "likely",
    )
    assert "5127cf2" in found.summary and "cdist" in found.summary
    assert "git pull" in found.fix and "warn_only" in found.fix and "atol" in found.fix


def test_another_tie_message_is_not_libkges():
    found = explained("ValueError: Error in tie-handling of the ranks: unknown type 'average'\n")
    assert "LibKGE" not in found.summary
