"""The hang's verdict joined with the ranks' flight-recorder records: per process group, the first collective
the ranks disagree on (`torchdoctor.explain.flight_recorder.compare`), joined with where the ranks that are behind are
now: ``rank 1 never entered all_reduce #3 (train.py:10): it is in save_checkpoint (...)``.
"""

from __future__ import annotations

import linecache
import os

from torchdoctor.explain.flight_recorder.compare import disagreements
from torchdoctor.explain.flight_recorder.findings import stalled_text, to_finding, where_called
from torchdoctor.hang.places import collective_of, in_teardown, ranks_named, silent_text, user_frame
from torchdoctor.hang.source import Frame, condition_on_chain, is_user_code, takes_branch, user_call
from torchdoctor.hang.stacks import RankStack
from torchdoctor.hang.verdict import Verdict, left_the_loop, rank_condition_hint
from torchdoctor.rank_list import who


def joined_verdict(stacks: list[RankStack], records: dict) -> Verdict | None:
    """The flight recorder's first disagreement per process group, joined with where the ranks that are
    behind are now: ``rank 1 never entered all_reduce #3 (train.py:10): it is in save_checkpoint (...)``."""
    by_rank = {s.rank: s for s in stacks}
    found = disagreements(records, sorted(by_rank))
    if all(d.kind == "stalled" for d in found):  # no rank is behind anywhere
        went_on = [v for v in (_stalled(d, by_rank) for d in found) if v is not None]
        return max(went_on, key=_weight) if went_on else _all_inside(stacks, records)
    sentences: list[str] = []
    verdicts: list[Verdict] = []
    behind_in: list[tuple] = []  # (disagreement, verdict) of each group a rank never entered the call of
    for d in found:
        for example in d.examples.values():
            if not example.frames:  # dumped without stacks: the ranks waiting in it show where it was called
                ranks = next(r for s, r in d.entered.items() if d.examples[s] is example)
                live = next(
                    (by_rank[r].frames for r in ranks if r in by_rank and collective_of(by_rank[r].frames)),
                    [],
                )
                example.frames = [Frame(f.file, f.line, f.function) for f in live]
        if d.kind == "stalled":
            continue  # a group where no rank is behind says nothing of the group that broke
        if d.kind == "pending":
            one = _pending(d, by_rank)
        elif d.kind != "never_entered":
            one = _swapped_order(d, records) or mismatch_verdict(d, by_rank)
        else:
            one = _waits_alone_elsewhere(d, found, by_rank) or _never_entered(d, by_rank)
            behind_in.append((d, one))
        verdicts.append(one)
        sentences.append(one.text)
    # the culprit of the whole job: a rank that is behind in a group most of whose ranks went on (a lone
    # rank on another path), before one whose group is split evenly
    best = max(verdicts, key=_weight)
    if len([v for v in verdicts if v.kind == "never_entered"]) > 1 and best.kind == "never_entered":
        behind_in_collective = [
            r for v in verdicts for r in v.culprits if r in by_rank and collective_of(by_rank[r].frames)
        ]
        skipped = _skipped_call(behind_in, by_rank)
        if skipped is not None:  # one rank skipped a call; the wait in the other group is its consequence
            return skipped
        if behind_in_collective:  # every group waits for a rank that waits in another group: a cycle
            best = Verdict(best.text, "order", best.culprits, best.where, best.condition)
            sentences.append(
                f"Each group waits for a rank that waits in another group: {who(best.culprits)} called the "
                "groups' collectives in another order than the others; every rank must call them in the same "
                "order."
            )
    text = "\n".join(sentences)
    return Verdict(text, best.kind, best.culprits, best.where, best.condition)


def _waits_alone_elsewhere(d, found: list, by_rank: dict[int, RankStack]) -> Verdict | None:
    """The one rank behind in group ``d`` waits in a collective of another group that no other rank entered
    (a subgroup whose other members skipped the call; gloo's dumps do not say who the members are): it is held
    up there, not the one that went another way, so it is not blamed. The call's condition on the rank, where
    there is one, is the line to fix."""
    if len(d.behind) != 1 or d.behind[0] not in by_rank or not collective_of(by_rank[d.behind[0]].frames):
        return None
    rank = d.behind[0]
    alone = next(
        (
            other
            for other in found
            if other.pg != d.pg and other.kind == "stalled" and list(other.entered.values()) == [[rank]]
        ),
        None,
    )
    if alone is None:
        return None
    (waited,) = d.examples.values()
    (own,) = alone.examples.values()
    entered = sorted(r for ranks in d.entered.values() for r in ranks)
    sentences = [
        f"rank {rank} never entered {waited.shape()}{_ddp_where(waited)} of process group {d.pg}{_named(d)}, "
        f"which {who(entered)} entered: rank {rank} waits in {own.shape()}{where_called(own)} of process "
        f"group {alone.pg}{_named(alone)}, which no other rank entered. The other member(s) of "
        f"process group {alone.pg} never made that call, so neither group moves: rank {rank} is held up, not "
        "the cause."
    ]
    on_chain = condition_on_chain(own.frames)
    where, condition = None, ""
    if on_chain:
        frame, found_condition = on_chain
        where, condition = Frame(frame.file, found_condition.line, frame.function), str(found_condition)
        sentences.append(
            f"{frame.file}:{frame.line} sits under a condition on the rank, {found_condition}: every member of "
            f"process group {alone.pg} must make that call."
        )
    else:
        sentences.append(f"Every member of process group {alone.pg} must make that call.")
    return Verdict("\n".join(sentences), "order", [], where, condition)


def _skipped_call(behind_in: list[tuple], by_rank: dict[int, RankStack]) -> Verdict | None:
    """Each of two groups waits for a rank that waits in the other, and one of those waits is the consequence
    of a call skipped: rank 1 never entered group A's collective, whose line sits under a condition on the
    rank that rank 1 does not take (``if rank != 1:``), while its own wait, in group B, sits under no branch of
    that condition; the ranks behind in group B wait in that very call. Rank 1 went past the call and waits in
    B's next one: the skipped call is the cause, its condition the line (found with DeepSpeed ZeRO-2, whose
    gradient all-reduce runs on a group of the same ranks as the default one). None where no group's call, or
    more than one, reads so: the groups called in another order (``if rank == 0: a(); b()`` ``else: b(); a()``),
    or it cannot be told."""
    found = []
    for d, verdict in behind_in:
        if len(d.behind) != 1 or verdict.kind != "never_entered" or len(d.examples) != 1:
            continue
        rank = d.behind[0]
        stack = by_rank.get(rank)
        (example,) = d.examples.values()
        on_entered = condition_on_chain(example.frames)
        call = user_call(example.frames)
        if stack is None or not stack.frames or not collective_of(stack.frames) or not on_entered or not call:
            continue
        frame, condition = on_entered
        own = condition_on_chain(stack.frames)
        if own and (own[0].file, own[1].line) == (frame.file, condition.line):
            continue  # the two calls sit on the branches of one condition: an order, not a skip
        if takes_branch(frame.file, condition, rank):
            continue  # the rank takes that branch: it will make the call, later
        others = [(other, v) for other, v in behind_in if other is not d]
        if not others or not all(
            _waits_at(by_rank.get(r), call) for other, _ in others for r in other.behind
        ):
            continue  # the ranks behind in the other group(s) are not waiting in the call it skipped
        found.append((d, verdict, rank, frame, condition, others))
    if len(found) != 1:
        return None
    d, verdict, rank, frame, condition, others = found[0]
    entered = sorted(r for ranks in d.entered.values() for r in ranks)
    sentences = [verdict.text.splitlines()[0]]
    # ``if rank == 0:``: the call only the few it names make is the odd one, as in one group
    if condition.few:
        culprits, why = entered, "the extra call: this wait follows from it, not a second cause."
        sentences.append(
            f"{frame.file}:{frame.line} sits under a condition on the rank, {condition}, which only {who(entered)} "
            f"{'takes' if len(entered) == 1 else 'take'}: rank {rank} went past it to the next collective of "
            f"another group, where it waits now; {who(entered)} took the extra path."
        )
    else:
        culprits, why = [rank], f"the call rank {rank} skipped: held up by it, not a second cause."
        sentences.append(
            f"{frame.file}:{frame.line} sits under a condition on the rank, {condition}, which rank {rank} does "
            f"not take: rank {rank} skipped that call and went on to the next collective of another group, where "
            "it waits now."
        )
    for _, v in others:
        sentences.append(v.text.splitlines()[0].rstrip(".") + ", " + why)
    sentences.append(
        "Every rank must make the same collective calls: make that call on every rank, or on none."
    )
    return Verdict(
        "\n".join(sentences),
        "never_entered",
        culprits,
        Frame(frame.file, condition.line, frame.function),
        str(condition),
    )


def _waits_at(stack: RankStack | None, call: Frame) -> bool:
    """This rank waits in a collective called from ``call`` (the same file name and line: a dump and a live
    stack may spell the path differently)."""
    if stack is None or not stack.frames or not collective_of(stack.frames):
        return False
    at = user_frame(stack)
    return (
        at is not None and at.line == call.line and os.path.basename(at.file) == os.path.basename(call.file)
    )


def _named(d) -> str:
    return (
        f" ({d.pg_name})" if d.pg_name and d.pg_name != "undefined" else ""
    )  # gloo's subgroups: "undefined"


def _weight(v: Verdict) -> tuple:
    rank = {"never_entered": 3, "mismatch": 3, "left_loop": 3, "silent": 2, "all_inside": 0}.get(v.kind, 1)
    return (bool(v.culprits), rank, v.share)


def _never_entered(d, by_rank: dict[int, RankStack]) -> Verdict:
    (example,) = d.examples.values()
    entered = sorted(r for ranks in d.entered.values() for r in ranks)
    text = (
        f"{who(d.behind)} never entered {example.shape()}{_ddp_where(example)}, which {who(entered)} entered"
    )
    now = [_is_now(by_rank[rank]) for rank in d.behind[:6] if rank in by_rank]
    sentences = [text + (": " + "; ".join(now) if now else "") + "."]
    culprits = list(d.behind)
    culprit = by_rank.get(culprits[0]) if len(culprits) == 1 else None
    waiters = [by_rank[r] for r in entered if r in by_rank][:1]
    elsewhere = [by_rank[r] for r in d.behind if r in by_rank]
    left = left_the_loop(waiters, elsewhere) if waiters and elsewhere else None
    if left:
        left.text = "\n".join([*sentences, left.text])
        left.share = len(entered) / (len(entered) + len(d.behind))
        return left
    # where the culprit is: stuck outside any collective, its own line; on another collective (another
    # path), the condition on the rank along its call chain that sent it there
    where, condition = None, ""
    if culprit is not None and culprit.frames:
        where = user_frame(culprit)
        on_chain = condition_on_chain(culprit.frames)
        if on_chain and collective_of(culprit.frames):
            where, condition = (
                Frame(on_chain[0].file, on_chain[1].line, on_chain[0].function),
                str(on_chain[1]),
            )
            if _skipped_by_the_others(on_chain, culprit.rank, entered):
                frame, found = on_chain
                culprits = list(entered)
                sentences.append(
                    f"{frame.file}:{frame.line} sits under a condition on the rank, {found}, which rank "
                    f"{culprit.rank} takes and {who(entered)} {'does' if len(entered) == 1 else 'do'} not: "
                    f"{who(entered)} skipped the call rank {culprit.rank} waits in and went on to this one; rank "
                    f"{culprit.rank} is held up, not the cause."
                )
    # the lone collective, or a call on its way there, under a condition on the rank: that is the line
    on_entered = condition_on_chain(example.frames)
    went_on = [s for s in elsewhere if s.frames and collective_of(s.frames)]
    if on_entered and on_entered[1].few and went_on and len(went_on) == len(d.behind):
        # ``if rank == 3: all_reduce(...)`` entered by the few it names, while the others went on to another
        # collective: the call only they make is the odd one, not the others' absence from it
        culprits, culprit, where, condition = list(entered), None, None, ""
        sentences.append(
            f"Only the rank(s) the condition names make this call; {who(d.behind)} went on to another "
            f"collective: {who(entered)} took the extra path."
        )
    if on_entered:
        frame, found = on_entered
        sentences.append(
            f"{frame.file}:{frame.line} sits under a condition on the rank, {found}: "
            "every rank must make the same collective calls."
        )
        condition = condition or str(found)
        if where is None:
            where = Frame(frame.file, found.line, frame.function)
    else:
        hint, found = rank_condition_hint(elsewhere)
        stuck = culprit is not None and culprit.frames and not collective_of(culprit.frames)
        holder = by_rank.get(culprit.lock_held_by) if stuck and culprit.lock_held_by is not None else None
        if not hint and holder is not None and where is not None:
            inside = collective_of(holder.frames)
            hint = (
                f"rank {culprit.rank} is held up at {where.file}:{where.line}: it waits for a file lock that rank "
                f"{holder.rank} holds"
                + (f", while rank {holder.rank} waits in {inside} for it" if inside else "")
                + ": a lock held across a collective deadlocks; release it before the collective, or take it on "
                "one rank only."
            )
        if not hint and stuck and where is not None:
            hint = (
                f"rank {culprit.rank} is held up at {where.file}:{where.line}, not on another path: find out why "
                "that line does not return (a slow or hung filesystem, a lock, a child process, a network call)."
            )
        sentences.append(hint or to_finding(d).fix.splitlines()[0])
        condition = condition or found
    silent = [by_rank[r] for r in d.behind if r in by_rank and not by_rank[r].frames]
    verdict = Verdict("\n".join(sentences) + silent_text(silent), "never_entered", culprits, where, condition)
    others = len(entered) + len(d.behind) - len(culprits)
    verdict.share = others / (len(entered) + len(d.behind))
    return verdict


def _skipped_by_the_others(on_chain: tuple, rank: int, entered: list[int]) -> bool:
    """The collective ``rank`` waits in sits under a condition on the rank that most ranks take (``if rank !=
    1:``), ``rank`` among them, and none of the ranks that went on to the other group's collective: they skipped
    the call ``rank`` waits in (read where rank 1's dump is missing, as its noted calls do not show the skip)."""
    frame, condition = on_chain
    return (
        condition.few is False
        and bool(entered)
        and takes_branch(frame.file, condition, rank) is True
        and all(takes_branch(frame.file, condition, other) is False for other in entered)
    )


def _swapped_order(d, records: dict) -> Verdict | None:
    """Two sides entered #N with different calls, and one side's next call (#N+1) is the other side's #N: the
    ranks make the same calls in another order (``if rank == 0: a(); b()`` ``else: b(); a()``). Neither side
    is the odd one; the branch that orders them differently is the line to fix."""
    if len(d.entered) != 2:
        return None
    (one, one_ranks), (other, other_ranks) = d.entered.items()

    def next_of(ranks: list[int]):
        for rank in ranks:
            later = [
                c for c in getattr(records.get(rank), "collectives", {}).get(d.pg, []) if c.seq == d.seq + 1
            ]
            if later:
                return later[0]
        return None

    for first, first_ranks, second, second_ranks in (
        (one, one_ranks, other, other_ranks),
        (other, other_ranks, one, one_ranks),
    ):
        then = next_of(first_ranks)
        if then is None or then.signature() != second:
            continue
        made, waited = d.examples[first], d.examples[second]
        if (condition_on_chain(made.frames) is None) != (condition_on_chain(waited.frames) is None):
            # one call under a condition on the rank, the other not: a side skipped the call under it (`if rank
            # != 1: all_reduce(metric)`, then every rank's next all_reduce(loss)), not the same calls reordered
            continue
        text = (
            f"process group {d.pg}{_named(d)}: the ranks make the same collectives in another order: "
            f"{who(first_ranks)} made {made.shape()}{where_called(made)} and then {then.shape()}"
            f"{where_called(then)}; {who(second_ranks)} made {waited.shape()}{where_called(waited)} first."
        )
        found = condition_on_chain(made.frames) or condition_on_chain(waited.frames)
        where, condition = None, ""
        if found:
            where, condition = Frame(found[0].file, found[1].line, found[0].function), str(found[1])
            text += (
                f"\nThe two orders sit on the branches of a condition on the rank, {found[1]}: call them in one "
                "order on every rank."
            )
        else:
            text += "\nEvery rank must make its collectives in the same order."
        return Verdict(text, "order", [], where, condition)
    return None


def mismatch_verdict(d, by_rank: dict[int, RankStack]) -> Verdict:
    """Ranks entered collective #N with different operations, sizes or dtypes: the rank(s) on their own
    (the smaller side, or the side whose call sits under a condition on the rank) caused it."""
    finding = to_finding(d)
    sides = sorted(d.entered.items(), key=lambda item: len(item[1]))
    conditions = {s: condition_on_chain(d.examples[s].frames) for s, _ in sides}
    smallest = [s for s, r in sides if len(r) == len(sides[0][1])]
    moved_on = ""
    if len(smallest) == 1:
        odd = smallest[0]
    else:  # as many on each side: the side on the branch of a condition on the rank that few ranks take
        odd = _odd_by_condition(smallest, conditions)
        torn, moved_on = _moved_on_to_teardown(d, smallest, by_rank)
        if odd is None:
            odd = torn
        elif torn is not None and torn != odd:  # the two readings disagree: neither is said
            odd, moved_on = None, ""
    if odd is None and len(smallest) > 1:
        odd = _left_the_loop_side(d, smallest, by_rank)
    sentences = [finding.summary + "."]
    if moved_on:
        sentences.append(moved_on)
    if odd is None:
        passes = _ddp_passes_differ(d, by_rank)
        if passes:  # which rank skipped cannot be told, what differs can
            sentences.append(passes)
            return Verdict("\n".join(sentences), "mismatch")
        if _one_call_sizes_of_its_own(d):  # no side is odd: each rank gave that call its own data
            sentences.append(
                "Every rank made this call, each with a size of its own: " + finding.fix.splitlines()[0]
            )
            return Verdict(
                "\n".join(sentences), "mismatch", [], user_call(next(iter(d.examples.values())).frames)
            )
        sentences.append("Which side is the odd one out cannot be told: " + finding.fix.splitlines()[0])
        return Verdict("\n".join(sentences), "mismatch")
    culprits = list(d.entered[odd])
    # the odd ones are past the loop the others still run: uneven iterations, not a condition on the rank
    waiters = [
        by_rank[r] for s, ranks in sides if s != odd for r in ranks if r in by_rank and by_rank[r].frames
    ]
    gone = [by_rank[r] for r in culprits if r in by_rank]
    left = left_the_loop(waiters[:1], gone) if waiters and gone and len(gone) == len(culprits) else None
    if left is not None:
        left.text = "\n".join([finding.summary + ".", left.text])
        left.share = 1 - len(culprits) / sum(len(r) for r in d.entered.values())
        return left
    call = user_call(d.examples[odd].frames)
    found = conditions[odd] or next((conditions[s] for s, _ in sides if s != odd and conditions[s]), None)
    where, condition = call, ""
    if found:
        where, condition = Frame(found[0].file, found[1].line, found[0].function), str(found[1])
        sentences.append(
            f"{found[0].file}:{found[0].line} sits under a condition on the rank, {found[1]}: "
            f"{who(culprits)} took another path there; every rank must make the same collective calls."
        )
    else:
        sentences.append(f"{who(culprits).capitalize()} is the odd one out. " + finding.fix.splitlines()[0])
    verdict = Verdict("\n".join(sentences), "mismatch", culprits, where, condition)
    verdict.share = 1 - len(culprits) / sum(len(r) for r in d.entered.values())
    return verdict


def _one_call_sizes_of_its_own(d) -> bool:
    """Whether the ranks of a size (or dtype) disagreement all made one operation at one line of the user's code
    (a gather of each rank's last batch, of unevenly padded sequences): the same call, not a branch."""
    if d.kind not in ("sizes", "dtypes"):
        return False
    calls = {(c.op, user_call(c.frames)) for c in d.examples.values()}
    return len(calls) == 1 and next(iter(calls))[1] is not None


# what the watchdog's report concludes from DDP's ranks split between backward and the next forward (explain reads it)
DDP_PASSES_DIFFER = "the ranks ran different numbers of backward passes"


def _ddp_passes_differ(d, by_rank: dict[int, RankStack]) -> str:
    """Where some ranks of the mismatch wait in backward's gradient all-reduce and the others in DDP's collectives
    before the next forward: the ranks ran different numbers of backward passes (found with accelerate's
    gradient_accumulation.py, rank 1 skipping a NaN loss with `continue`: the report said only that the odd side
    could not be told). Empty where the stacks do not show that."""
    backward, forward = [], []
    for ranks in d.entered.values():
        for rank in ranks:
            stack = by_rank.get(rank)
            doing = collective_of(stack.frames) if stack is not None and stack.frames else None
            if doing and doing.startswith("backward()"):
                backward.append(rank)
            elif doing and doing.startswith("DistributedDataParallel's") and "before forward" in doing:
                forward.append(rank)
    if not backward or not forward:
        return ""
    verb = {1: "waits"}
    return (
        f"Under DDP {who(backward)} {verb.get(len(backward), 'wait')} in backward's gradient all-reduce while "
        f"{who(forward)} {verb.get(len(forward), 'wait')} in DDP's collectives before the next forward: "
        f"{DDP_PASSES_DIFFER}. Look for a "
        "loss skipped on some ranks only (a NaN or inf check followed by `continue`, an empty batch), no_sync() "
        "on some ranks only, or a different number of batches per rank: every rank must run backward after "
        "every forward, or all skip it together (all_reduce the skip decision first)."
    )


def _stacks_of(d, side, by_rank: dict[int, RankStack]) -> list[RankStack]:
    """The stacks of the ranks that entered collective #N with signature ``side``, those that left one."""
    return [by_rank[r] for r in d.entered[side] if r in by_rank and by_rank[r].frames]


def _left_the_loop_side(d, sides: list, by_rank: dict[int, RankStack]) -> object:
    """Of sides with as many ranks each, the only one whose ranks are past the loop of the user's code that the
    others still run (rank 0 in the evaluation's gather after the training loop, rank 1 in that loop's backward):
    it left the loop early. None where no side, or more than one, is."""

    left = []
    for side in sides:
        gone = _stacks_of(d, side, by_rank)
        waiters = [stack for other in sides if other != side for stack in _stacks_of(d, other, by_rank)]
        if gone and waiters and len(gone) == len(d.entered[side]) and left_the_loop(waiters[:1], gone):
            left.append(side)
    return left[0] if len(left) == 1 else None


def _odd_by_condition(sides: list, conditions: dict) -> object:
    """Of sides with as many ranks each, the one whose call sits on a branch few ranks take (``if rank == 0:``),
    or the only one left when the others' sit on a branch most ranks take (``if rank != 1:``); None when the
    conditions cannot tell (none, or ``if rank % 2 == 0:``)."""
    few = [s for s in sides if conditions[s] and conditions[s][1].few is True]
    if len(few) == 1:
        return few[0]
    rest = [s for s in sides if not (conditions[s] and conditions[s][1].few is False)]
    return rest[0] if len(rest) == 1 and len(rest) < len(sides) else None


def _moved_on_to_teardown(d, sides: list, by_rank: dict[int, RankStack]) -> tuple[object, str]:
    """Of two equal sides of a mismatch, the one whose ranks all left collective #N behind unfinished and sit in
    destroy_process_group, while every rank of the others still waits inside a collective: their call returned
    before any peer joined it (``async_op=True``, never waited for), so theirs is the call no other rank makes.
    (None, "") where the stacks do not show exactly that."""

    def all_torn_down(side) -> bool:
        found = _stacks_of(d, side, by_rank)
        return len(found) == len(d.entered[side]) and _all_torn_down(found)

    def all_waiting(side) -> bool:
        found = _stacks_of(d, side, by_rank)
        return len(found) == len(d.entered[side]) and all(collective_of(s.frames) for s in found)

    torn = [s for s in sides if all_torn_down(s)]
    if len(torn) != 1 or not all(all_waiting(s) for s in d.entered if s != torn[0]):
        return None, ""
    return torn[0], _moved_on_text(d.entered[torn[0]], d.seq)


def _all_torn_down(stacks: list[RankStack]) -> bool:
    """Every one of these ranks has a stack, and it is in destroy_process_group, not in a collective."""
    return bool(stacks) and all(
        s.frames and in_teardown(s.frames) and not collective_of(s.frames) for s in stacks
    )


def _moved_on_text(ranks: list[int], seq: int) -> str:
    """Why ranks in destroy_process_group past an unfinished collective #seq made the call no one else makes."""
    named = who(ranks)
    sits = "sits" if len(ranks) == 1 else "sit"
    return (
        f"{named.capitalize()} went past collective #{seq} without it completing and now {sits} in "
        "destroy_process_group, which waits for it, while the others wait inside theirs: the call of "
        f"{named} returned before any peer joined it (made with async_op=True and never waited for), so it is "
        "the one no other rank makes. Make that call on every rank, and wait for what an async_op=True call "
        "returns (work.wait()) before the teardown."
    )


def _stalled(d, by_rank: dict[int, RankStack]) -> Verdict | None:
    """Every rank of a group entered collective #N and none saw it complete, and some rank's host is no longer
    in it: collectives on a GPU are queued, not waited for, so the host went on and waits elsewhere (at the
    next sync: ``.item()``, ``.cpu()``, ``synchronize()``) for the GPU. None when every rank still waits in a
    collective and the group has several (`_all_inside` says that)."""
    (example,) = d.examples.values()
    ranks = sorted(r for ranks in d.entered.values() for r in ranks)
    past = [
        by_rank[r]
        for r in ranks
        if r in by_rank and by_rank[r].frames and not collective_of(by_rank[r].frames)
    ]
    if len(ranks) > 1 and not past:
        return None
    summary, fix = stalled_text(d, example)
    sentences = [summary + "."]
    if past:
        verb = "waits" if len(past) == 1 else "wait"
        sentences.append(
            f"{who([s.rank for s in past]).capitalize()} went on past the call (collectives on a GPU are queued, "
            f"not waited for) and {verb} for the GPU elsewhere: "
            + "; ".join(_is_now(s) for s in past[:6])
            + "."
        )
    sentences.append(fix)
    alone = len(ranks) == 1
    return Verdict(
        "\n".join(sentences),
        "stalled" if alone else "all_inside",
        ranks if alone else [],
        user_call(example.frames),
    )


def _pending(d, by_rank: dict[int, RankStack]) -> Verdict:
    """Every rank with a dump entered #N and it never completed; the ranks without one are the suspects:
    named, with what their process is doing when that is known."""

    (example,) = d.examples.values()
    entered = sorted(r for ranks in d.entered.values() for r in ranks)
    suspects = [by_rank[r] for r in d.unknown if r in by_rank]
    waits = "waits" if len(entered) == 1 else "wait"
    text = f"{who(entered)} entered {example.shape()}{_ddp_where(example)} and {waits} in it; " + "; ".join(
        _is_now(s) for s in suspects[:6]
    )
    waiting_too = [s for s in suspects if s.frames and collective_of(s.frames)]
    went_past = [by_rank[r] for r in entered if r in by_rank]
    if waiting_too and len(waiting_too) == len(suspects) and len(went_past) == len(entered):
        if _all_torn_down(went_past):  # their #N never completed, yet they left it: it was async, unpaired
            found = condition_on_chain(example.frames)
            where = (
                Frame(found[0].file, found[1].line, found[0].function) if found else user_call(example.frames)
            )
            text = (
                f"{who(entered)} entered {example.shape()} and went on without it completing; "
                + "; ".join(_is_now(s) for s in suspects[:6])
            )
            verdict = Verdict(
                f"{text}.\n{_moved_on_text(entered, example.seq)}",
                "mismatch",
                list(entered),
                where,
                str(found[1]) if found else "",
            )
            verdict.share = len(suspects) / (len(entered) + len(suspects))
            return verdict
    if waiting_too and len(waiting_too) == len(suspects):
        entered_in = {collective_of(by_rank[r].frames) for r in entered if r in by_rank and by_rank[r].frames}
        elsewhere = [s for s in waiting_too if collective_of(s.frames) not in entered_in]
        if (
            entered_in and elsewhere
        ):  # the suspects wait in another collective than the others: on another path
            found = condition_on_chain(elsewhere[0].frames)
            where = (
                Frame(found[0].file, found[1].line, found[0].function) if found else user_frame(elsewhere[0])
            )
            more = (
                f"\n{found[0].file}:{found[0].line} sits under a condition on the rank, {found[1]}."
                if found
                else ""
            )
            verdict = Verdict(
                text + "." + more, "order", [s.rank for s in elsewhere], where, str(found[1]) if found else ""
            )
            verdict.share = len(entered) / max(1, len(entered) + len(elsewhere))
            return verdict
        return _all_inside(list(by_rank.values()), {}) or Verdict(text + ".", "unclear")
    culprits = [s.rank for s in suspects if not (s.frames and collective_of(s.frames))]
    culprit = by_rank.get(culprits[0]) if len(culprits) == 1 else None
    where = user_frame(culprit) if culprit is not None and culprit.frames else None
    verdict = Verdict(
        text + ".", "silent" if culprit and not culprit.frames else "never_entered", culprits, where
    )
    verdict.share = len(entered) / max(1, len(entered) + len(culprits))
    return verdict


def _all_inside(stacks: list[RankStack], records: dict) -> Verdict | None:
    """Every rank waits in the same collective, and no record says anyone is behind: nothing in the job
    points at a rank, so it says so rather than blame one."""
    places = {collective_of(s.frames) for s in stacks if s.frames}
    if not stacks or len(places) != 1 or None in places or any(not s.frames for s in stacks):
        return None
    (collective,) = places
    unknown = [s.rank for s in stacks if records and s.rank not in records]
    if unknown:  # the stacks agree, but which collective (which #N) each rank is in is not known for all
        return Verdict(
            f"every rank waits in {collective}, but {ranks_named(unknown)} left no record of its collectives, so "
            "whether they all wait in the same one cannot be told; no rank is blamed. Find their flight-recorder "
            "dumps, or rerun under `torchdoctor launch --watchdog`.",
            "unclear",
        )
    if collective.endswith("init_process_group"):
        return _all_joining(stacks)
    newest = {max((c[-1].seq for c in r.collectives.values() if c), default=0) for r in records.values()}
    number = f" #{newest.pop()}" if len(newest) == 1 else ""
    return Verdict(
        f"every rank is inside {collective}{number}: the ranks agree and none is behind, so the device or the "
        "network is suspected, not a rank. Next: `torchdoctor net` (can the ranks reach each other, at what "
        "bandwidth), `torchdoctor check` on each node, and the NCCL/gloo logs (NCCL_DEBUG=INFO).",
        "all_inside",
    )


def _all_joining(stacks: list[RankStack]) -> Verdict:
    """Every rank waits in init_process_group: the rendezvous waits for ranks that are not there (no device or
    network of a collective is involved yet). The user's line, and a world size or rank it passes itself,
    which is the usual cause under a launcher that sets them (found with ``world_size=3`` on 2 ranks: it said
    "the device or the network is suspected" and sent the user to `torchdoctor net`)."""
    call = next((user_call(s.frames) for s in stacks if user_call(s.frames)), None)
    code = linecache.getline(call.file, call.line).strip() if call else ""
    passed = [word for word in ("world_size=", "rank=", "init_method=") if word in code]
    sentences = [
        f"every rank ({len(stacks)}) waits in torch.distributed.init_process_group"
        + (f" at {call.file}:{call.line}" if call else "")
        + ": it returns once world_size ranks have joined at the same address, and they have not (no "
        "collective has run yet)."
    ]
    if passed:
        sentences.append(
            f"The call passes {', '.join(w.rstrip('=') for w in passed)} itself (`{code[:160]}`): under a launcher, "
            f"the {len(stacks)} ranks it started must make world_size {len(stacks)}, each its own rank; leave them "
            "out (torchrun sets WORLD_SIZE and RANK) or read them from the environment."
        )
    else:
        sentences.append(
            "A rank is missing (never started, or it died before this line: its log says why), or the ranks meet "
            "at different addresses (MASTER_ADDR, MASTER_PORT, init_method): give every rank the same ones."
        )
    return Verdict("\n".join(sentences), "all_inside", [], call)


def _is_now(stack: RankStack) -> str:
    """``"rank 1 is in save_checkpoint (train.py:44), called from train.py:20 in main"``."""
    if not stack.frames:
        seen = user_frame(RankStack(stack.rank, frames=stack.last_seen)) if stack.last_seen else None
        last = f"; last seen moving at {seen}" if seen else ""
        return f"rank {stack.rank}: {stack.note or 'no stack'}{last}"
    user = user_frame(stack)
    collective = collective_of(stack.frames)
    if collective:
        return f"rank {stack.rank} waits in {collective}" + (f" ({user})" if user else "")
    innermost = stack.frames[-1]
    callers = [f for f in stack.frames[:-1] if is_user_code(f.file)]
    called = f", called from {callers[-1]}" if callers else ""
    for pid, frames in stack.helpers:
        inner = next((f for f in reversed(frames) if is_user_code(f.file)), None)
        if inner:
            return (
                f"rank {stack.rank} waits for its DataLoader worker{f' (pid {pid})' if pid else ''}, which is in "
                f"{inner.function} "
                f"({inner.file}:{inner.line}){called}"
            )
    return f"rank {stack.rank} is in {innermost.function} ({innermost.file}:{innermost.line}){called}"


def _ddp_where(collective) -> str:
    if any(
        f.function in ("backward", "_engine_run_backward") and "autograd" in f.file for f in collective.frames
    ):
        call = user_call(collective.frames)
        return (
            f" (DDP's gradient all-reduce, in backward() at {call.file}:{call.line})"
            if call
            else " (in backward)"
        )
    return where_called(collective)
