"""The user's line of a collective the ranks disagreed on, read from the peer's traceback: gloo's size check
(``op.preamble.length <= op.nbytes``) aborts its own rank in C++ with no Python traceback, and the rank it was
exchanging with raises "Connection reset by peer" from the same collective, through the user's line."""

from __future__ import annotations

from torchdoctor.explain import first_failure
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.kinds.gather_shapes import TP_SAME_INPUT
from torchdoctor.explain.ranks import hit_rank
from torchdoctor.explain.recognisers import Hit

NEAR = 60  # lines: a peer's closed connection read this close to an exception of a rank unknown is that exception
# frames a tensor-parallel layer's collective runs through (DTensor's redistribution, functional collectives)
_TENSOR_PARALLEL = ("torch/distributed/_functional_collectives.py", "torch/distributed/tensor/")


def peer_in_collective(by_kind: dict[str, list[Hit]], raised: list[Raised]) -> Raised | None:
    """The first exception whose traceback passes through the user's code and that is a rank's closed connection
    to its peer (log.peer_closed on the same rank): that rank's side of the collective; None where none is."""
    closed = by_kind.get("peer_closed", [])
    for candidate in sorted(raised, key=lambda r: r.order):
        if candidate.frame is None or first_failure.is_library(candidate.frame.file):
            continue
        if any(_same_failure(hit, candidate) for hit in closed):
            return candidate
    return None


def named(peer: Raised) -> tuple[str, str, str]:
    """(a phrase for the summary, the fix's paragraph naming where ``peer``'s rank made the collective, a
    paragraph to lead the fix: where its traceback runs through a tensor-parallel layer's collective, that every
    rank of the group needs the same input; else empty)."""
    where = first_failure.where(peer)
    rank = f"rank {peer.rank}" if peer.rank is not None else "the peer"
    phrase = f"{rank} was in a collective at {where} when its peer aborted"
    paragraph = (
        f"{rank[0].upper()}{rank[1:]} was in a collective at {where} when its peer's size check stopped the run "
        "(gloo aborts the rank that finds the sizes differ, with no Python traceback of its own): the peer's call "
        "is the same line where the ranks run the same code, else the collective it made in that one's place."
    )
    files = [frame.file.replace("\\", "/") for frame in peer.frames]
    if any(part in file for file in files for part in _TENSOR_PARALLEL):
        phrase += (
            "; its traceback runs through a tensor-parallel (DTensor) layer: the ranks were likely given different "
            "inputs"
        )
        return phrase, paragraph, TP_SAME_INPUT
    return phrase, paragraph, ""


def _same_failure(hit: Hit, raised: Raised) -> bool:
    if raised.rank is not None:
        return hit_rank(hit) == raised.rank
    return hit.source == raised.source and hit.rank is None and abs(hit.line - raised.line) <= NEAR
