"""The hang's verdict from the ranks' stacks alone: which ranks never reached the collective the others wait
in, where they are instead, and the line of the user's code that explains it (a condition on the rank, a loop
some ranks left early). `Verdict` is what every verdict of the hang report is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torchdoctor.hang.places import collective_of, ranks_named, silent_text, user_frame
from torchdoctor.hang.source import Frame, condition_on_chain, enclosing_loop, loop_exits, user_call
from torchdoctor.hang.stacks import RankStack


@dataclass
class Verdict:
    """What the report concludes: the kind of fault, the rank(s) that caused it and the line (``where``);
    ``culprits`` is empty when the evidence cannot decide."""

    text: str
    kind: (
        str  # never_entered | mismatch | order | left_loop | finished | silent | all_inside | stuck | unclear
        # | stalled (a group of one rank whose collective waits on its own GPU)
        # | failed | ended_early (a failed job)
    )
    culprits: list[int] = field(default_factory=list)
    where: Frame | None = None
    condition: str = ""
    share: float = field(default=0.0, repr=False)  # how many of the group's ranks went the other way

    def to_dict(self) -> dict:
        """JSON-able, for ``verdict.json``."""
        where = {"file": self.where.file, "line": self.where.line} if self.where else None
        return {
            "kind": self.kind,
            "culprits": self.culprits,
            "where": where,
            "condition": self.condition,
            "text": self.text,
        }


def stacks_verdict(stacks: list[RankStack]) -> Verdict:
    """The verdict from where the ranks are: the culprit rank(s) and line, the kind, the text."""
    waiting: dict[str, list[int]] = {}
    elsewhere: list[RankStack] = []
    for stack in stacks:
        collective = collective_of(stack.frames) if stack.frames else None
        if collective:
            waiting.setdefault(collective, []).append(stack.rank)
        else:
            elsewhere.append(stack)
    if len(waiting) == 1 and elsewhere:
        ((collective, ranks),) = waiting.items()
        absent = [s.rank for s in elsewhere]
        waiters = [s for s in stacks if s.rank in ranks]
        left = left_the_loop(waiters, elsewhere)
        if left:
            return left
        finished = [s.rank for s in elsewhere if not s.frames and "returned" in s.note]
        if finished and len(finished) == len(absent):
            return _finished(finished, ranks, collective, waiters)
        culprit = elsewhere[0] if len(elsewhere) == 1 else None
        where = user_frame(culprit) if culprit else None
        if "inside torchdoctor's" in collective:
            return Verdict(
                f"{ranks_named(absent)} never reached {collective}, where {ranks_named(ranks)} wait: every rank must call the "
                "function that contains it the same number of times.",
                "never_entered",
                absent,
                where,
            )
        hint, condition = rank_condition_hint(waiters[:1] + elsewhere)
        text = f"{ranks_named(absent)} never reached {collective}, where {ranks_named(ranks)} wait: " + (
            hint
            or "look for a condition on the rank (an `if rank == ...`, an early `return` or `break`) before it."
        )
        return Verdict(text + silent_text(elsewhere), "never_entered", absent, where, condition)
    if len(waiting) > 1:
        places = "; ".join(f"{ranks_named(r)} in {c}" for c, r in waiting.items())
        odd = min(waiting.values(), key=len)
        alone = odd if sum(len(r) == len(odd) for r in waiting.values()) == 1 else []
        text = f"the ranks wait in different collectives ({places}): they must call them in the same order."
        if not alone:
            return Verdict(text, "order")
        first = next(s for s in stacks if s.rank == alone[0])
        found = condition_on_chain(first.frames)
        if not found:
            return Verdict(text, "order", alone, user_frame(first))
        frame, condition = found  # the call chain of the odd rank(s) passed a condition on the rank
        return Verdict(
            f"{text}\n{frame.file}:{frame.line} sits under a condition on the rank, {condition}: "
            f"{ranks_named(alone)} took another path there; every rank must make the same collective calls.",
            "order",
            alone,
            Frame(frame.file, condition.line, frame.function),
            str(condition),
        )
    silent = [s for s in stacks if not s.frames]
    if waiting and silent:
        ((collective, ranks),) = waiting.items()
        return Verdict(
            f"{ranks_named(ranks)} wait in {collective}; {ranks_named([s.rank for s in silent])} gave no stack."
            + silent_text(silent),
            "silent",
            [s.rank for s in silent],
        )
    if waiting:
        ((collective, ranks),) = waiting.items()
        return Verdict(
            f"every rank waits in {collective}: a rank on another node, or a peer process, never came.",
            "all_inside",
        )
    return Verdict("no rank is in a collective: the run is stuck in the script itself.", "stuck")


def _finished(finished: list[int], ranks: list[int], collective: str, waiters: list[RankStack]) -> Verdict:
    """Some ranks' scripts returned while the others wait in ``collective``: where the waiters' call sits under
    a condition on the rank that few ranks take (``if rank == 0: dist.barrier()``), that condition, with the
    line it is on; else the ranks made different numbers of calls, for a reason the stacks do not show. (The
    same call failing instead, on gloo without debug mode, is `failure.ended_early`'s, which names it too.)"""
    text = f"{ranks_named(finished)} had already finished the script while {ranks_named(ranks)} wait in {collective}"
    branch = condition_on_chain(waiters[0].frames) if waiters else None
    if branch is not None and branch[1].few is not False:
        frame, condition = branch
        return Verdict(
            f"{text}, a call made under a condition on the rank at {frame.file}:{condition.line} "
            f"(`{condition.code}`). {ON_EVERY_RANK}",
            "finished",
            finished,
            Frame(frame.file, condition.line, frame.function),
            str(condition),
        )
    return Verdict(
        f"{text}: the ranks made different numbers of collective calls (a loop that ran longer on some ranks, "
        "uneven data per rank, a condition on the rank).",
        "finished",
        finished,
    )


# A collective under a condition few ranks take (`if rank == 0: dist.barrier()`): what fixes it.
ON_EVERY_RANK = (
    "The ranks that skip that branch never make the collective inside it (a barrier, a full state dict's gather, a "
    "DTensor's full_tensor(), a metric synchronised across ranks) and go on: make the call on every rank and keep "
    "only the write or the print under the condition."
)

# What fixes ranks that ran different numbers of iterations (torch/distributed/algorithms/join.py: DDP's
# `join()` shadows the collectives of the ranks that ran out of batches).
UNEVEN_ITERATIONS = (
    "The ranks ran different numbers of iterations: give every rank the same number of batches "
    "(DistributedSampler(drop_last=True), data split evenly), or run the loop under DDP's "
    "`with model.join():` (torch.distributed.algorithms.Join), which lets ranks with fewer batches finish."
)


def left_the_loop(waiters: list[RankStack], elsewhere: list[RankStack]) -> Verdict | None:
    """When the waiting ranks are inside a loop of the user's code and the others are past it (or have
    finished), the ranks ran different numbers of iterations: say so."""
    frame = user_frame(waiters[0]) if waiters else None
    loop = enclosing_loop(frame.file, frame.line) if frame else None
    if loop is None:
        return None
    first, last = loop
    out = []
    for stack in elsewhere:
        finished = not stack.frames and ("returned" in stack.note or "exited" in stack.note)
        if not finished and not _past(waiters[0].frames, stack.frames, frame, last):
            return None  # inside the loop too, not there yet, or no telling: no claim
        out.append(stack)
    place = "; ".join(_where(s) for s in out[:4])
    collective = collective_of(waiters[0].frames)
    text = (
        f"{ranks_named([s.rank for s in out])} left the loop at {frame.file}:{first}-{last} while "
        f"{ranks_named([s.rank for s in waiters])} still run it, waiting in {collective} ({frame.file}:{frame.line}); "
        f"{place}. {_exits_text(frame.file, first)}{UNEVEN_ITERATIONS}"
    )
    return Verdict(text, "left_loop", [s.rank for s in out], Frame(frame.file, first, frame.function))


# a loop one rank leaves early by a decision of its own (a break on its own loss, on is_main_process): what stops
# every rank together (found with accelerate's examples/by_feature/early_stopping.py given a plain break taken
# on the main process only: rank 0 waited in gather_for_metrics, rank 1 in the next backward's all-reduce)
STOP_TOGETHER = (
    "A rank that decides alone to leave the loop (a break on its own loss or metric, or under a condition on the "
    "rank) leaves the others waiting in the loop's collectives: decide together, with a flag every rank reduces "
    "(stop = torch.tensor(float(should_stop)); dist.all_reduce(stop); if stop.item() > 0: break), accelerate's "
    "accelerator.set_trigger() and `if accelerator.check_trigger(): break` on every rank, or Lightning's "
    "self.trainer.should_stop (EarlyStopping syncs it). "
)


def _where(stack: RankStack) -> str:
    """Where a rank that left the loop is: its innermost line of the user's code (not torchdoctor's own wrapper
    or a library's frame) and the collective it waits in there."""
    if not stack.frames:
        return f"rank {stack.rank}: {stack.note}"
    frame = user_call(stack.frames) or stack.frames[-1]
    collective = collective_of(stack.frames)
    return f"rank {stack.rank} is in {frame.function} ({frame.file}:{frame.line})" + (
        f", waiting in {collective}" if collective else ""
    )


def _exits_text(file: str, first: int) -> str:
    """The loop's early exits (``break``, ``return``) named, with what makes every rank stop together; empty where
    the loop has none (the ranks ran different numbers of batches)."""
    exits = loop_exits(file, first)
    if not exits:
        return ""
    named = ", ".join(f"line {line}: `{code[:120]}`" for line, code in exits[:3])
    return f"The loop can be left early at {named}. {STOP_TOGETHER}Otherwise: "


def _past(waiter: list[Frame], other: list[Frame], loop_frame: Frame, loop_end: int) -> bool:
    """Whether ``other`` is past the loop ``waiter`` is in: walking both stacks from the outermost frame, at
    the first frame where they stand on different lines of the same function, ``other`` is further down
    (past the loop's last line, in the loop's own function; past the call, in an outer one)."""
    for mine, theirs in zip(waiter, other, strict=False):
        if (mine.file, mine.function) != (theirs.file, theirs.function):
            return False
        if mine.line != theirs.line:
            if mine is loop_frame:
                return theirs.line > loop_end
            return theirs.line > mine.line
    return False


def rank_condition_hint(stacks: list[RankStack]) -> tuple[str, str]:
    """The innermost condition on the rank around any of the user's frames of these ranks, named; and the
    condition alone."""
    for stack in stacks:
        found = condition_on_chain(stack.frames)
        if found:
            frame, condition = found
            text = f"rank {stack.rank}'s line {frame.file}:{frame.line} sits under a condition on the rank, {condition}"
            if collective_of(
                stack.frames
            ):  # in a collective there: the path the condition sent it on has one
                # (u41: under --debug, rank 0 held in debug mode's check of an all_reduce in nanoGPT's rank-0-only
                # evaluation was named with its condition and no fix); a rank stuck outside any is not told this
                text += ": the ranks that skip that branch never make the collective inside it; make the call on every rank"
            return text + ".", str(condition)
    return "", ""
