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

from torchdoctor.hang.source import Frame, is_ours, is_user_code, user_call  # noqa: F401 - read from here too
from torchdoctor.rank_list import ranks_text

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
                if ours is not None and not ours.file.endswith(("debug.py", "agreement.py", "operations.py")):
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
        return f"no stack: {stack.note or 'unknown'}", []
    collective = collective_of(stack.frames)
    user = [f for f in stack.frames if is_user_code(f.file)]
    innermost = stack.frames[-1]
    if collective:
        head = f"waiting in {collective}"
    elif user and innermost is not user[-1]:
        head = f"not in a collective; in {innermost.function} ({innermost.file}:{innermost.line})"
    else:
        head = "not in a collective"
    shown = user[-4:] if user else stack.frames[-4:]
    return head, list(reversed(shown))


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
    if records:
        joined = _joined_verdict(stacks, records)
        if joined:
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
            return (
                f"{_count(finished)} had already finished the script while {_count(ranks)} wait in {collective}: "
                "the ranks made different numbers of collective calls (a loop that ran longer on some ranks, "
                "uneven data per rank, a condition on the rank)."
            )
        if "inside torchdoctor's" in collective:
            return (
                f"{_count(absent)} never reached {collective}, where {_count(ranks)} wait: every rank must call the "
                "function that contains it the same number of times."
            )
        hint = _rank_condition_hint(waiters[:1] + elsewhere)
        return f"{_count(absent)} never reached {collective}, where {_count(ranks)} wait: " + (
            hint
            or "look for a condition on the rank (an `if rank == ...`, an early `return` or `break`) before it."
        )
    if len(waiting) > 1:
        places = "; ".join(f"{_count(r)} in {c}" for c, r in waiting.items())
        return f"the ranks wait in different collectives ({places}): they must call them in the same order."
    if waiting:
        ((collective, ranks),) = waiting.items()
        return f"every rank waits in {collective}: a rank on another node, or a peer process, never came."
    return "no rank is in a collective: the run is stuck in the script itself."


def _count(ranks) -> str:
    return f"rank(s) {ranks_text(ranks)}"


def _user_frame(stack: RankStack) -> Frame | None:
    return user_call(stack.frames)


def _left_the_loop(waiters: list[RankStack], elsewhere: list[RankStack]) -> str:
    """When the waiting ranks are inside a loop of the user's code and the others are past it (or have
    finished), the ranks ran different numbers of iterations: say so."""
    from torchdoctor.hang.source import enclosing_loop

    frame = _user_frame(waiters[0]) if waiters else None
    loop = enclosing_loop(frame.file, frame.line) if frame else None
    if loop is None:
        return ""
    first, last = loop
    out = []
    for stack in elsewhere:
        finished = not stack.frames and ("returned" in stack.note or "exited" in stack.note)
        if not finished and not _past(waiters[0].frames, stack.frames, frame, last):
            return ""  # inside the loop too, not there yet, or no telling: no claim
        out.append(stack)
    place = "; ".join(
        f"rank {s.rank} is in {s.frames[-1].function} ({s.frames[-1].file}:{s.frames[-1].line})"
        if s.frames
        else f"rank {s.rank}: {s.note}"
        for s in out[:4]
    )
    collective = collective_of(waiters[0].frames)
    return (
        f"{_count([s.rank for s in out])} left the loop at {frame.file}:{first}-{last} while "
        f"{_count([s.rank for s in waiters])} still run it, waiting in {collective} ({frame.file}:{frame.line}); "
        f"{place}. The ranks ran different numbers of iterations: give every rank the same number of batches "
        "(DistributedSampler(drop_last=True), data split evenly), or run the loop under DDP's "
        "`with model.join():`, which lets ranks with fewer batches finish."
    )


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


def _rank_condition_hint(stacks: list[RankStack]) -> str:
    """The innermost condition on the rank around any of the user's frames of these ranks, named."""
    from torchdoctor.hang.source import rank_condition

    for stack in stacks:
        for frame in reversed(stack.frames):
            found = rank_condition(frame.file, frame.line) if is_user_code(frame.file) else None
            if found:
                return f"rank {stack.rank}'s line {frame.file}:{frame.line} sits under a condition on the rank, {found}."
    return ""


def _joined_verdict(stacks: list[RankStack], records: dict) -> str:
    """The flight recorder's first disagreement per process group, joined with where the ranks that are
    behind are now: ``rank 1 never entered all_reduce #3 (train.py:10): it is in save_checkpoint (...)``."""
    from torchdoctor.explain import flight_recorder as fr

    by_rank = {s.rank: s for s in stacks}
    sentences = []
    for d in fr.disagreements(records, sorted(by_rank)):
        finding = fr.to_finding(d)
        if d.kind != "never_entered":
            sentences.append(finding.summary + ".")
            continue
        (example,) = d.examples.values()
        entered = sorted(r for ranks in d.entered.values() for r in ranks)
        if not example.frames:  # dumped without stacks: the ranks waiting in it show where it was called
            live = next(
                (by_rank[r].frames for r in entered if r in by_rank and collective_of(by_rank[r].frames)), []
            )
            example.frames = [Frame(f.file, f.line, f.function) for f in live]
        text = (
            f"{fr.who(d.behind)} never entered {example.shape()}{_ddp_where(example)}, "
            f"which {fr.who(entered)} entered"
        )
        now = [_is_now(by_rank[rank]) for rank in d.behind[:6] if rank in by_rank]
        sentences.append(text + (": " + "; ".join(now) if now else "") + ".")
        waiters = [by_rank[r] for r in entered if r in by_rank][:1]
        elsewhere = [by_rank[r] for r in d.behind if r in by_rank]
        left = _left_the_loop(waiters, elsewhere) if waiters and elsewhere else ""
        if left:
            sentences.append(left)
            continue
        # the lone collective, or a call on its way there, under a condition on the rank: that is the line
        calls = [f for f in reversed(example.frames) if not fr.is_library(f.file)]
        found = next(
            ((c, fr.rank_condition(c.file, c.line)) for c in calls if fr.rank_condition(c.file, c.line)), None
        )
        if found:
            sentences.append(
                f"{found[0].file}:{found[0].line} sits under a condition on the rank, {found[1]}: "
                "every rank must make the same collective calls."
            )
        else:
            sentences.append(_rank_condition_hint(elsewhere) or fr.to_finding(d).fix.splitlines()[0])
    return "\n".join(sentences)


def _is_now(stack: RankStack) -> str:
    """``"rank 1 is in save_checkpoint (train.py:44), called from train.py:20 in main"``."""
    if not stack.frames:
        return f"rank {stack.rank}: {stack.note or 'no stack'}"
    user = _user_frame(stack)
    collective = collective_of(stack.frames)
    if collective:
        return f"rank {stack.rank} waits in {collective}" + (f" ({user})" if user else "")
    innermost = stack.frames[-1]
    callers = [f for f in stack.frames[:-1] if is_user_code(f.file)]
    called = f", called from {callers[-1]}" if callers else ""
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
    stacks: list[RankStack], timeout: float, extra: str = "", records: dict | None = None, nodes: int = 1
) -> str:
    """The hang report: where every rank is (ranks in the same place on one line), then the diagnosis,
    joined with the ranks' flight-recorder ``records`` (rank -> `RankRecord`) when there are any."""
    scope = "Where every rank is:"
    if nodes > 1:
        scope = f"Where every rank of the job ({len(stacks)} ranks on {nodes} nodes) is:"
    lines = [f"torchdoctor: hang: no progress for {timeout:g}s. {scope}", ""]
    lines += grouped(stacks)
    lines += ["", diagnosis(stacks, records)]
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
