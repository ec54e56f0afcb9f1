"""A run stopped with Ctrl-C: where it was waiting when the user gave up on it, read from its traceback.

A ``KeyboardInterrupt`` traceback is what a user holds after a hang: the run stopped moving, they pressed
Ctrl-C, and Python printed where the main thread was. Its innermost torch frame says what the run waited for —
``mp.spawn`` waiting for its processes, ``init_process_group`` for ranks that never joined, a collective for a
rank that never made the call, the ``DataLoader`` for its workers — and so where to look next. Without such a
frame it is only the user's own stop, and said so: not a failure the log explains.
"""

from __future__ import annotations

from torchdoctor.explain import first_failure
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.recognisers import Context
from torchdoctor.findings import Finding
from torchdoctor.hang.source import Frame

# the catalog's template this reading is built from (benchmarks/certainty_audit.py counts it as mapped here)
TEMPLATES = ("system:keyboard-interrupt",)

_WATCH = (
    "To see where every rank waits, start it with torchrun under `torchdoctor launch --watchdog 60 train.py`: when "
    "the ranks stop moving it prints each one's stack and names the one the others wait for (`py-spy dump --pid "
    "PID` shows one process's)."
)
# (what the run waited for, the fix), by the place of its innermost torch frame
_SPAWN = (
    "mp.spawn was waiting for its processes to end",
    "The processes mp.spawn started were still running: the hang is in them, and their own tracebacks are not in "
    "this log (a process blocked in torch's C++ code — init_process_group, a collective — does not stop at "
    "Ctrl-C, and the parent waits for it again as it exits: `pkill -f spawn_main` ends them). A hang at start is "
    "most often init_process_group waiting for world_size processes where mp.spawn started fewer: on one machine "
    "mp.spawn(fn, nprocs=world_size, args=(world_size, ...)). " + _WATCH,
)
_JOIN = (
    "init_process_group was waiting for the other ranks to join",
    "Fewer processes reached init_process_group than world_size says, or they meet at another address: start "
    "every rank (nprocs / --nproc-per-node × --nnodes = WORLD_SIZE), give all of them the same MASTER_ADDR and "
    "MASTER_PORT, reachable from every node (`torchdoctor net` checks it), and while debugging pass "
    "init_process_group(..., timeout=datetime.timedelta(minutes=2)) to get an error instead of a 30-minute wait.",
)
_DATA = (
    "the DataLoader was waiting for a batch from its worker processes",
    "A worker stopped making batches: a deadlock in the dataset's code (a lock or a file handle opened before "
    "the workers forked, a thread pool in the dataset), or a read from a network file system that stalled. "
    "num_workers=0 runs the dataset in the main process, where its own error or hang shows; `py-spy dump "
    "--pid PID` on a worker shows where it waits.",
)


def _collective(function: str) -> tuple[str, str]:
    return (
        f"the collective {function}() was waiting for the other ranks",
        f"A rank never made the matching {function}() call (it ran other code, returned early, skipped a batch, or "
        "failed without its error reaching this log): every rank must make the same collectives in the same "
        "order. `torchdoctor launch --debug` names the call each rank made instead. " + _WATCH,
    )


def _waiting_place(frames: list[Frame]) -> tuple[str, str] | None:
    """What the innermost torch frame among ``frames`` was waiting for, and the fix; None for no such frame."""
    for frame in reversed(frames):
        path = frame.file.replace("\\", "/")
        if "torch/multiprocessing/spawn.py" in path:
            return _SPAWN
        if "torch/utils/data/dataloader.py" in path:
            return _DATA
        if "torch/distributed/" not in path:
            continue
        if "rendezvous" in path or frame.function in (
            "init_process_group",
            "_store_based_barrier",
            "_new_group_with_tag",
        ):
            return _JOIN
        if path.endswith("distributed_c10d.py") and not frame.function.startswith("_"):
            return _collective(frame.function)
    return None


# torch/distributed/elastic/multiprocessing (subprocess_handler.py, api.py): on Windows torchrun stops the workers
# still running, once one failed or the agent itself is stopped, with CTRL_C_EVENT (SIGTERM elsewhere), which
# Python raises in each of them as KeyboardInterrupt: a rank's KeyboardInterrupt there may be no one's Ctrl-C
_STOPPED_BY_TORCHRUN = (
    "torchrun stopping this worker after another rank failed (on Windows it stops the workers with Ctrl-C's "
    "signal)"
)
_SWEEP_STOPPED = (
    "If you did not press Ctrl-C: the sweep's agent ended the run, as its early termination (hyperband) or a "
    "stopped sweep does; the agent's own output and the sweep's page on wandb say which. Nothing failed."
)
_FIND_THE_FIRST = (
    "If you did not press Ctrl-C: the rank that failed first is the cause, and its error is not in this log. "
    "torchrun's summary (its Root Cause) names it; run again with torchrun --log-dir logs --redirects 3 --tee 3 to "
    "keep each rank's output and read that rank's."
)


# wandb/wandb_agent.py (AgentProcess.terminate): a sweep agent stops the run it started (a run the sweep's early
# termination ends, `wandb sweep --stop`) with CTRL_C_EVENT on Windows, "terminate is too strong" there
_STOPPED_BY_SWEEP_AGENT = (
    "the wandb sweep agent stopping this run (on Windows it stops its runs with Ctrl-C's signal: the sweep's early "
    "termination, or the sweep stopped)"
)


def _who_else_stopped_it(raised: Raised, ctx: Context | None) -> str:
    """Who else may have sent a KeyboardInterrupt on Windows, where launchers stop a process with Ctrl-C's
    signal: torchrun, where the process was one of several ranks (its line has a rank, or the log shows several,
    or a launcher's summary), a wandb sweep agent where one started the run; "" for no one but the user."""
    if ctx is None or "on_windows" not in ctx.facts:
        return ""
    if raised.rank is not None or len(ctx.ranks) > 1 or "failure_summary_in_input" in ctx.facts:
        return _STOPPED_BY_TORCHRUN
    return _STOPPED_BY_SWEEP_AGENT if "wandb_sweep_agent" in ctx.facts else ""


def stopped(raised: Raised, ctx: Context | None = None) -> Finding | None:
    """The finding for a run stopped with Ctrl-C (``raised`` a KeyboardInterrupt); None for another exception.
    ``ctx``: the whole log's facts (a Windows run's rank may have been stopped by torchrun, not by its user)."""
    if raised.type != "KeyboardInterrupt":
        return None
    where = first_failure.where(raised)
    details = first_failure.details_of(raised, "interrupted")
    place = _waiting_place(raised.frames)
    if place is None:
        summary = f"the run was stopped with Ctrl-C (KeyboardInterrupt) at {where}; nothing in this log says it failed"
        fix = (
            "The log ends where you stopped the run; it shows no error before that. If it had stopped moving, "
            "rerun it and stop it again while it hangs: the traceback then names what it waited for. "
            + _WATCH
        )
        # the user's own Ctrl-C is what the line says (certain), unless torchrun may have sent it
        details["confidence"] = "certain"
        other = _who_else_stopped_it(raised, ctx)
        if other == _STOPPED_BY_TORCHRUN:
            details["confidence"] = "likely"
            details["alternatives"] = ["log.child_failed"]
            summary = f"likely: {summary}; or {_STOPPED_BY_TORCHRUN}"
            fix += "\n" + _FIND_THE_FIRST
        elif other:
            details["confidence"] = "likely"  # no kind of its own: the summary and the fix name the agent
            summary = f"likely: {summary}; or {other}"
            fix += "\n" + _SWEEP_STOPPED
        return Finding("log.interrupted", "skip", summary, details, fix)
    waited, fix = place
    details["kind"] = "interrupted_while_waiting"
    details["confidence"] = "likely"
    details["waited_in"] = str(next(f for f in reversed(raised.frames) if "torch" in f.file))
    summary = f"likely a hang: the run was stopped with Ctrl-C while {waited} (at {where})"
    return Finding("log.interrupted_while_waiting", "fail", summary, details, fix)


def rank_places(raised: list[Raised]) -> str:
    """``rank 1 was at data.py:15 in __getitem__: time.sleep(3600) (in the DataLoader)``: where each rank's main
    thread was when a Ctrl-C stopped it, by its KeyboardInterrupt traceback; ``""`` when no rank printed one."""
    places = {}
    for each in raised:
        if each.type == "KeyboardInterrupt" and each.rank is not None and each.frame is not None:
            # what torch waited for below the user's line; none where the user's line itself was running
            below = [f for i, f in enumerate(each.frames) if each.frame in each.frames[:i]]
            waiting = _waiting_place(below)
            places.setdefault(each.rank, first_failure.where(each) + (f" ({waiting[0]})" if waiting else ""))
    return "; ".join(f"rank {rank} was at {place}" for rank, place in sorted(places.items()))
