"""Hang reports: where each rank is (from its Python stack), in words, grouped, and the verdict.

Reads stacks (``faulthandler``'s text, live frames), says for each rank whether it waits in a collective and
whose (the user's, DistributedDataParallel's, torchdoctor's own), groups ranks in the same place into one
line, and joins the stacks with the ranks' flight-recorder records (`torchdoctor.explain.flight_recorder`)
into one verdict: which rank never entered which collective, where it is instead, and the line of the user's
code that explains it (a condition on the rank, a loop some ranks left early). Used by the hang watchdog
(`torchdoctor.hang.watchdog`) on one node and, through `hang_job`, for a job on many.
"""

from __future__ import annotations

import linecache
import os
import re
import traceback
from dataclasses import dataclass, field

from torchdoctor.hang.source import Frame, condition_on_chain, is_ours, is_user_code, user_call  # noqa: F401 - read from here too
from torchdoctor.rank_list import ranks_text, who

COLLECTIVES = frozenset(
    "barrier monitored_barrier all_reduce all_gather all_gather_object all_gather_into_tensor "
    "reduce_scatter reduce_scatter_tensor broadcast broadcast_object_list reduce gather gather_object "
    "scatter scatter_object_list all_to_all all_to_all_single send recv isend irecv batch_isend_irecv "
    "init_process_group new_group destroy_process_group pad_across_processes".split()
)
# DistributedDataParallel's own collectives (torch/nn/parallel/distributed.py, torch/distributed/utils.py),
# by the function a stack shows: the user's line is `DDP(model)` or `model(x)`, not a collective.
_DDP_STEPS = {
    "_verify_param_shape_across_processes": "check that every rank has the same parameters",
    "_sync_module_states": "broadcast of the parameters and buffers from rank 0",
    "_sync_params_and_buffers": "broadcast of the parameters and buffers from rank 0",
    "_distributed_broadcast_coalesced": "broadcast of the parameters and buffers",
    "_sync_buffers": "buffer broadcast before forward",
    "_sync_module_buffers": "buffer broadcast before forward",
    "_default_broadcast_coalesced": "buffer broadcast before forward",
    "_check_global_requires_backward_grad_sync": "join check (all_reduce) before forward",
    "_match_all_reduce_for_bwd_pass": "join shadow all_reduce",
    "_pre_forward": "collectives before forward (bucket rebuild, buffer sync)",
}


@dataclass
class RankStack:
    """Where one rank was when the stacks were taken; ``frames`` outermost first, empty when unknown."""

    rank: int
    pid: int | None = None
    host: str = ""
    frames: list[Frame] = field(default_factory=list)
    note: str = ""  # why there is no stack: "exited", "did not answer within 5s", ...
    last_seen: list[Frame] = field(default_factory=list)  # where it was last seen moving, when no stack
    evidence: list[str] = field(default_factory=list)  # what of this rank could not be read, and why
    helpers: list[tuple[int, list[Frame]]] = field(
        default_factory=list
    )  # (pid, frames) of its DataLoader workers


@dataclass
class Verdict:
    """What the report concludes: the kind of fault, the rank(s) that caused it and the line (``where``);
    ``culprits`` is empty when the evidence cannot decide."""

    text: str
    kind: (
        str  # never_entered | mismatch | order | left_loop | finished | silent | all_inside | stuck | unclear
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


# ---------------------------------------------------------------------------------------------------------
# Reading stacks


def parse_faulthandler(text: str) -> dict[int, list[Frame]]:
    """Thread id -> frames (outermost first) from what ``faulthandler`` writes."""
    threads: dict[int, list[Frame]] = {}
    frames: list[Frame] | None = None
    for line in text.splitlines():
        header = re.match(r"(?:Current thread|Thread) (0x[0-9a-fA-F]+)", line)
        if header:
            frames = threads.setdefault(int(header[1], 16), [])
            continue
        frame = re.match(r'\s+File "(.*)", line (\d+) in (.*)$', line)
        if frame and frames is not None:
            frames.insert(0, Frame(frame[1], int(frame[2]), frame[3].strip()))
    return threads


def frames_of(frame) -> list[Frame]:
    """A live Python frame and its callers, outermost first."""
    return [Frame(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack(frame)]


def collective_of(frames: list[Frame]) -> str | None:
    """``"torch.distributed.barrier"`` when the stack is inside a collective called from user code, else None.

    Collectives that are not on the user's line are named for whose they are: DistributedDataParallel's
    (its parameter broadcast, its buffer sync, the gradients' all-reduce in ``backward()``) and torchdoctor's
    own (``find_executable_batch_size``'s agreement across ranks: the user's line only calls the function)."""
    user = [i for i, f in enumerate(frames) if is_user_code(f.file)]
    below = frames[user[-1] + 1 if user else 0 :]
    ours = next((f for f in below if is_ours(f.file)), None)
    for frame in below:
        path = frame.file.replace(os.sep, "/")
        if path.endswith("torch/nn/parallel/distributed.py") or path.endswith("torch/distributed/utils.py"):
            ddp = _DDP_STEPS.get(frame.function)
            if ddp:
                return f"DistributedDataParallel's {ddp} ({frame.function})"
        for package in ("torch/distributed/", "torchdoctor/distributed/"):
            if package in path and frame.function in COLLECTIVES:
                name = f"{package.split('/')[0]}.distributed.{frame.function}"
                if ours is not None and not ours.file.endswith(
                    ("debug.py", "agreement.py", "operations.py", "calls.py")
                ):
                    where = f"{os.path.basename(ours.file)}:{ours.line}"
                    return (
                        f"{name} inside torchdoctor's {ours.function} ({where}), which every rank must reach"
                    )
                return name
        if "torch/autograd/" in path and frame.function in ("backward", "_engine_run_backward"):
            # DistributedDataParallel all-reduces the gradients inside backward and waits for it there
            return "backward() (under DDP, the gradients' all-reduce)"
        if path.endswith("torchdoctor/distributed/debug.py") and frame.function == "check_collective":
            # debug mode's wrapper hides which call it checks; the user's line of code says it
            called = re.findall(r"(\w+)\s*\(", _source(frames[user[-1]], limit=1000)) if user else []
            name = next(
                (f"torch.distributed.{c}" for c in reversed(called) if c in COLLECTIVES), "a collective"
            )
            return f"{name} (its debug-mode check: the other ranks have not arrived)"
    return None


def where_it_is(stack: RankStack) -> tuple[str, list[Frame]]:
    """What one rank is doing, in words (``"waiting in torch.distributed.barrier"``), and the frames to show
    under it: the user's, innermost first."""
    if not stack.frames:
        seen = [f for f in stack.last_seen if is_user_code(f.file)][-4:]
        if seen:
            return f"no stack: {stack.note or 'unknown'}; last seen moving at", list(reversed(seen))
        return f"no stack: {stack.note or 'unknown'}", []
    collective = collective_of(stack.frames)
    user = [f for f in stack.frames if is_user_code(f.file)]
    innermost = stack.frames[-1]
    helper = next(((pid, [f for f in fs if is_user_code(f.file)]) for pid, fs in stack.helpers), None)
    teardown = _in_teardown(stack.frames)
    if collective:
        head = f"waiting in {collective}"
    elif teardown:  # torch's destroy_process_group shuts each group down, which waits for its work in flight
        head = (
            "not in a collective; inside destroy_process_group, which waits for this rank's collectives still "
            "in flight (one made with async_op=True and never waited for, or one no other rank makes)"
        )
    elif helper and helper[1]:
        head = f"not in a collective; waiting for its DataLoader worker (pid {helper[0]}), which is in"
        return head, list(reversed(helper[1][-4:]))
    elif user and innermost is not user[-1]:
        head = f"not in a collective; in {innermost.function} ({innermost.file}:{innermost.line})"
    else:
        head = "not in a collective"
    shown = user[-4:] if user else stack.frames[-4:]
    return head, list(reversed(shown))


def _in_teardown(frames: list[Frame]) -> bool:
    """Inside torch's destroy_process_group, or on a line of the user's that calls it: gloo's group is shut
    down as the function returns, when its last reference goes, so a rank stuck there may show no frame
    of torch's."""
    if any(f.function == "destroy_process_group" and not is_user_code(f.file) for f in frames):
        return True
    return bool(frames) and "destroy_process_group(" in _source(frames[-1], limit=1000)


def describe(stack: RankStack) -> list[str]:
    """The lines of the report for one rank: the verdict, then the user's frames innermost first."""
    head, shown = where_it_is(stack)
    return [f"{_who(stack)}: {head}"] + [f"    {frame}{_source(frame)}" for frame in shown]


def _who(stack: RankStack) -> str:
    facts = ", ".join(part for part in (f"pid {stack.pid}" if stack.pid else "", stack.host) if part)
    return f"rank {stack.rank}" + (f" ({facts})" if facts else "")


def _source(frame: Frame, limit: int = 60) -> str:
    """``": dist.barrier()"``: the line of code, when this machine has the file (the launcher's does)."""
    text = linecache.getline(frame.file, frame.line).strip()
    if not text:
        return ""
    return f": {text if len(text) <= limit else text[: limit - 1] + '…'}"


def grouped(stacks: list[RankStack]) -> list[str]:
    """One block per place: ranks in the same state with the same frames share one line (``ranks 0-999``),
    so the odd ones out stand out; a rank alone keeps its pid and host."""
    places: dict[tuple, list[RankStack]] = {}
    for stack in sorted(stacks, key=lambda s: s.rank):
        head, shown = where_it_is(stack)
        places.setdefault((head, tuple(shown)), []).append(stack)
    lines = []
    for (head, shown), members in sorted(places.items(), key=lambda item: item[1][0].rank):
        if len(members) == 1:
            who = _who(members[0])
        else:
            hosts = {m.host for m in members if m.host}
            on = f" on {len(hosts)} hosts" if len(hosts) > 1 else (f", {hosts.pop()}" if hosts else "")
            who = f"ranks {ranks_text(m.rank for m in members)} ({len(members)} ranks{on})"
        lines.append(f"{who}: {head}")
        lines += [f"    {frame}{_source(frame)}" for frame in shown]
    return lines


def diagnosis(stacks: list[RankStack], records: dict | None = None) -> str:
    """What the stacks (and, when given, the ranks' flight-recorder records) say: which ranks never came
    to the collective the others wait in, where they are instead, and what to look for."""
    return verdict(stacks, records).text


def verdict(stacks: list[RankStack], records: dict | None = None) -> Verdict:
    """`diagnosis` as a `Verdict`: the culprit rank(s) and line, the kind, the text."""
    if records:
        joined = _joined_verdict(stacks, records)
        if joined is not None:
            return joined
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
        left = _left_the_loop(waiters, elsewhere)
        if left:
            return left
        finished = [s.rank for s in elsewhere if not s.frames and "returned" in s.note]
        if finished and len(finished) == len(absent):
            return Verdict(
                f"{_count(finished)} had already finished the script while {_count(ranks)} wait in {collective}: "
                "the ranks made different numbers of collective calls (a loop that ran longer on some ranks, "
                "uneven data per rank, a condition on the rank).",
                "finished",
                finished,
            )
        culprit = elsewhere[0] if len(elsewhere) == 1 else None
        where = _user_frame(culprit) if culprit else None
        if "inside torchdoctor's" in collective:
            return Verdict(
                f"{_count(absent)} never reached {collective}, where {_count(ranks)} wait: every rank must call the "
                "function that contains it the same number of times.",
                "never_entered",
                absent,
                where,
            )
        hint, condition = _rank_condition_hint(waiters[:1] + elsewhere)
        text = f"{_count(absent)} never reached {collective}, where {_count(ranks)} wait: " + (
            hint
            or "look for a condition on the rank (an `if rank == ...`, an early `return` or `break`) before it."
        )
        return Verdict(text + _silent_text(elsewhere), "never_entered", absent, where, condition)
    if len(waiting) > 1:
        places = "; ".join(f"{_count(r)} in {c}" for c, r in waiting.items())
        odd = min(waiting.values(), key=len)
        alone = odd if sum(len(r) == len(odd) for r in waiting.values()) == 1 else []
        text = f"the ranks wait in different collectives ({places}): they must call them in the same order."
        if not alone:
            return Verdict(text, "order")
        first = next(s for s in stacks if s.rank == alone[0])
        found = condition_on_chain(first.frames)
        if not found:
            return Verdict(text, "order", alone, _user_frame(first))
        frame, condition = found  # the call chain of the odd rank(s) passed a condition on the rank
        return Verdict(
            f"{text}\n{frame.file}:{frame.line} sits under a condition on the rank, {condition}: "
            f"{_count(alone)} took another path there; every rank must make the same collective calls.",
            "order",
            alone,
            Frame(frame.file, condition.line, frame.function),
            str(condition),
        )
    silent = [s for s in stacks if not s.frames]
    if waiting and silent:
        ((collective, ranks),) = waiting.items()
        return Verdict(
            f"{_count(ranks)} wait in {collective}; {_count([s.rank for s in silent])} gave no stack."
            + _silent_text(silent),
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


def _silent_text(stacks: list[RankStack]) -> str:
    """`` Rank 1 did not answer: its process is stopped (...)``, for the ranks that gave no stack."""
    said = [
        f"rank {s.rank}: {s.note}" for s in stacks if not s.frames and s.note and "returned" not in s.note
    ]
    return (" " + "; ".join(said) + ".") if said else ""


def _count(ranks) -> str:
    return f"rank(s) {ranks_text(ranks)}"


def _user_frame(stack: RankStack) -> Frame | None:
    """The innermost frame of the user's code where this rank is: in its DataLoader worker when it waits
    for one (the worker holds the rank back), else in its own main thread."""
    for _, frames in stack.helpers:
        inner = next((f for f in reversed(frames) if is_user_code(f.file)), None)
        if inner:
            return inner
    return user_call(stack.frames)


def _left_the_loop(waiters: list[RankStack], elsewhere: list[RankStack]) -> Verdict | None:
    """When the waiting ranks are inside a loop of the user's code and the others are past it (or have
    finished), the ranks ran different numbers of iterations: say so."""
    from torchdoctor.hang.source import enclosing_loop

    frame = _user_frame(waiters[0]) if waiters else None
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
    place = "; ".join(
        f"rank {s.rank} is in {s.frames[-1].function} ({s.frames[-1].file}:{s.frames[-1].line})"
        if s.frames
        else f"rank {s.rank}: {s.note}"
        for s in out[:4]
    )
    collective = collective_of(waiters[0].frames)
    text = (
        f"{_count([s.rank for s in out])} left the loop at {frame.file}:{first}-{last} while "
        f"{_count([s.rank for s in waiters])} still run it, waiting in {collective} ({frame.file}:{frame.line}); "
        f"{place}. The ranks ran different numbers of iterations: give every rank the same number of batches "
        "(DistributedSampler(drop_last=True), data split evenly), or run the loop under DDP's "
        "`with model.join():`, which lets ranks with fewer batches finish."
    )
    return Verdict(text, "left_loop", [s.rank for s in out], Frame(frame.file, first, frame.function))


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


def _rank_condition_hint(stacks: list[RankStack]) -> tuple[str, str]:
    """The innermost condition on the rank around any of the user's frames of these ranks, named; and the
    condition alone."""
    for stack in stacks:
        found = condition_on_chain(stack.frames)
        if found:
            frame, condition = found
            text = f"rank {stack.rank}'s line {frame.file}:{frame.line} sits under a condition on the rank, {condition}."
            return text, str(condition)
    return "", ""


def _joined_verdict(stacks: list[RankStack], records: dict) -> Verdict | None:
    """The flight recorder's first disagreement per process group, joined with where the ranks that are
    behind are now: ``rank 1 never entered all_reduce #3 (train.py:10): it is in save_checkpoint (...)``."""
    from torchdoctor.explain import flight_recorder as fr

    by_rank = {s.rank: s for s in stacks}
    found = fr.disagreements(records, sorted(by_rank))
    if not found:
        return _all_inside(stacks, records)
    sentences: list[str] = []
    verdicts: list[Verdict] = []
    for d in found:
        for example in d.examples.values():
            if not example.frames:  # dumped without stacks: the ranks waiting in it show where it was called
                ranks = next(r for s, r in d.entered.items() if d.examples[s] is example)
                live = next(
                    (by_rank[r].frames for r in ranks if r in by_rank and collective_of(by_rank[r].frames)),
                    [],
                )
                example.frames = [Frame(f.file, f.line, f.function) for f in live]
        if d.kind == "pending":
            one = _pending(d, by_rank)
        elif d.kind != "never_entered":
            one = mismatch_verdict(d, by_rank)
        else:
            one = _never_entered(d, by_rank)
        verdicts.append(one)
        sentences.append(one.text)
    # the culprit of the whole job: a rank that is behind in a group most of whose ranks went on (a lone
    # rank on another path), before one whose group is split evenly
    best = max(verdicts, key=_weight)
    if len([v for v in verdicts if v.kind == "never_entered"]) > 1 and best.kind == "never_entered":
        behind_in_collective = [
            r for v in verdicts for r in v.culprits if r in by_rank and collective_of(by_rank[r].frames)
        ]
        if behind_in_collective:  # every group waits for a rank that waits in another group: a cycle
            best = Verdict(best.text, "order", best.culprits, best.where, best.condition)
            sentences.append(
                f"Each group waits for a rank that waits in another group: {who(best.culprits)} called the "
                "groups' collectives in another order than the others; every rank must call them in the same "
                "order."
            )
    text = "\n".join(sentences)
    return Verdict(text, best.kind, best.culprits, best.where, best.condition)


def _weight(v: Verdict) -> tuple:
    rank = {"never_entered": 3, "mismatch": 3, "left_loop": 3, "silent": 2, "all_inside": 0}.get(v.kind, 1)
    return (bool(v.culprits), rank, v.share)


def _never_entered(d, by_rank: dict[int, RankStack]) -> Verdict:
    from torchdoctor.explain import flight_recorder as fr

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
    left = _left_the_loop(waiters, elsewhere) if waiters and elsewhere else None
    if left:
        left.text = "\n".join([*sentences, left.text])
        left.share = len(entered) / (len(entered) + len(d.behind))
        return left
    # where the culprit is: stuck outside any collective, its own line; on another collective (another
    # path), the condition on the rank along its call chain that sent it there
    where, condition = None, ""
    if culprit is not None and culprit.frames:
        where = _user_frame(culprit)
        on_chain = condition_on_chain(culprit.frames)
        if on_chain and collective_of(culprit.frames):
            where, condition = (
                Frame(on_chain[0].file, on_chain[1].line, on_chain[0].function),
                str(on_chain[1]),
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
        hint, found = _rank_condition_hint(elsewhere)
        stuck = culprit is not None and culprit.frames and not collective_of(culprit.frames)
        if not hint and stuck and where is not None:
            hint = (
                f"rank {culprit.rank} is held up at {where.file}:{where.line}, not on another path: find out why "
                "that line does not return (a slow or hung filesystem, a lock, a child process, a network call)."
            )
        sentences.append(hint or fr.to_finding(d).fix.splitlines()[0])
        condition = condition or found
    silent = [by_rank[r] for r in d.behind if r in by_rank and not by_rank[r].frames]
    verdict = Verdict(
        "\n".join(sentences) + _silent_text(silent), "never_entered", culprits, where, condition
    )
    others = len(entered) + len(d.behind) - len(culprits)
    verdict.share = others / (len(entered) + len(d.behind))
    return verdict


def mismatch_verdict(d, by_rank: dict[int, RankStack]) -> Verdict:
    """Ranks entered collective #N with different operations, sizes or dtypes: the rank(s) on their own
    (the smaller side, or the side whose call sits under a condition on the rank) caused it."""
    from torchdoctor.explain import flight_recorder as fr

    finding = fr.to_finding(d)
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
    sentences = [finding.summary + "."]
    if moved_on:
        sentences.append(moved_on)
    if odd is None:
        sentences.append("Which side is the odd one out cannot be told: " + finding.fix.splitlines()[0])
        return Verdict("\n".join(sentences), "mismatch")
    culprits = list(d.entered[odd])
    # the odd ones are past the loop the others still run: uneven iterations, not a condition on the rank
    waiters = [
        by_rank[r] for s, ranks in sides if s != odd for r in ranks if r in by_rank and by_rank[r].frames
    ]
    gone = [by_rank[r] for r in culprits if r in by_rank]
    left = _left_the_loop(waiters[:1], gone) if waiters and gone and len(gone) == len(culprits) else None
    if left is not None:
        left.text = "\n".join([finding.summary + ".", left.text])
        left.share = 1 - len(culprits) / sum(len(r) for r in d.entered.values())
        return left
    call = fr.user_call(d.examples[odd].frames)
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

    def ranks_of(side) -> list[RankStack]:
        return [by_rank[r] for r in d.entered[side] if r in by_rank and by_rank[r].frames]

    def all_torn_down(side) -> bool:
        found = ranks_of(side)
        return len(found) == len(d.entered[side]) and _all_torn_down(found)

    def all_waiting(side) -> bool:
        found = ranks_of(side)
        return len(found) == len(d.entered[side]) and all(collective_of(s.frames) for s in found)

    torn = [s for s in sides if all_torn_down(s)]
    if len(torn) != 1 or not all(all_waiting(s) for s in d.entered if s != torn[0]):
        return None, ""
    return torn[0], _moved_on_text(d.entered[torn[0]], d.seq)


def _all_torn_down(stacks: list[RankStack]) -> bool:
    """Every one of these ranks has a stack, and it is in destroy_process_group, not in a collective."""
    return bool(stacks) and all(
        s.frames and _in_teardown(s.frames) and not collective_of(s.frames) for s in stacks
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


def _pending(d, by_rank: dict[int, RankStack]) -> Verdict:
    """Every rank with a dump entered #N and it never completed; the ranks without one are the suspects:
    named, with what their process is doing when that is known."""

    from torchdoctor.explain import flight_recorder as fr

    (example,) = d.examples.values()
    entered = sorted(r for ranks in d.entered.values() for r in ranks)
    suspects = [by_rank[r] for r in d.unknown if r in by_rank]
    text = f"{who(entered)} entered {example.shape()}{_ddp_where(example)} and wait in it; " + "; ".join(
        _is_now(s) for s in suspects[:6]
    )
    waiting_too = [s for s in suspects if s.frames and collective_of(s.frames)]
    went_past = [by_rank[r] for r in entered if r in by_rank]
    if waiting_too and len(waiting_too) == len(suspects) and len(went_past) == len(entered):
        if _all_torn_down(went_past):  # their #N never completed, yet they left it: it was async, unpaired
            found = condition_on_chain(example.frames)
            where = (
                Frame(found[0].file, found[1].line, found[0].function)
                if found
                else fr.user_call(example.frames)
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
                Frame(found[0].file, found[1].line, found[0].function) if found else _user_frame(elsewhere[0])
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
    where = _user_frame(culprit) if culprit is not None and culprit.frames else None
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
            f"every rank waits in {collective}, but {_count(unknown)} left no record of its collectives, so "
            "whether they all wait in the same one cannot be told; no rank is blamed. Find their flight-recorder "
            "dumps, or rerun under `torchdoctor launch --watchdog`.",
            "unclear",
        )
    newest = {max((c[-1].seq for c in r.collectives.values() if c), default=0) for r in records.values()}
    number = f" #{newest.pop()}" if len(newest) == 1 else ""
    return Verdict(
        f"every rank is inside {collective}{number}: the ranks agree and none is behind, so the device or the "
        "network is suspected, not a rank. Next: `torchdoctor net` (can the ranks reach each other, at what "
        "bandwidth), `torchdoctor check` on each node, and the NCCL/gloo logs (NCCL_DEBUG=INFO).",
        "all_inside",
    )


def _is_now(stack: RankStack) -> str:
    """``"rank 1 is in save_checkpoint (train.py:44), called from train.py:20 in main"``."""
    if not stack.frames:
        seen = _user_frame(RankStack(stack.rank, frames=stack.last_seen)) if stack.last_seen else None
        last = f"; last seen moving at {seen}" if seen else ""
        return f"rank {stack.rank}: {stack.note or 'no stack'}{last}"
    user = _user_frame(stack)
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
                f"rank {stack.rank} waits for its DataLoader worker (pid {pid}), which is in {inner.function} "
                f"({inner.file}:{inner.line}){called}"
            )
    return f"rank {stack.rank} is in {innermost.function} ({innermost.file}:{innermost.line}){called}"


def _ddp_where(collective) -> str:
    from torchdoctor.explain import flight_recorder as fr

    if any(
        f.function in ("backward", "_engine_run_backward") and "autograd" in f.file for f in collective.frames
    ):
        call = fr.user_call(collective.frames)
        return (
            f" (DDP's gradient all-reduce, in backward() at {call.file}:{call.line})"
            if call
            else " (in backward)"
        )
    return fr.where(collective)


def format_report(
    stacks: list[RankStack],
    timeout: float,
    extra: str = "",
    records: dict | None = None,
    nodes: int = 1,
    found: Verdict | None = None,
) -> str:
    """The hang report: where every rank is (ranks in the same place on one line), then the diagnosis,
    joined with the ranks' flight-recorder ``records`` (rank -> `RankRecord`) when there are any."""
    scope = "Where every rank is:"
    if nodes > 1:
        scope = f"Where every rank of the job ({len(stacks)} ranks on {nodes} nodes) is:"
    lines = [f"torchdoctor: hang: no progress for {timeout:g}s. {scope}", ""]
    lines += grouped(stacks)
    found = found or verdict(stacks, records)
    lines += ["", found.text]
    if found.culprits:
        where = f" at {found.where.file}:{found.where.line}" if found.where else ""
        others = [s.rank for s in stacks if s.rank not in found.culprits]
        lines.append(
            f"Culprit: {_count(found.culprits)}{where}"
            + (f"; {_count(others)} wait because of it." if others else ".")
        )
    missing = [
        f"rank {s.rank}: {'; '.join(s.evidence)}" for s in sorted(stacks, key=lambda s: s.rank) if s.evidence
    ]
    if missing:
        lines.append("Evidence not used: " + "; ".join(missing) + ".")
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"


def stack_dict(stack: RankStack) -> dict:
    return {
        "rank": stack.rank,
        "pid": stack.pid,
        "host": stack.host,
        "frames": [[f.file, f.line, f.function] for f in stack.frames],
    }
