"""A restarted job's console output read one attempt at a time, as its --log-dir folder's attempt_N folders are.

torchrun (torch 2.13) prints nothing at its default level when it restarts a worker group under --max-restarts:
the one line that ends an attempt is its multiprocessing context's "failed (exitcode: 1) local_rank: 1 (pid: 16183)
of binary: ...", logged once per failed worker group (torch/distributed/elastic/multiprocessing/api.py), after
which the next attempt's workers print. So the console is cut after each such line. What follows the last one
is that attempt's end (torchrun's failure summary, `torchdoctor launch`'s verdict) unless it holds a worker's
errors of its own (a rank's prefix): then it is one more attempt, which did not end in a failed group (stopped
from outside, or still running when the log was taken).
"""

from __future__ import annotations

from torchdoctor.explain.collect import Collector
from torchdoctor.explain.recognisers import Context

# what is printed after a group's last failure: torchrun's summary, and `torchdoctor launch`'s own verdict on the
# run (the watchdog's report, a rank that ended early), read with the attempt that failed
_SUMMARY_KINDS = ("child_failed", "hang_verdict", "ranks_ended_early", "ranks_different_collectives")
_SUMMARY_TYPES = ("ChildFailedError",)
# facts torchrun's failure summary states: the last attempt's
_SUMMARY_FACTS = ("no_other_failures", "failure_summary_in_input", "worker_pids")


def split(collector: Collector) -> dict[int, Collector] | None:
    """One collector per attempt of the restarted job whose console ``collector`` read (a single log, with
    torchrun's group-failure line printed more than once, or once and errors after it); None when it shows
    one attempt only, or is not one log."""
    if len(collector.ctx.sources) != 1 or not collector.group_failures:
        return None
    ends = _ends(collector)
    attempts = len(ends)
    # a worker's own output after the last group failure (its rank known: torch's [rankN]: prefix, --tee's
    # [defaultN]:) is another attempt's; torchrun's summary below it quotes the failed worker's error unprefixed
    after = [
        h for h in collector.hits if h.line > ends[-1] and h.kind not in _SUMMARY_KINDS and h.rank is not None
    ]
    after_raised = [
        r
        for r in collector.raised
        if r.line > ends[-1] and r.type not in _SUMMARY_TYPES and r.rank is not None
    ]
    if after or after_raised:
        attempts += 1  # a last attempt that did not end in a failed group
    if attempts < 2:
        return None
    return {attempt: _part(collector, ends, attempt, attempts) for attempt in range(attempts)}


def _ends(collector: Collector) -> list[int]:
    """The lines that end an attempt: torchrun's group failures of one torchrun (another pid is another node's
    agent, in a log of several nodes), each after some worker output of its own (not a second agent's line for
    the same failure)."""
    agent = collector.group_failures[0][1]
    ends: list[int] = []
    for line, pid in collector.group_failures:
        if pid != agent:
            continue
        above = ends[-1] if ends else -1
        if (
            not ends
            or any(above < r.line < line and r.type not in _SUMMARY_TYPES for r in collector.raised)
            or any(above < h.line < line and h.kind not in _SUMMARY_KINDS for h in collector.hits)
        ):
            ends.append(line)
    return ends


def attempt_at(ends: list[int], line: int, attempts: int) -> int:
    """The attempt a line of the console belongs to: the number of group failures printed above it, the
    lines after the last one going with the last attempt."""
    return min(sum(end < line for end in ends), attempts - 1)


def _part(collector: Collector, ends: list[int], attempt: int, attempts: int) -> Collector:
    part = Collector()
    last = attempt == attempts - 1
    part.hits = [h for h in collector.hits if attempt_at(ends, h.line, attempts) == attempt]
    part.raised = [r for r in collector.raised if attempt_at(ends, r.line, attempts) == attempt]
    part.ctx = _context(collector.ctx, last)
    part.root_rank = collector.root_rank if last else None
    for hit in part.hits:
        part._per_kind[hit.kind] = part._per_kind.get(hit.kind, 0) + 1
    return part


def _context(whole: Context, last: bool) -> Context:
    """The whole console's context for one attempt: torchrun's summary facts only for the last."""
    facts = {k: v for k, v in whole.facts.items() if last or k not in _SUMMARY_FACTS}
    return Context(
        facts=facts,
        ranks=set(whole.ranks),
        sources=list(whole.sources),
        last_error_line=whole.last_error_line,
        candidates=whole.candidates,
    )
