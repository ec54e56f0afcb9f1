"""The rank that was not in the collective the others were blocked in, when Ctrl-C stopped them.

A collective returns only once every rank of its group has joined it, so where every rank but one was blocked
inside the same collective when the run was stopped, the one elsewhere (on a line of its own: a read, a lock, a
wait outside any collective, or another collective of its own) is the likely reason they waited. Said only when
each rank's place is known (ranks 0 to N-1, N >= 2), the others agree on one collective and exactly one rank is not
in it; with two ranks in two different collectives nothing tells which of them went another way, so nothing is
said. A run stopped while it still moved has ranks between collectives too: the reading stays "likely", and says
it holds if the run had stopped moving.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

# torch.distributed's collectives as the innermost Python function a blocked rank's stack shows (the C++ call below
# it shows no frame); point-to-point send/recv wait for one named peer and are left out
COLLECTIVES = frozenset(
    {
        "all_reduce",
        "all_gather",
        "all_gather_into_tensor",
        "_all_gather_base",
        "all_gather_object",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "_reduce_scatter_base",
        "all_to_all",
        "all_to_all_single",
        "broadcast",
        "broadcast_object_list",
        "reduce",
        "gather",
        "gather_object",
        "scatter",
        "scatter_object_list",
        "barrier",
        "monitored_barrier",
    }
)


# a collective called on the user's line ("dist.barrier()", "torch.distributed.all_reduce(t)"): a rank stopped in
# gloo's wait raises KeyboardInterrupt from torch's logging wrapper, not from the collective's own frame. Only a call
# on torch.distributed (or an alias of it ending in "dist", or accelerate's Accelerator) counts: functools.reduce(,
# torch.gather(, x.scatter( and np.add.reduce( share a collective's name; called bare (imported from
# torch.distributed) only a name no other library uses
_CALLED = re.compile(r"(?<![\w.])(?:(?P<receiver>[A-Za-z_][\w.]{0,80})\.)?(?P<call>\w{1,40})\(")
_DISTRIBUTED_RECEIVER = re.compile(r"(?:^|\.)(?:\w*dist|distributed|c10d|\w*accelerator)$", re.IGNORECASE)
_BARE_NAMES_SHARED = frozenset({"reduce", "gather", "scatter", "broadcast"})
_BLOCKED_IN = re.compile(r"\(blocked in (?P<call>[\w.<>]{1,120}), which had not returned\)$")


def collective_at(place: str) -> str | None:
    """The collective a rank's place (``train.py:9 in <module>: dist.barrier()``, with ``(blocked in barrier,
    which had not returned)`` where the launcher read it from a stack) shows it in, or None.

    >>> collective_at("train.py:9 in <module>: dist.barrier()"), collective_at("train.py:8 in f: time.sleep(6)")
    ('barrier', None)
    """
    blocked = _BLOCKED_IN.search(place)
    if blocked and blocked["call"] in COLLECTIVES:
        return blocked["call"]
    code = place.split(": ", 1)[1] if ": " in place else ""
    return next((m["call"] for m in _CALLED.finditer(code) if _is_collective_call(m)), None)


def _is_collective_call(call: re.Match) -> bool:
    """Whether a call on the user's line is torch.distributed's collective, not a function of the same name."""
    if call["call"] not in COLLECTIVES:
        return False
    if call["receiver"] is None:
        return call["call"] not in _BARE_NAMES_SHARED
    return bool(_DISTRIBUTED_RECEIVER.search(call["receiver"]))


def odd_rank_out(blocked_in: Mapping[int, str | None]) -> tuple[int, str, list[int]] | None:
    """(the rank elsewhere, the collective, the ranks blocked in it) from each rank's innermost blocked function
    (None: the rank was in Python code, or blocked in no function torch names a collective); None when the evidence
    does not single one rank out.

    >>> odd_rank_out({0: "barrier", 1: None, 2: "barrier"})
    (1, 'barrier', [0, 2])
    >>> odd_rank_out({0: "barrier", 1: "all_reduce"}) is None
    True
    """
    ranks = sorted(blocked_in)
    if len(ranks) < 2 or ranks != list(range(len(ranks))):
        return None
    calls = Counter(call for call in blocked_in.values() if call in COLLECTIVES)
    if not calls:
        return None
    (call, inside), *rest = calls.most_common()
    if rest and rest[0][1] == inside:
        return None  # as many ranks in another collective: which side went another way is not known
    outside = [rank for rank in ranks if blocked_in[rank] != call]
    if len(outside) != 1 or (blocked_in[outside[0]] in COLLECTIVES and inside < 2):
        return None
    return outside[0], call, [rank for rank in ranks if blocked_in[rank] == call]


def culprit_sentence(found: tuple[int, str, list[int]], place: str) -> str:
    """The likely culprit in words: ``found`` from `odd_rank_out`, ``place`` where that rank was."""
    rank, call, waiting = found
    who = f"rank {waiting[0]} was" if len(waiting) == 1 else f"ranks {', '.join(map(str, waiting))} were"
    return (
        f"{who} waiting in {call} and rank {rank} was not in it ({place}): if the run had stopped moving, rank "
        f"{rank} is likely the one they waited for"
    )
