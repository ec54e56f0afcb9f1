"""The hang report `torchdoctor launch --watchdog` printed, read back from the console output it went to.

A run the watchdog stopped leaves its verdict on the console (``torchdoctor: hang: no progress for 20s. Where
every rank is:``, each rank's place, then ``Culprit: rank(s) 1 at train.py:26; rank(s) 0 wait because of it.``
and the folder of full stacks). A log of that run handed to `explain` says it again: the rank that held the
others up, its line, and the folder whose stacks `explain FOLDER` reads (`log.hang_verdict`, the finding a kept
watchdog folder gives). The failed-job form of the same line (``torchdoctor: failed: ...``, "What each rank
left") is not read as a hang: the rank's own traceback in the log is its cause — except where the verdict is that a
rank ended while the others still trained (``torchdoctor: failed: rank 1 ended while rank 0 still trained: ...``,
`launch` with the watchdog or debug mode): then the traceback in the log is the survivor's lost peer, a
consequence, and the verdict names the cause (`ranks_ended_early`).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, has_fact, on_ranks
from torchdoctor.hang.odd_rank import collective_at, culprit_sentence, odd_rank_out

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

HEAD = "torchdoctor: hang: no progress for "
CULPRIT = "Culprit: rank(s) "
FOLDER = R(r"Full stacks: (?P<folder>\S+?)/rank\*\.stack")
# the ranks' flight records compared (explain/flight_recorder/findings.py), a line of the report when no rank
# is the culprit: "process group 0 (default_pg): collective #2 has different operations on different ranks:
# rank 0: scatter #2 [2, 16] Float (tp.py:96 in <module>); rank 1: broadcast #2 [32] Float (tp.py:96 in <module>)."
MISMATCH = R(
    r"collective #(?P<mismatch_seq>\d+) has (?P<mismatch_kind>different (?:operations|sizes|dtypes)) on different "
    r"ranks: (?P<mismatch>[^\n]{1,600}?)\.?$",
    re.M,
)
# the folder is said a few lines below the report's head, after the verdict, and so is the mismatch: read from
# anywhere in the log
# the report's reading of ranks past the loop the others still run (hang/verdict.py left_the_loop), and the loop's
# early exits it names ("The loop can be left early at line 153: `if accelerator.is_main_process and ...:`")
LEFT_LOOP = R(
    r"(?P<left_loop>rank\(s\) [\d, -]{1,80} left the loop at \S{1,300}:\d+-\d+ while rank\(s\) [\d, -]{1,80} still "
    r"run it)"
)
LOOP_EXIT = R(r"The loop can be left early at (?P<loop_exit>line \d+: `[^`\n]{1,200}`)")
CONTEXT = (
    ("Full stacks: ", FOLDER),
    (" on different ranks: ", MISMATCH),
    (" left the loop at ", LEFT_LOOP),
    ("The loop can be left early at ", LOOP_EXIT),
    # hang/at_exit.py's verdict: every script returned, a rank's process did not end
    (
        ", but its process has not ended",
        R(r"(?P<at_exit>rank \d+'s script returned \d+s ago, but its process has not ended[^\n]{0,300})"),
    ),
    # distributed/messages.py divergence_message's head, the line above the mismatch it explains
    ("The ranks diverged at collective #", R(r"The ranks diverged at collective #(?P<debug_seq>\d+)")),
    # hang/failure.py's verdict on a failed job: the waiting rank's call sat under a condition on the rank
    (
        "a call made under a condition on the rank at ",
        R(
            r"a call made under a condition on the rank at (?P<survivor_condition>\S+:\d+ \(`[^`\n]{1,200}`\))"
        ),
    ),
    # hang/failure.py's verdict on a failed job: a rank died (gloo aborts the rank that received a size it did not
    # expect) inside its own collective call, which sat under a condition on the rank (u41: nanoGPT's evaluation on
    # rank 0 only, an all_reduce planted in it)
    (
        ", in its last collective call, ",
        R(
            r"torchdoctor: failed: (?P<died_rank>rank \d+) died without a Python error [^\n]{0,200}?, in its last "
            r"collective call, (?P<died_call>\S+ #\d+ at \S+:\d+)[^\n]*?sits under a condition on the rank, "
            r"(?P<died_condition>line \d+: `[^`\n]{1,200}`)"
        ),
    ),
    # the same verdict where faulthandler placed the rank (since session 42: rank<N>.fatal, the place the signal
    # found it, with gloo's reason in brackets); the call's name is not said, its place is
    (
        " (gloo aborted it: ",
        R(
            r"torchdoctor: failed: (?P<died_rank>rank \d+) died without a Python error \([^\n]{0,200}?\) at "
            r"(?P<died_call>\S+:\d+)(?: in \S+)? \(gloo aborted it: [^\n]*?sits under a condition on the rank, "
            r"(?P<died_condition>line \d+: `[^`\n]{1,200}`)"
        ),
    ),
    # hang/joined_verdict.py: DDP's ranks split between backward's all-reduce and the next forward's collectives
    (
        "Under DDP ",
        R(
            r"Under DDP (?P<ddp_passes>ranks? [\d, -]{1,80} waits? in backward's gradient all-reduce while ranks? "
            r"[\d, -]{1,80} waits? in DDP's collectives before the next forward)"
        ),
    ),
    # distributed/messages.py: debug mode's missing rank found inside backward() (DDP's unchecked all-reduce)
    (
        "it is in backward(): ",
        R(r"(?P<missing_in_backward>it is in backward\(\): a model wrapped in Distributed)"),
    ),
)


# each rank's call in the mismatch: "rank 0: scatter #1 [2, 4, 4] Float (place.py:14 in <module>)"
_OPERATION = R(r"rank \d+: (\w+) #\d+")
_CALL_LINE = R(r"rank \d+: [^;]*?\((\S+:\d+) in [^)]*\)")


def _per_rank_arguments(mismatch: str) -> str:
    """What to add to the fix when every rank's call in ``mismatch`` was made at one line (its arguments differ per
    rank: a DTensor's placements where some ranks scatter and others broadcast), else ""."""
    lines = set(_CALL_LINE.findall(mismatch))
    operations = _OPERATION.findall(mismatch)
    if len(lines) != 1 or len(operations) < 2:
        return ""
    said = (
        f" Here every rank made its call at one line, {lines.pop()}: what differs is the call's own arguments, "
        "computed per rank. "
    )
    if {"scatter", "broadcast"} <= set(operations):
        return said + (
            "A scatter on some ranks and a broadcast on others is DTensor's distribute_tensor (or distribute_module, "
            "a parallelize_plan) given different placements: Shard(dim) scatters, Replicate() broadcasts; build the "
            "placements from nothing rank-specific."
        )
    return said + "Print them on each rank before the call (a src=, a size, a placement read from the rank)."


def _hang(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    seconds = first(hits, "timeout")
    culprits, where = first(hits, "culprits"), first(hits, "where")
    waiting, folder = first(hits, "waiting"), first(hits, "folder") or ctx.facts.get("folder")
    after = f" after {seconds} s without progress" if seconds else ""
    at_exit = ctx.facts.get("at_exit")
    if culprits and at_exit:  # hang/at_exit.py: every script returned, a process did not end
        summary = f"torchdoctor's watchdog stopped a hang at exit{after}: {at_exit}"
        fix = (
            "A rank's script returned but its process did not end: Python waits at exit for every thread that is not "
            "a daemon, then runs atexit handlers and destructors. Stop the thread the report names and join() it "
            "before the script returns (or start it with daemon=True); without a thread, look at atexit handlers "
            "and at what the script leaves open (a process group not destroyed, DataLoader workers, a pool)."
        )
    elif culprits and ctx.facts.get("left_loop"):
        summary, fix = _left_loop(after, ctx)
    elif culprits:
        summary = (
            f"torchdoctor's watchdog stopped a hang{after}: rank(s) {culprits}"
            + (f" at {where}" if where else "")
            + " held the others up"
            + (f"; rank(s) {waiting} waited for it" if waiting else "")
        )
        fix = (
            f"Look at what rank(s) {culprits} did"
            + (f" at {where}" if where else "")
            + " that the others did not: the report above names the collective the others waited in and "
            "whether the line sits under a condition on the rank (an evaluation, a save or a data step only "
            "some ranks take, a loop of another length, an exception caught on one rank)."
        )
    elif ctx.facts.get("mismatch"):
        # no rank is the odd one out, but their flight records show where their calls part ways
        summary = (
            f"torchdoctor's watchdog stopped a hang{after}: the ranks entered collective "
            f"#{ctx.facts['mismatch_seq']} with {ctx.facts['mismatch_kind']}: {ctx.facts['mismatch']}"
        )
        fix = (
            "Every rank of a group must make the same collective calls in the same order, with the same sizes and "
            "dtypes. The report names each rank's call and line: look between them for what differs per rank (a "
            "condition on the rank, a setting or plan read per rank, such as a parallelize_plan or a model built "
            "differently, or a loop of another length)."
        )
        fix += _per_rank_arguments(ctx.facts["mismatch"])
        if ctx.facts.get("ddp_passes"):
            # found with accelerate's gradient_accumulation.py, rank 1 skipping a NaN loss with `continue`
            summary += (
                f"; under DDP {ctx.facts['ddp_passes']}: the ranks ran different numbers of backward passes"
            )
            fix = (
                "Under DDP every rank must run backward after every forward (backward all-reduces the gradients, "
                "the next forward synchronises buffers): look for a loss skipped on some ranks only (a NaN or inf "
                "check followed by `continue`, an empty batch), no_sync() on some ranks only, or a different number "
                "of batches per rank; skip on every rank together (all_reduce the skip decision first).\n"
                + fix
            )
    else:
        summary = f"torchdoctor's watchdog stopped a hang{after}; its report names no single rank that held the others up"
        fix = (
            "Read the report above: every rank is waiting inside collectives (a deadlock of their order, a "
            "peer's network or device) or no rank was seen in one; `--watchdog` with a longer time tells a slow "
            "step from a hang."
        )
    if folder:
        fix += f" `torchdoctor explain {folder}` reads the full stacks and flight-recorder dumps again while that folder is kept."
    return summary, fix


def _left_loop(after: str, ctx: Context) -> tuple[str, str]:
    """The report's verdict that some ranks left the loop the others still run, with the loop's early exit where
    it named one (a break taken by one rank alone: early stopping on its own loss, on the main process only)."""
    summary = f"torchdoctor's watchdog stopped a hang{after}: {ctx.facts['left_loop']}"
    exit_ = ctx.facts.get("loop_exit")
    if not exit_:
        fix = (
            "The ranks ran different numbers of iterations: give every rank the same number of batches "
            "(DistributedSampler(drop_last=True), data split evenly), or run the loop under DDP's `with "
            "model.join():`."
        )
        return summary, fix
    summary += f"; the loop can be left early at {exit_}"
    fix = (
        "A rank that decides alone to leave the loop (a break on its own loss or metric, or under a condition on "
        "the rank) leaves the others waiting in the loop's collectives: decide together, with a flag every rank "
        "reduces (stop = torch.tensor(float(should_stop)); dist.all_reduce(stop); if stop.item() > 0: break), "
        "accelerate's accelerator.set_trigger() and `if accelerator.check_trigger(): break` on every rank, or "
        "Lightning's self.trainer.should_stop."
    )
    return summary, fix


HANG_VERDICT = Recogniser(
    kind="hang_verdict",
    title="a hang torchdoctor's watchdog stopped",
    anchors=(HEAD, CULPRIT),
    templates=("torchdoctor:hang-no-progress-for", "torchdoctor:culprit-ranks-wait-because-of-it"),
    span=2,
    # the failed job's culprit line: its cause is the rank's own traceback in the log
    reject=R(r"What each rank left: "),
    facts=(
        R(r"torchdoctor: hang: no progress for (?P<timeout>\d+(?:\.\d+)?)s\."),
        R(
            r"Culprit: rank\(s\) (?P<culprits>\d[\d,\- ]*?)(?: at (?P<where>\S+:\d+))?"
            r"(?:; rank\(s\) (?P<waiting>\d[\d,\- ]*?) wait because of it)?\.(?:\n|$)"
        ),
        FOLDER,
    ),
    # our own report's head or its culprit line beside the folder it names: nothing else prints them
    confirm=lambda hits, ctx: has_fact("timeout")(hits, ctx) or has_fact("folder")(hits, ctx),
    describe=_hang,
)


# what the verdict concludes from a rank that ended while another was in a collective (verdict.py replaces it
# where that collective was a state dict's gather: no loop ran a different number of times)
DIFFERENT_ITERATIONS = "the ranks ran different numbers of iterations"


def _ended(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    ended, waiting, how = first(hits, "ended"), first(hits, "still_training"), first(hits, "how")
    where, culprit_line = first(hits, "where"), first(hits, "culprit_line")
    summary = f"{ended} ended while {waiting} still trained" + (f" ({how})" if how else "")
    branch = first(hits, "ended_condition")
    if branch:  # the waiting rank's collective sat in a branch that the rank that ended did not take
        summary += (
            f": {waiting} made a collective under a condition on the rank at {branch} that {ended} skipped"
        )
        where = where.split(", a call made under a condition on the rank at ")[0] if where else None
        summary += f"; {where}" if where else ""
        return summary, (
            f"{waiting.capitalize()} made a collective inside `{first(hits, 'ended_condition_code')}` (a barrier, a full state "
            "dict's gather, a DTensor's full_tensor(), a metric synchronised across ranks) that the other ranks "
            "never make, so they went on and ended: make that call on every rank and keep only the write or the "
            "print under the condition."
        )
    summary += f": {DIFFERENT_ITERATIONS}; {where}" if where else ""
    fix = (
        "Give every rank the same number of batches (DistributedSampler(..., drop_last=True), data split evenly "
        "across ranks, no early return or break on some ranks only), or, under DDP, run the loop in "
        "`with model.join():` (torch.distributed.algorithms.Join), which lets ranks with fewer batches finish."
    )
    if culprit_line:
        fix += f" The loop {ended} left is at {culprit_line}."
    return summary, fix


ENDED_EARLY = Recogniser(
    # src/torchdoctor/hang/failure.py ended_early, printed by supervise.py's failed-job report
    kind="ranks_ended_early",
    title="a rank that ended while the others still trained",
    anchors=(" still trained: ",),
    templates=("torchdoctor:ranks-ended-while-still-trained",),
    match=R(r"torchdoctor: failed: ranks? \d[\d, ]* ended while ranks? \d[\d, ]* still trained: "),
    # its "Culprit: rank(s) 1 at ..." line below is no hang's (under `launch --debug` no folder line follows it)
    absorbs=("hang_verdict",),
    span=1,
    facts=(
        R(
            r"torchdoctor: failed: (?P<ended>ranks? \d[\d, ]*?) ended while (?P<still_training>ranks? \d[\d, ]*?) "
            r"still trained: (?P<how>[^;\n]*); (?P<where>rank \d+ was [^\n]*?), and failed as its consequence"
        ),
        R(r"Culprit: rank\(s\) [\d,\- ]+? at (?P<culprit_line>\S+:\d+)\."),
        # hang/failure.py: the waiting rank's call chain passed a condition on the rank
        R(
            r"a call made under a condition on the rank at (?P<ended_condition>\S+:\d+) "
            r"\(`(?P<ended_condition_code>[^`\n]{1,200})`\)"
        ),
    ),
    describe=_ended,
)


def _died(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    verdict, culprit_line, kept = (
        first(hits, "died"),
        first(hits, "died_culprit_line"),
        first(hits, "died_folder"),
    )
    # the verdict's advice on a call under a condition on the rank goes to the fix, not the summary
    verdict, _, advice = verdict.partition(" The ranks that skip that branch ")
    summary = f"{verdict.rstrip('.')} (torchdoctor launch's verdict on the failed job)"
    fix = f"The ranks that skip that branch {advice.strip()}\n" if advice else ""
    fix += (
        "The rank named died without a Python error, so no traceback in the log is its cause: a signal ended it "
        "(SIGKILL: the kernel's out-of-memory killer, see `dmesg`; SIGABRT: a C++ abort, gloo's on a collective the "
        "ranks called with other sizes or another operation) or it called os._exit; the other ranks' lost peer is "
        "its consequence."
    )
    if culprit_line:
        fix += f" Look at {culprit_line} first."
    if kept:
        fix += f" `torchdoctor explain {kept}` reads what each rank left again while that folder is kept."
    return summary, fix


# launch's verdict on a failed job whose culprit died without a Python error (hang/failure.py failure_verdict): the
# report alone says who failed, where a --log-dir holds only torchdoctor-report.txt (torchrun without --redirects
# writes no rank's log there; u41, nanoGPT's evaluation with an all_reduce on rank 0 only)
RANK_DIED = Recogniser(
    kind="rank_died",
    title="a rank that died without a Python error",
    anchors=(" died without a Python error (",),
    templates=("torchdoctor:rank-died-without-a-python-error",),
    match=R(r"torchdoctor: failed: ranks? \d[\d, ]* died without a Python error \("),
    absorbs=("hang_verdict",),  # its "Culprit:" line is this verdict's, not a hang's
    span=2,
    facts=(
        R(r"torchdoctor: failed: (?P<died>ranks? \d[\d, ]* died without a Python error \([^\n]{1,1500})"),
        R(r"Culprit: rank\(s\) [\d,\- ]+? at (?P<died_culprit_line>\S+:\d+)\."),
        R(r"What each rank left: (?P<died_folder>\S+?)/rank\*"),
    ),
    # the report is the verdict of last resort: a traceback, gloo's own abort message, any other reading of the
    # same log leads; alone (a --log-dir of the report only) it is the failure
    fallback_facts=("died",),
    fallback_fails=True,
    fallback_over_consequences=True,
    describe=_died,
)


# torchdoctor's debug mode (distributed/messages.py mismatch_message) raising at the collective the ranks entered
# with different operations: each rank's operation under "Operations:", its line under "Called from:"
_DEBUG_OPERATIONS = "called different operations at the same point"


def _debug_calls(hits: list[Hit]) -> str:
    """``rank 0: torch.distributed.all_reduce at train.py:9 in <module>; rank 1: ...`` from debug mode's lists."""
    facts = next((h.facts for h in hits if "debug_operations" in h.facts), {})
    operations = dict(re.findall(r"- Process (\d+): `([\w.]{1,120})`", facts.get("debug_operations", "")))
    sites = dict(re.findall(r"- Process (\d+): (\S[^\n]{0,300})", facts.get("debug_sites", "")))
    return "; ".join(
        f"rank {rank}: {operation}" + (f" at {sites[rank]}" if rank in sites else "")
        for rank, operation in operations.items()
    )


def _different_calls(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if any(h.facts.get("debug_different") for h in hits):
        # found with a rank that made a broadcast where the other made an all_reduce, under launch --debug: explain
        # did not know its own debug mode's message ("torchdoctor knows no fix for this error")
        seq, calls, ranks = ctx.facts.get("debug_seq"), _debug_calls(hits), on_ranks(hits)
        summary = f"the ranks entered collective {'#' + seq + ' ' if seq else ''}with different operations"
        summary += f" (torchdoctor's debug mode{',' + ranks if ranks else ''})"
        summary += f": {calls}" if calls else ""
        fix = (
            "Every rank of a group must make the same collective calls in the same order. Look at what sends the "
            "ranks to different calls at these lines: a condition on the rank around one of them, a loop of another "
            "length on one rank, a setting read per rank; make every rank call the same collective there."
        )
        condition = first(hits, "condition")
        if condition:  # debug mode found one of the calls under a condition on the rank
            summary += f"; {condition}"
            fix = (
                f"{condition}: take the collective (or the library call that makes one) out of that condition so "
                "that every rank makes it, and keep only the write or the print under it.\n" + fix
            )
        return summary, fix
    seq, what, calls = first(hits, "seq"), first(hits, "what"), first(hits, "calls")
    condition, culprit = first(hits, "condition"), first(hits, "culprit_line")
    summary = f"the ranks entered collective #{seq} with {what}: {calls}"
    if culprit:
        summary += f"; the path one rank alone took is at {culprit}"
    fix = (
        "Every rank of a group must make the same collective calls in the same order, with the same sizes and "
        "dtypes. torchdoctor launch's verdict names each rank's call and line: look between them for what differs "
        "per rank (a condition on the rank, a loop of another length, a setting read per rank)."
    )
    fix += _per_rank_arguments(calls)
    if condition:
        fix += (
            f" Here {condition}: take the collective (or the library call that makes one: a checkpoint save, "
            "a logged metric synchronised across ranks, a barrier) out of that condition so that every rank makes "
            "it, and keep only the write or the print under it."
        )
    return summary, fix


# src/torchdoctor/hang/supervise.py's failed-job report of a job whose ranks' flight records part ways
# (src/torchdoctor/explain/flight_recorder/findings.py's mismatch, after "torchdoctor: failed: ")
DIFFERENT_CALLS = Recogniser(
    kind="ranks_different_collectives",
    title="ranks that made different collective calls (torchdoctor launch's verdict)",
    anchors=(" on different ranks: ", _DEBUG_OPERATIONS),
    templates=(
        "torchdoctor:collective-has-on-different-ranks",
        "torchdoctor:processes-called-different-operations",
    ),
    match=R(
        r"torchdoctor: failed: (?:[^\n]{0,80}?: )?collective #(?P<seq>\d+) has (?P<what>different (?:operations|"
        r"sizes|dtypes)) on different ranks: (?P<calls>[^\n]{1,600}?)\.?$|"
        r"(?P<debug_different>Cannot apply desired operation because the processes called different operations at "
        r"the same point)",
        re.M,
    ),
    # its "Culprit: rank(s) 0 at ..." below is the failed job's, no hang's
    absorbs=("hang_verdict",),
    span=10,
    facts=(
        R(r"(?P<condition>\S+:\d+ sits under a condition on the rank, line \d+: `[^`\n]{1,200}`)"),
        R(r"Culprit: rank\(s\) [\d,\- ]+? at (?P<culprit_line>\S+:\d+)\."),
        R(r"Operations:\s*\n(?P<debug_operations>(?:\s*- Process \d+: `[\w.]{1,120}`\s*\n?){1,8})"),
        R(r"Called from:\s*\n(?P<debug_sites>(?:\s*- Process \d+: [^\n]{1,300}\n?){1,8})"),
    ),
    describe=_different_calls,
)


def _never_reached(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    missing = first(hits, "missing")
    behind = first(hits, "behind") or (
        f"rank{'s' if ',' in missing or '-' in missing else ''} {missing}" if missing else None
    )
    seq, operation = first(hits, "seq") or first(hits, "missing_seq"), first(hits, "operation")
    me, site = first(hits, "me"), first(hits, "site")
    waited = max((int(h.facts["waited"]) for h in hits if h.facts.get("waited")), default=None)
    summary = f"{behind or 'a rank'} never reached collective #{seq or '?'}" + (
        f" `{operation}`" if operation else ""
    )
    if me and site:
        summary += f", which rank {me} waited in at {site}"
    summary += " (torchdoctor's debug mode)" + (f", for {waited} s or more" if waited else "")
    if "survivor_condition" in ctx.facts:
        # the launch's verdict on the failed job found the call under a condition on the rank (u30: a barrier under
        # `if self.global_rank == 0:` in pytorch/examples' multinode.py, under launch --debug)
        summary += f"; the call sits under a condition on the rank at {ctx.facts['survivor_condition']}"
        return summary, (
            f"{(behind or 'The missing rank').capitalize()} does not take that branch, so it never makes the collective "
            "inside it (a barrier, a full state dict's gather, a metric synchronised across ranks): make the call on "
            "every rank and keep only the write or the print under the condition."
        )
    if "missing_in_backward" in ctx.facts:
        summary += (
            f"; {behind or 'the missing rank'} was in backward(), DDP's gradient all-reduce, which debug mode does "
            "not check: it ran more steps than the others"
        )
    fix = (
        f"{(behind or 'The missing rank').capitalize()} went another way before that call: a condition on the rank "
        "around it or before it, a loop one rank left early (a break on its own loss or metric, or on the main "
        "process only) or ran more or fewer times, or a collective debug mode does not check (DDP's gradient "
        "all-reduce in backward, a library's own) that the missing rank waits in. Every rank must make the same "
        "collective calls in the same order. Where the missing rank is now is in debug mode's error after its "
        'timeout ("Missing: ... where it is now"), or run with torchdoctor launch --watchdog SECONDS, which '
        "prints every rank's place when they stall."
    )
    return summary, fix


# torchdoctor's debug mode (distributed/groups.py and messages.py): ranks waiting at a checked collective for ranks
# that have not reached it, said every 10 s ("torchdoctor: waited 25 s of 300 for rank 1 at collective #2
# `torch.distributed.all_gather` (1 of 2 waiting; this is rank 0 at train.py:163 in main;
# TORCHDOCTOR_DEBUG_TIMEOUT=300)") and raised at its timeout ("Process 1 did not reach collective #2 within 300 s
# (TORCHDOCTOR_DEBUG_TIMEOUT); the others are waiting for them."). Found with accelerate's early_stopping.py, its
# trigger replaced by a break on the main process only, under launch --debug: the wait lines stood beside
# socket.cpp's waitForInput warnings, which read as "the rendezvous failed on rank 0"
NEVER_REACHED = Recogniser(
    kind="collective_never_reached",
    title="a rank that never reached a collective the others waited in",
    anchors=("; TORCHDOCTOR_DEBUG_TIMEOUT=", " (TORCHDOCTOR_DEBUG_TIMEOUT); the others are waiting for them"),
    templates=("torchdoctor:waited-s-of-for-at-collective", "torchdoctor:did-not-reach-collective-within-s"),
    match=R(
        r"waited (?P<waited>\d+) s of [\d.e+]+ for (?P<behind>ranks? [\d, -]{1,80}) at collective #(?P<seq>\d+) "
        r"`(?P<operation>[\w.]{1,80})` \(\d+ of \d+ waiting; this is rank (?P<me>\d+) at (?P<site>\S{1,300}:\d+)|"
        r"(?:Process|Processes) (?P<missing>[\d, -]{1,80}) did not reach collective #(?P<missing_seq>\d+) within"
    ),
    span=4,
    facts=(R(r"Operation: `(?P<operation>[\w.]{1,80})`"),),
    describe=_never_reached,
)


def _stopped_places(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    places: dict[str, str] = {}
    for hit in hits:
        if hit.facts.get("stopped_rank"):
            places.setdefault(hit.facts["stopped_rank"], hit.facts["stopped_place"].strip())
    said = "; ".join(
        f"rank {rank} was at {place}" for rank, place in sorted(places.items(), key=lambda p: int(p[0]))
    )
    blocked = sorted((r for r, p in places.items() if "which had not returned)" in p), key=int)
    summary = f"the run under torchdoctor launch was stopped with Ctrl-C: {said}"
    fix = (
        "Each line is where that rank's script was when you stopped it. If the run had stopped moving, the rank "
        "on a line of its own (a read, a lock, a wait outside any collective) is the one the others waited for; "
        "ranks inside a collective or backward() waited for it. `torchdoctor launch --watchdog 60 train.py` names "
        "that rank and the collective by itself on the next hang."
    )
    # named only where the launch named it too: it alone knew every rank that started (a rank that crashed or
    # said nothing is not in this log, and may have been elsewhere as well)
    named_by_launch = {h.facts["odd_rank"] for h in hits if h.facts.get("odd_rank")}
    odd = odd_rank_out({int(rank): collective_at(place) for rank, place in places.items()})
    if odd is not None and str(odd[0]) in named_by_launch:
        summary += "; " + culprit_sentence(odd, places[str(odd[0])])
        fix = (
            f"Look at what rank {odd[0]} was doing at that line instead of joining the {odd[1]}: a branch on the "
            "rank or on its own data that skips the call (a save, an evaluation or a print under `if rank == 0:`, "
            "an early break or continue), or a slow or stuck read. Every rank must make the same collective calls "
            "in the same order. " + fix
        )
    if blocked:
        fix += (
            f" Rank(s) {', '.join(blocked)} were blocked in torch's C++ code (a collective, a store's wait), which "
            "Ctrl-C does not interrupt: the launch read where from their stacks."
        )
    return summary, fix


STOPPED_PLACES = Recogniser(
    # src/torchdoctor/launch/bootstrap.py _say_where_stopped (a rank's KeyboardInterrupt) and
    # src/torchdoctor/launch/stopped_places.py (a rank blocked in C++, from its stack), before "torchdoctor: interrupted"
    kind="launch_interrupted",
    title="a run under torchdoctor launch stopped with Ctrl-C",
    # and launch/stopped_places.odd_rank_line, said where every rank that started said where it was
    anchors=(" was interrupted at ", " was not in it ("),
    templates=(
        "torchdoctor:rank-was-interrupted-at",
        "torchdoctor:ranks-were-waiting-in-and-rank-was-not-in-it",
    ),
    match=R(
        r"torchdoctor: rank \d+ was interrupted at \S|"
        r"torchdoctor: ranks? [\d, ]{1,200} (?:was|were) waiting in \w{1,60} and rank \d+ was not in it \("
    ),
    facts=(
        R(r"torchdoctor: rank (?P<stopped_rank>\d+) was interrupted at (?P<stopped_place>[^\n]{1,400})"),
        R(r"waiting in \w{1,60} and rank (?P<odd_rank>\d+) was not in it \("),
    ),
    # a user's stop, not a failure: said only where the log shows no failure of its own
    fallback=True,
    describe=_stopped_places,
)


RECOGNISERS = (HANG_VERDICT, ENDED_EARLY, RANK_DIED, DIFFERENT_CALLS, NEVER_REACHED, STOPPED_PLACES)
