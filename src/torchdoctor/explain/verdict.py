"""From hits to findings: one per kind, the root cause first, consequences named as such.

The exception that started the failure (`first_failure.initiating`) leads when no known kind covers it:
the first error of the first rank that failed, with the user's line, rather than a victim's error that
torchdoctor happens to know.
"""

from __future__ import annotations

from torchdoctor.explain import collective_peer, first_failure, interrupted
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.kinds import (
    BY_KIND,
    api_history,
    api_keywords,
    api_members,
    api_signatures,
    config_checks,
    config_keys,
    gather_shapes,
    grad_loops,
    launch_options,
    message_history,
    module_train,
    release_changes,
    tokenizer_classes,
    train,
    versions,
    waiting_calls,
    watchdog_report,
)
from torchdoctor.explain.kinds.ranks import peer_ended_quietly
from torchdoctor.explain.ranks import hit_rank
from torchdoctor.explain.recognisers import Context, Hit
from torchdoctor.findings import Finding
from torchdoctor.rank_list import ranks_text

NEAR = 60  # lines: a known kind seen this close to an exception, in the same file and rank, is that exception

# said of a finding whose message no labelled real log has shown for this cause yet: it stays likely
UNSEEN = "this message is mapped to its cause from the source that prints it; no real log yet showed it for that cause"
# said of a finding whose message real logs of other causes printed too (Recogniser.contested): it stays likely
CONTESTED = "this message was also printed where real logs' threads established another cause: {}"
CAUSE_NOT_FOUND = "the cause is not in this log (this is what it led to)"
LOOK_FOR_CAUSE = (
    "The cause is the first rank that failed: find it (torchrun's Root Cause block, the earliest error by time) "
    "and read that rank's own log; `torchdoctor explain FOLDER` with every rank's log names it."
)
# the fix's last line where it quotes the user's own code (the log's words, not advice)
REACHED = "Your code reached it at"


def _commonest(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _the(title: str) -> str:
    """``title`` named as the one above: "the collective ...", not "the a collective ..." for a title that
    starts with its own article."""
    for article in ("a ", "an ", "the "):
        if title.startswith(article):
            return "the " + title[len(article) :]
    return "the " + title


def role(kind: str, hits: list[Hit]) -> str:
    """``cause`` or ``consequence`` (an NCCL error that says another process exited is a consequence)."""
    if kind == "nccl_error" and any("remote process exited" in h.facts.get("reason", "") for h in hits):
        return "consequence"
    return BY_KIND[kind].role


def findings(
    hits: list[Hit],
    ctx: Context,
    counts: dict[str, int] | None = None,
    raised: list[Raised] | None = None,
    root_rank: int | None = None,
) -> list[Finding]:
    """One finding per kind seen, causes first (earliest first), then what they led to.

    ``raised``: every exception the input shows; the one that started the failure leads as
    ``log.unrecognised`` when no known kind covers it (``root_rank``: torchrun's first observed failure).
    """
    by_kind: dict[str, list[Hit]] = {}
    for hit in sorted(hits, key=lambda h: h.order):
        by_kind.setdefault(hit.kind, []).append(hit)
    for kind in list(by_kind):
        needed = BY_KIND[kind].requires
        if needed and not any(fact in ctx.facts for fact in needed):
            del by_kind[kind]
    if train.exit_told_twice(by_kind):
        # a DataLoader worker killed is raised again as "exited unexpectedly": one death, not a second cause
        del by_kind["dataloader_shm"]
    seen = dict(by_kind)  # before absorbing: the vaguer kinds' hits say which lines an error was read on
    for kind in list(by_kind):
        for vaguer in BY_KIND[kind].absorbs:
            by_kind.pop(vaguer, None)
    first = first_failure.initiating(raised or [], root_rank)
    if first is not None or any(not BY_KIND[k].fallback for k in by_kind):
        # a warning healthy exits print too says nothing beside a failure the log does show
        by_kind = {k: h for k, h in by_kind.items() if not BY_KIND[k].fallback}
    roles = {kind: role(kind, kind_hits) for kind, kind_hits in by_kind.items()}
    sure = {kind: BY_KIND[kind].confidence(kind_hits, ctx) for kind, kind_hits in by_kind.items()}
    # a certain cause leads a likely one (stable: earliest first within each)
    causes = sorted((k for k in by_kind if roles[k] == "cause"), key=lambda k: sure[k] != "certain")
    unknown = None
    if first is not None and not any(_covers(h, first) for k in causes for h in by_kind[k]):
        earliest = min((h.order for k in causes for h in by_kind[k]), default=None)
        if not causes or root_rank == first.rank or (earliest is not None and first.order < earliest):
            unknown = _unrecognised(first, ctx)
    elif first is not None and causes:
        # the known cause on the rank that failed first leads, a certain one before a likely one
        causes.sort(key=lambda k: (not any(_covers(h, first) for h in by_kind[k]), sure[k] != "certain"))
    initiating: Raised | None = None  # the error that stopped the run, when the lead is not it
    if (
        unknown is None
        and first is not None
        and causes
        and (
            not any(_covers(h, first) for h in by_kind[causes[0]])
            or not _is_initiating(causes[0], by_kind, first, ctx, seen)
        )
    ):
        # the exception that started the failure is another one: what leads is only a likely reading (its
        # message was printed, but not as the error that stopped the run), and that error is named beside it
        sure[causes[0]] = "likely"
        initiating = first
    rivals: dict[str, list[str]] = {}
    if first is None and unknown is None:
        # no exception says which error stopped the run: two known causes, each certain of its own message,
        # leave it open which one did, so neither is certain and each names the other
        certain = [k for k in causes if sure[k] == "certain"]
        if len(certain) > 1:
            for kind in certain:
                sure[kind] = "likely"
                rivals[kind] = [k for k in certain if k != kind]
    ctx.cause_ranks = {r for k in causes for h in by_kind[k] if (r := hit_rank(h)) is not None}
    if unknown is not None and first.rank is not None:
        ctx.cause_ranks.add(first.rank)
    if not causes and unknown is None:  # only consequences: what they follow from is not in this log
        sure = dict.fromkeys(sure, "likely")
    rest = sorted((k for k in by_kind if roles[k] != "cause"), key=lambda k: sure[k] != "certain")
    first_exit = _first_exit_leads(by_kind, rest, root_rank) if not causes and unknown is None else None
    if first_exit is not None:
        rest.remove(first_exit)
        rest.insert(0, first_exit)
    ordered = causes + rest
    found = [unknown] if unknown is not None else []
    lead = (
        (
            f"error on rank {first.rank}" if first.rank is not None else "error",
            unknown.id.removeprefix("log."),
        )
        if unknown is not None
        else (BY_KIND[causes[0]].title, causes[0])
        if causes
        else (f"exit of rank {root_rank}", first_exit)
        if first_exit is not None
        else None
    )
    for kind in ordered:
        kind_hits = by_kind[kind]
        recogniser = BY_KIND[kind]
        summary, fix = recogniser.describe(kind_hits, ctx)
        details = _details(kind, kind_hits, roles[kind], counts)
        details["confidence"] = sure[kind]
        # the other causes its message was seen with, where that is why it is not certain
        contested = recogniser.contested(kind_hits) if sure[kind] == "likely" else {}
        if not recogniser.seen(kind_hits):
            details["evidence"] = UNSEEN
        elif contested:
            details["evidence"] = CONTESTED.format(
                ", ".join(f"{k} ({n} log{'s' if n > 1 else ''})" for k, n in _commonest(contested))
            )
        if sure[kind] == "likely":
            summary = f"likely: {summary}"
            # readings the log's own frames rule out: neither named nor offered from other logs' messages
            ruled_out = {a.kind for a in recogniser.also if any(k in ctx.facts for k in a.unless_log)}
            others = [
                a
                for a in recogniser.also
                if a.kind not in by_kind
                and a.kind not in ruled_out
                and (
                    not a.when
                    or any(k in h.facts for h in kind_hits for k in a.when)
                    or any(k in ctx.facts for k in a.when)
                )
                and not any(k in h.facts for h in kind_hits for k in a.unless)
            ]
            if others:  # the same message fits these too: name them after this one, not instead of it
                summary += "; or " + "; or ".join(a.title for a in others)
                details["alternatives"] = [f"log.{a.kind}" for a in others]
                fix += "".join(f"\nIf it is not that but {a.title}: {a.fix}" for a in others)
            named = {a.kind for a in others} | ruled_out
            for other, _ in _commonest(contested):  # the same message on real logs of these causes
                if other in recogniser.absorbs:  # the reading this one replaces where both fit
                    continue
                if other in BY_KIND and other not in by_kind and other not in named:
                    summary += f"; or {BY_KIND[other].title}"
                    details.setdefault("alternatives", []).append(f"log.{other}")
                    fix += f"\nIf it is not that: real logs printed the same message where the cause was {BY_KIND[other].title}."
            for other in rivals.get(kind, []):  # another known cause, as sure of its own message
                summary += f"; or {BY_KIND[other].title} (log.{other}, also in this log)"
                details.setdefault("alternatives", []).append(f"log.{other}")
                fix += f"\nIf it is not that but {BY_KIND[other].title}: see log.{other} below."
            if causes and kind == causes[0] and initiating is not None:
                # what it read is a message printed beside the error that stopped the run: name that error too
                summary += f"; the run stopped on {initiating.text()} at {first_failure.where(initiating)}"
                details["initiating_error"] = initiating.text()
                fix += (
                    f"\nThe run stopped on {initiating.text()} ({first_failure.where(initiating)}): unless it "
                    "follows from this, it is the cause; read it first."
                )
        reached = (
            _users_line(kind_hits, raised or [], recogniser.span, first) if roles[kind] == "cause" else None
        )
        if reached is not None and "frame" not in details:
            details["frame"] = str(reached.frame)  # the line of the user's code the error came through
            if reached.code:
                details["code"] = reached.code
            fix += f"\n{REACHED} {first_failure.where(reached)}."
        elif reached is None and kind == "rank_divergence" and "frame" not in details:
            # gloo's size check aborts its rank in C++ with no Python traceback: the peer's traceback names the
            # user's line of the same collective (found with pytorch/examples' tensor_parallel_example.py, the
            # ranks given batches of different sizes, under plain torchrun)
            peer = collective_peer.peer_in_collective(by_kind, raised or [])
            if peer is not None:
                phrase, paragraph, lead_with = collective_peer.named(peer)
                summary += f"; {phrase}"
                fix = (f"{lead_with}\n" if lead_with else "") + f"{fix}\n{paragraph}"
                details["frame"] = str(peer.frame)
        versions = {k: v for k, v in ctx.facts.items() if k.endswith("_version")}
        if versions:
            details["versions"] = versions  # what the log says it ran with, for the person reading -v
        status = "fail"
        if lead is None and kind == "child_failed" and "nccl_watchdog_timeout" in by_kind:
            # the watchdog takes its process down (SIGABRT, exit -6) once it reports: torchrun's summary of
            # that exit is the same failure, not a second one
            summary += " — the watchdog taking its process down after the collective timeout above"
            details["consequence_of"] = "log.nccl_watchdog_timeout"
            status = "warn"
            fix = "Follows from the collective timeout above: see its fix."
        if lead is None and kind in waiting_calls.KINDS and peer_ended_quietly(kind_hits, ctx):
            # a rank waited for a peer that left: its traceback names the user's line that made the collective
            victim = next((r for r in raised or [] if any(_covers(h, r) for h in kind_hits)), None)
            waited = waiting_calls.waited_at(victim) if victim is not None else None
            if waited is not None:
                summary += f"; {waited[0]}"
                fix = f"{fix}\n{waited[1]}"
                details["frame"] = str(victim.frame)
        if roles[kind] == "cause" and kind == "ranks_ended_early":
            gather = waiting_calls.state_dict_waited_in(raised or [])
            # the survivor waited in a state dict's gather that a condition on the rank kept from the other
            if gather is not None:
                summary = summary.replace(
                    watchdog_report.DIFFERENT_ITERATIONS,
                    f"the ranks did not all make the state dict's gather at {first_failure.where(gather)}",
                )
                fix = f"{waiting_calls.STATE_DICT_ON_EVERY_RANK}\nOtherwise: {fix}"
                details["frame"] = str(gather.frame)
        if kind == "launcher_stopped":
            # where each rank was when the launcher was stopped (a hang stopped with Ctrl-C): its KeyboardInterrupt's
            # innermost line of the user's code (found with pytorch/examples' multinode.py, rank 1's dataset
            # hanging: the finding said only that torchrun was stopped)
            places = interrupted.rank_places(raised or [])
            if places:
                summary += f"; when it was stopped {places}"
                details["stopped_at"] = places
        if roles[kind] != "cause" and lead is not None and kind != first_exit:
            summary += f" — a consequence of {_the(lead[0])} above (log.{lead[1]})"
            details["consequence_of"] = f"log.{lead[1]}"
            status = "warn"
            # its own fix would ask for the failing rank's log, or treat the symptom: the cause is above
            fix = f"Fix {_the(lead[0])} above: this one follows from it."
        elif roles[kind] != "cause" and kind == rest[0] and "consequence_of" not in details:
            summary += f"; {CAUSE_NOT_FOUND}"
            # unless it says where already: another rank's log, or the kernel's (dmesg: a process it killed)
            fix = fix if "rank's" in fix or "dmesg" in fix else f"{fix}\n{LOOK_FOR_CAUSE}"
            details["cause"] = "not found in this log"
        found.append(Finding(f"log.{kind}", status, summary, details, fix))
    if not found and first is None and raised:
        victim = min(raised, key=lambda r: r.order)  # only victims' errors: name the first of them
        found.append(interrupted.stopped(victim) or _unrecognised(victim, ctx))
    return found


def _first_exit_leads(by_kind: dict[str, list[Hit]], rest: list[str], root_rank: int | None) -> str | None:
    """torchrun's summary of the rank that failed first, where the log holds no cause and only other ranks'
    consequences beside it (a peer that closed the connection on rank 0 when rank 1 exited): that exit is what
    they follow from, one failure and not two (found with a rank that left by os._exit(3) mid-epoch)."""
    if root_rank is None or "child_failed" not in rest or len(rest) < 2 or "nccl_watchdog_timeout" in by_kind:
        return None
    others = [h for k in rest if k != "child_failed" for h in by_kind[k]]
    if all(hit_rank(h) is not None and hit_rank(h) != root_rank for h in others):
        return "child_failed"
    return None


def _is_initiating(
    kind: str,
    by_kind: dict[str, list[Hit]],
    raised: Raised,
    ctx: Context,
    seen: dict[str, list[Hit]] | None = None,
) -> bool:
    """Whether the finding of ``kind`` reads the error that stopped the run: one of its lines is that
    exception (its traceback, its message line, the lines its message goes on in), or its recogniser's
    confirming facts are in the log, or that exception is the vaguer kind this one absorbs (NCCL's WARN
    naming the CUDA call that failed, above torch's "NCCL error ... unhandled cuda error" it explains).
    Anything else is a message printed beside the failure, not its cause."""
    recogniser = BY_KIND[kind]
    if recogniser.confirm is not None and recogniser.confirm(by_kind[kind], ctx):
        return True
    if any(_on(hit, link, recogniser.span) for hit in by_kind[kind] for link in _chain(raised)):
        return True
    return any(
        _on(hit, raised, BY_KIND[vaguer].span)
        for vaguer in recogniser.absorbs
        for hit in (seen or {}).get(vaguer, [])
    )


def _users_line(hits: list[Hit], raised: list[Raised], span: int, first: Raised | None) -> Raised | None:
    """The exception a finding's lines are (its traceback, message or the lines it goes on in) whose traceback
    passes through the user's own code: the one that stopped the run where it is one, else the earliest.
    None where no traceback of the finding shows a frame of the user's (a launcher's summary, a bare line)."""
    candidates = ([first] if first is not None else []) + sorted(raised, key=lambda r: r.order)
    for candidate in candidates:
        if candidate.frame is None or first_failure.is_library(candidate.frame.file):
            continue  # (with no frame of the user's, `frame` is the innermost of all)
        if any(_on(hit, link, span) for hit in hits for link in _chain(candidate)):
            return candidate
    return None


def _chain(raised: Raised) -> list[Raised]:
    """``raised`` and the exceptions raised `from` it, one from the other (Python prints each below the one it
    was raised from): one failure, the later ones saying what the first meant."""
    links = [raised]
    while links[-1].wrapped_by is not None and len(links) < 8:
        links.append(links[-1].wrapped_by)
    return links


def _on(hit: Hit, raised: Raised, span: int = 0) -> bool:
    """``hit`` was read on the exception ``raised``: the same file and rank, between the top of its traceback
    and the last line its message goes on in (a message's own lines after it: its detail, the recogniser's
    span, or the three lines torch adds under an error, such as "CUDA kernel errors might be ...")."""
    if hit.source != raised.source:
        return False
    rank = hit_rank(hit)
    if raised.rank is not None and rank is not None and rank != raised.rank:
        return False
    return raised.line - raised.above <= hit.line <= raised.line + len(raised.detail) + max(span, 3)


def _covers(hit: Hit, raised: Raised) -> bool:
    """The known kind ``hit`` is the exception ``raised`` (or one raised `from` it): read on the same rank, or,
    rank unknown, a few lines from it in the same file."""
    if raised.rank is not None:
        return hit_rank(hit) == raised.rank
    return any(
        hit.source == link.source and hit.rank is None and abs(hit.line - link.line) <= NEAR
        for link in _chain(raised)
    )


def _unrecognised(raised: Raised, ctx: Context) -> Finding:
    """The exception that started the failure, which no known kind covers: named, not explained — or, when
    it was raised inside an installed package with a type a version's bug raises, that (likely)."""
    refused = config_checks.deepspeed_refusal(raised)
    if refused is not None:
        # DeepSpeed's config checks raised it (by its type or the frame): the config, not a DeepSpeed bug
        summary, fix = refused
        details = _likely_from(raised, "deepspeed_config_mismatch", alternatives=["log.dependency_version"])
        summary = f"likely: {summary}; or a config written for another DeepSpeed release"
        return Finding("log.deepspeed_config_mismatch", "fail", summary, details, fix)
    flattened = gather_shapes.flattened_objects(raised) or gather_shapes.emptied_by_old_accelerate(raised)
    if flattened is not None:
        summary, fix = flattened
        details = _likely_from(raised, "gather_not_tensors")
        if raised.frame is not None:
            details["frame"] = str(raised.frame)
            fix += f"\n{REACHED} {first_failure.where(raised)}."
        return Finding("log.gather_not_tensors", "fail", f"likely: {summary}", details, fix)
    unset = launch_options.unset_option(raised)
    if unset is not None:
        summary, fix = unset
        details = _likely_from(raised, "launch_command")
        return Finding("log.launch_command", "fail", f"likely: {summary}", details, fix)
    tokenizer = tokenizer_classes.reading(raised)
    if tokenizer is not None:
        # AutoTokenizer could not find the class the checkpoint names: the name says which release or code
        kind, summary, fix, certain, others = tokenizer
        details = _likely_from(raised, kind, alternatives=[f"log.{other}" for other in others])
        details["confidence"] = "certain" if certain else "likely"
        return Finding(f"log.{kind}", "fail", summary if certain else f"likely: {summary}", details, fix)
    keyword = (
        api_keywords.diagnosis(raised, ctx.facts)
        or api_signatures.diagnosis(raised, ctx.facts)
        or api_members.diagnosis(raised, ctx.facts)
        # CPython 3.6's "cannot import name 'X'" on a `from <package> import X` line; MMEngine's error for a
        # class whose config lacks a key it reads: the code (or config) and the installed release disagree too
        or release_changes.ignite_import(raised)
        or api_history.bare_import(raised, f"{versions.LIBRARIES}|{versions.OPENMMLAB}")
        or config_keys.diagnosis(raised)
        # torch's nn.Module.train (3.10+ names it) given a library's training arguments
        or module_train.diagnosis(raised)
    )
    if keyword is not None:
        # before library_bug: a library calling another with a keyword (or positional arguments) the installed
        # release does not take is the pair of releases, which the tables name
        summary, fix, certain = keyword
        details = _likely_from(raised, "dependency_version")
        details["confidence"] = "certain" if certain else "likely"
        if raised.frame is not None:
            details["frame"] = str(raised.frame)
            fix += f"\nThe call is at {first_failure.where(raised)}."
        return Finding(
            "log.dependency_version", "fail", summary if certain else f"likely: {summary}", details, fix
        )
    dropped = _dropped_message(raised, ctx)
    if dropped is not None:
        return dropped
    loop = grad_loops.grad_none(raised)
    if loop is not None:
        summary, fix = loop
        details = _likely_from(raised, "library_version_bug")
        return Finding("log.library_version_bug", "fail", f"likely: {summary}", details, fix)
    bug = versions.library_bug(raised)
    if bug is not None:
        package, summary, fix = bug
        details = _likely_from(
            raised, "library_version_bug", package=package, raised_in=str(raised.raised_in)
        )
        if raised.frame is not None and raised.frame != raised.raised_in:
            details["frame"] = str(raised.frame)  # the user's call that led there
            fix += f"\n{REACHED} {first_failure.where(raised)}."
        return Finding("log.library_version_bug", "fail", f"likely: {summary}", details, fix)
    call = versions.library_call(raised)
    if call is not None:
        library, summary, fix = call
        details = _likely_from(raised, "dependency_version", package=library)
        if raised.frame is not None:
            details["frame"] = str(raised.frame)
            fix += f"\nThe call is at {first_failure.where(raised)}."
        return Finding("log.dependency_version", "fail", f"likely: {summary}", details, fix)
    who = f"rank {raised.rank}" if raised.rank is not None else "the run"
    first = raised.rank is not None and len(ctx.ranks | {raised.rank}) > 1 and not raised.consequence
    worker = f" (in its {raised.worker})" if raised.worker else ""
    text = raised.text()
    if raised.detail and text.endswith(":"):  # "Error(s) in loading state_dict for Net:" and what follows
        text = first_failure.cut(f"{text} {raised.detail[0]}")
    summary = f"{who} failed{' first' if first else ''}{worker}: {text} at {first_failure.where(raised)}"
    summary += "; torchdoctor knows no fix for this error"
    details = first_failure.details_of(raised, "unrecognised")
    if raised.detail:
        details["detail"] = raised.detail
    if raised.worker:
        details["worker"] = raised.worker
    lines = [
        f"This error started the failure; the other ranks' errors follow from it. It was raised at "
        f"{first_failure.where(raised)}."
        if first
        else f"The run stopped on this error, raised at {first_failure.where(raised)}."
    ]
    lines += [f"    {d}" for d in raised.detail[:3]]
    lines.append(
        "torchdoctor has no recipe for it, so it will not guess one. If it is not your code's own error, "
        "paste the log with the machine's facts into an issue:\n"
        "torchdoctor report > report.md   # the machine, torch, CUDA, NCCL and the checks, as Markdown"
    )
    clear = raised.traceback or bool(ctx.facts.get("failure_summary_in_input"))
    status = "fail" if clear else "skip"
    return Finding("log.unrecognised", status, summary, details, "\n".join(lines))


def quoted_in_prose(ctx: Context) -> Finding | None:
    """A keyword or positional refusal the release tables know, quoted inside a sentence ("Raises the error
    TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'") in a log where nothing
    else was recognised: likely, never certain (no traceback says who called it, and prose may quote an error
    it did not hit). None when there is no such quote or the tables do not know it."""
    if ctx.prose_exception is None:
        return None
    type_, message, source, line, sentence = ctx.prose_exception
    # the sentence stands for the traceback's call line: a bare __init__() is the one class it names
    raised = Raised(type_, message, source=source, line=line, raised_code=sentence)
    keyword = (
        api_keywords.diagnosis(raised, ctx.facts)
        or api_signatures.diagnosis(raised, ctx.facts)
        or api_members.diagnosis(raised, ctx.facts)
    )
    if keyword is None:
        return _dropped_message(raised, ctx, quoted_in_prose=True)
    summary, fix, _ = keyword
    details = _likely_from(raised, "dependency_version", quoted_in_prose=True)
    return Finding("log.dependency_version", "fail", f"likely: {summary}", details, fix)


def _dropped_message(raised: Raised, ctx: Context, **facts) -> Finding | None:
    """The package's release behind, likely, when ``raised`` carries a message only its older releases raise
    (kinds/message_history.py); None otherwise."""
    dropped = message_history.diagnosis(raised, ctx.facts)
    if dropped is None:
        return None
    package, summary, fix = dropped
    details = _likely_from(
        raised, "library_version_bug", package=package, alternatives=["log.dependency_version"], **facts
    )
    if raised.raised_in is not None:
        details["raised_in"] = str(raised.raised_in)
    return Finding("log.library_version_bug", "fail", f"likely: {summary}", details, fix)


def _likely_from(raised: Raised, kind: str, **facts) -> dict:
    """The details of a likely cause read from the exception ``raised`` alone (no recogniser's line): its
    kind, the exception, where it was raised and on which rank, and ``facts``."""
    details: dict = {
        "kind": kind,
        "role": "cause",
        "confidence": "likely",
        "exception": raised.text(),
        "where": [f"{raised.source}:{raised.line}" if raised.source else f"line {raised.line}"],
        **facts,
    }
    if raised.rank is not None:
        details["ranks"] = str(raised.rank)
    return details


def _details(kind: str, hits: list[Hit], role_: str, counts: dict[str, int] | None) -> dict:
    ranks = sorted({r for h in hits if (r := hit_rank(h)) is not None})
    facts: dict = {}
    for hit in hits:
        for key, value in hit.facts.items():
            facts.setdefault(key, value)
    facts.pop("msg_rank", None)
    details = (
        {"kind": kind, "role": role_, "ranks": ranks_text(ranks)} if ranks else {"kind": kind, "role": role_}
    )
    details["seen"] = (counts or {}).get(kind, len(hits))
    details["where"] = [f"{h.source}:{h.line}" for h in hits[:5]]
    details["facts"] = facts
    return details


def per_attempt(collectors: dict) -> list[Finding]:
    """Findings of each torchrun restart on its own (``{attempt: Collector}``; None: files of no attempt),
    the last attempt first: what ended the job leads, and an earlier attempt's failure is not blamed for
    a later one's."""
    if not collectors:
        return []
    numbered = sorted((a for a in collectors if a is not None), reverse=True)
    order = [*numbered, *([None] if None in collectors else [])]
    found: list[Finding] = []
    for attempt in order:
        collector = collectors[attempt]
        if attempt:  # a restart: what only a later attempt means (comm.py's shared rendezvous store)
            collector.ctx.facts["restarted_attempt"] = attempt
        counts = {hit.kind: collector.count(hit.kind) for hit in collector.hits}
        those = findings(collector.hits, collector.ctx, counts, collector.raised, collector.root_rank)
        if len(order) > 1 and attempt is not None:
            label = f"attempt {attempt}" + (" (the last)" if attempt == numbered[0] else "")
            for finding in those:
                finding.summary = f"{label}: {finding.summary}"
                finding.details["attempt"] = attempt
        found += those
    return found
