"""Where each rank is, in words: in which collective and whose (the user's, DistributedDataParallel's,
torchdoctor's own), or where instead; ranks in the same place grouped into one line.
"""

from __future__ import annotations

import linecache
import os
import re

from torchdoctor.hang.source import Frame, is_ours, is_user_code, user_call
from torchdoctor.hang.stacks import RankStack
from torchdoctor.rank_list import ranks_text

COLLECTIVES = frozenset(
    "barrier monitored_barrier all_reduce all_gather all_gather_object all_gather_into_tensor all_gather_single "
    "reduce_scatter reduce_scatter_tensor reduce_scatter_single broadcast broadcast_object_list reduce gather gather_object "
    "scatter scatter_object_list all_to_all all_to_all_single send recv isend irecv batch_isend_irecv "
    "init_process_group new_group destroy_process_group pad_across_processes".split()
)
# torch.distributed._functional_collectives' calls a rank waits in (the collective's own call, or the wait at its
# result's first use), which tensor parallelism and DTensor make; not torch.distributed's Python functions
_FUNCTIONAL = frozenset(
    "wait_tensor all_reduce all_gather_single all_gather_tensor reduce_scatter_single reduce_scatter_tensor "
    "broadcast all_to_all_single all_reduce_coalesced all_gather_into_tensor_coalesced "
    "reduce_scatter_tensor_coalesced".split()
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

# debug mode's check-in with the other ranks at a call new to this rank (distributed/debug.py): check_collective
# for its own operations, _first_time under every wrapped torch.distributed call, where a rank waits for a peer
# that never comes (found with a barrier under `if rank == 0:` after a broadcast_object_list: the report said
# "no rank is in a collective")
_DEBUG_CHECK_IN = frozenset({"check_collective", "_first_time"})


def collective_of(frames: list[Frame]) -> str | None:
    """``"torch.distributed.barrier"`` when the stack is inside a collective called from user code, else None.

    Collectives that are not on the user's line are named for whose they are: DistributedDataParallel's
    (its parameter broadcast, its buffer sync, the gradients' all-reduce in ``backward()``) and torchdoctor's
    own (``find_executable_batch_size``'s agreement across ranks: the user's line only calls the function)."""
    user = [i for i, f in enumerate(frames) if is_user_code(f.file)]
    below = frames[user[-1] + 1 if user else 0 :]
    # the straggler watch's timing wrappers stand between the user's call and torch's, and are no call of ours
    ours = next((f for f in below if is_ours(f.file) and not _timing_wrapper(f.file)), None)
    for frame in below:
        path = frame.file.replace(os.sep, "/")
        if path.endswith("torch/nn/parallel/distributed.py") or path.endswith("torch/distributed/utils.py"):
            ddp = _DDP_STEPS.get(frame.function)
            if ddp:
                return f"DistributedDataParallel's {ddp} ({frame.function})"
        if path.endswith("torch/distributed/_functional_collectives.py") and frame.function in _FUNCTIONAL:
            # tensor parallelism's and DTensor's collectives: the user's line is the model's forward or backward
            return f"a functional collective of tensor parallelism or DTensor ({frame.function})"
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
        if path.endswith("torchdoctor/distributed/debug.py") and frame.function in _DEBUG_CHECK_IN:
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
    teardown = in_teardown(stack.frames)
    if collective:
        head = f"waiting in {collective}"
    elif teardown:  # torch's destroy_process_group shuts each group down, which waits for its work in flight
        head = (
            "not in a collective; inside destroy_process_group, which waits for this rank's collectives still "
            "in flight (one made with async_op=True and never waited for, or one no other rank makes)"
        )
    elif helper and helper[1]:
        pid = f" (pid {helper[0]})" if helper[0] else ""  # unknown when read back from a kept folder
        head = f"not in a collective; waiting for its DataLoader worker{pid}, which is in"
        return head, list(reversed(helper[1][-4:]))
    elif user and innermost is not user[-1]:
        head = f"not in a collective; in {innermost.function} ({innermost.file}:{innermost.line})"
    else:
        head = "not in a collective"
    shown = user[-4:] if user else stack.frames[-4:]
    return head, list(reversed(shown))


def in_teardown(frames: list[Frame]) -> bool:
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


def silent_text(stacks: list[RankStack]) -> str:
    """`` Rank 1 did not answer: its process is stopped (...)``, for the ranks that gave no stack."""
    said = [
        f"rank {s.rank}: {s.note}" for s in stacks if not s.frames and s.note and "returned" not in s.note
    ]
    return (" " + "; ".join(said) + ".") if said else ""


def ranks_named(ranks) -> str:
    """``"rank(s) 0-2, 5"``."""
    return f"rank(s) {ranks_text(ranks)}"


def user_frame(stack: RankStack) -> Frame | None:
    """The innermost frame of the user's code where this rank is: in its DataLoader worker when it waits
    for one (the worker holds the rank back), else in its own main thread."""
    for _, frames in stack.helpers:
        inner = next((f for f in reversed(frames) if is_user_code(f.file)), None)
        if inner:
            return inner
    return user_call(stack.frames)


def _timing_wrapper(path: str) -> bool:
    """A frame of the straggler watch's hooks (`torchdoctor.stragglers.hooks`, `.functional`): they time the user's
    own calls."""
    return path.replace(os.sep, "/").endswith(
        ("torchdoctor/stragglers/hooks.py", "torchdoctor/stragglers/functional.py")
    )
