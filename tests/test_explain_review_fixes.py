"""Classes a review found, each read on its line as the source prints it beside a near miss that must not change.

5. RENDEZVOUS_OR_PORT's suggestive anchors are one list (its anchors and its ``generic``).
"""

from __future__ import annotations

import pytest
from explaining import explained

from torchdoctor.explain.kinds import BY_KIND, comm

# -- 5. one list per recogniser ---------------------------------------------------------------------------------


def test_rendezvous_anchors_are_its_decisive_and_suggestive_lists_once_each():
    rendezvous = BY_KIND["rendezvous_or_port"]
    assert rendezvous.generic is comm._RENDEZVOUS_SUGGESTIVE
    assert rendezvous.anchors == (*comm._RENDEZVOUS_DECISIVE, *comm._RENDEZVOUS_SUGGESTIVE)
    assert len(set(rendezvous.anchors)) == len(rendezvous.anchors)
    assert not set(comm._RENDEZVOUS_DECISIVE) & set(comm._RENDEZVOUS_SUGGESTIVE)


@pytest.mark.parametrize(
    "line, confidence",
    [
        (
            "RuntimeError: The server socket has failed to listen on [::]:29500 (errno: 98 - Address already in use).",
            "certain",
        ),
        ("torch.distributed.DistStoreError: Socket Timeout", "likely"),
        ("torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "likely"),
    ],
)
def test_rendezvous_confidence_is_unchanged(line, confidence):
    found = explained(line + "\n")
    assert found.id == "log.rendezvous_or_port" and found.details["confidence"] == confidence, found.summary
