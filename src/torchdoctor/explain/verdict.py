"""From hits to findings: one per kind, the root cause first, consequences named as such.

The exception that started the failure (`first_failure.initiating`) leads when no known kind covers it:
the first error of the first rank that failed, with the user's line, rather than a victim's error that
torchdoctor happens to know.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torchdoctor.explain import (
    collective_peer,
    cuda_index,
    first_failure,
    fixed_upstream,
    interrupted,
    raised_warnings,
    uncovered,
)
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.kinds import BY_KIND, train, waiting_calls, watchdog_report
from torchdoctor.explain.kinds import ranks as ranks_kind
from torchdoctor.explain.kinds.ranks import every_rank_waited, peer_ended_quietly, peer_finished
from torchdoctor.explain.ranks import hit_rank
from torchdoctor.explain.recognisers import Alternative, Context, Hit
from torchdoctor.findings import Finding
from torchdoctor.rank_list import ranks_text, who

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


@dataclass
class _Order:
    """How the kinds read in one input stand to each other: which leads, which follow, how sure each is."""

    by_kind: dict[str, list[Hit]]  # the kinds kept, their hits in input order
    roles: dict[str, str]  # kind -> "cause" or "consequence"
    sure: dict[str, str]  # kind -> "certain" or "likely"
    causes: list[str]  # the causes, in the order they are said
    rest: list[str]  # what they led to, in the order it is said
    first: Raised | None  # the exception that started the failure
    unknown: Finding | None  # that exception, leading, where no known kind covers it
    initiating: Raised | None  # the error that stopped the run, where what leads is not it
    rivals: dict[str, list[str]]  # kind -> other causes as sure as it, or that a likely lead names
    first_exit: str | None  # torchrun's exit of the first rank that failed, where it leads the consequences
    lead: tuple[str, str] | None  # (title, kind) of what leads, that the consequences name


@dataclass
class _Draft:
    """One finding while it is written: what it says, its fix, its details, its status."""

    summary: str
    fix: str
    details: dict
    status: str = "fail"
    # another reading of the same message that the log's other lines chose (Alternative.first_when)
    led_by: str = ""


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
    raised = raised or []
    order = _order(hits, ctx, raised, root_rank)
    found = [order.unknown] if order.unknown is not None else []
    found += [_finding(kind, order, ctx, counts, raised) for kind in order.causes + order.rest]
    if not found and order.first is None and raised:
        victim = min(raised, key=lambda r: r.order)  # only victims' errors: name the first of them
        found.append(interrupted.stopped(victim, ctx) or uncovered.reading(victim, ctx))
    return cuda_index.keeping_cuda_builds(found, ctx.facts)


def _kinds_read(hits: list[Hit], ctx: Context) -> tuple[dict[str, list[Hit]], dict[str, list[Hit]]]:
    """The hits by kind, in input order, without the kinds whose required facts the input lacks and the vaguer
    kinds a more precise one absorbs; and the same before absorbing (which lines an error was read on)."""
    by_kind: dict[str, list[Hit]] = {}
    for hit in sorted(hits, key=lambda h: h.order):
        if BY_KIND[hit.kind].stands(hit, ctx):
            by_kind.setdefault(hit.kind, []).append(hit)
    for kind in list(by_kind):
        needed = BY_KIND[kind].requires
        if needed and not any(fact in ctx.facts for fact in needed):
            del by_kind[kind]
    if train.exit_told_twice(by_kind):
        # a DataLoader worker killed is raised again as "exited unexpectedly": one death, not a second cause
        del by_kind["dataloader_shm"]
    seen = dict(by_kind)
    for kind in list(by_kind):
        for vaguer in BY_KIND[kind].absorbs:
            by_kind.pop(vaguer, None)
    return by_kind, seen


def _only_consequences_beside(kind: str, by_kind: dict[str, list[Hit]], first: Raised | None) -> bool:
    """Whether every other kind read, and the first exception, is a consequence of another rank's failure (a lost
    peer, torchrun's summary of a worker's exit): then ``kind``'s verdict of last resort (launch's report of a
    rank that died without a Python error, in the same console) is the cause the log holds, and leads."""
    if first is not None and not first.consequence:
        return False
    return all(role(k, h) == "consequence" for k, h in by_kind.items() if k != kind)


def _order(hits: list[Hit], ctx: Context, raised: list[Raised], root_rank: int | None) -> _Order:
    """Which finding leads and how sure each is (and, on ``ctx.cause_ranks``, the ranks the causes are on)."""
    by_kind, seen = _kinds_read(hits, ctx)
    first = first_failure.initiating(raised, root_rank)
    # the exit warning with the watchdog timing out after it, no exception: the process hung at exit
    at_exit = first is None and ranks_kind.exit_hang(by_kind, ctx)
    if first is not None or any(not BY_KIND[k].only_warned(h) for k, h in by_kind.items()):
        # a warning healthy exits print too says nothing beside a failure the log does show (a fallback kind, or
        # a kind's hits on its fallback_facts)
        # (a warning raised as the run's error, PYTHONWARNINGS=error, is that failure: kept)
        by_kind = {
            k: h
            for k, h in by_kind.items()
            if not BY_KIND[k].fallback or (at_exit and k == "shutdown_hang") or _raised_warning(h)
        }
        for kind, kind_hits in list(by_kind.items()):
            facts = BY_KIND[kind].fallback_facts
            if BY_KIND[kind].fallback_over_consequences and _only_consequences_beside(kind, by_kind, first):
                continue  # the verdict of last resort names a cause where all else is what it led to
            kept = (
                [h for h in kind_hits if _raised_warning([h]) or not any(f in h.facts for f in facts)]
                if facts
                else kind_hits
            )
            if kept:
                by_kind[kind] = kept
            else:
                del by_kind[kind]
    roles = {kind: role(kind, kind_hits) for kind, kind_hits in by_kind.items()}
    for kind, kind_hits in by_kind.items():
        if all(h.facts.get("after_the_failure") == "victim" for h in kind_hits):
            # raised while handling a lost peer's error (a `finally` after "Connection closed by peer"): that other
            # rank's error is the cause, this one came after it (verdict._after_the_failure says so)
            roles[kind] = "consequence"
    if first is not None and "worker_crash" in by_kind and _died_unwinding(by_kind["worker_crash"], first):
        roles["worker_crash"] = "consequence"
    sure = {kind: BY_KIND[kind].confidence(kind_hits, ctx) for kind, kind_hits in by_kind.items()}
    # a certain cause leads a likely one (stable: earliest first within each)
    causes = sorted((k for k in by_kind if roles[k] == "cause"), key=lambda k: sure[k] != "certain")
    unknown = None
    if first is not None and not any(_covers(h, first) for k in causes for h in by_kind[k]):
        # a known error raised after the failure (a `finally`, a `__del__`) is not one that came before it
        before = [h.order for k in causes for h in by_kind[k] if "after_the_failure" not in h.facts]
        earliest = min(before, default=None)
        if not before or root_rank == first.rank or first.order < earliest:
            unknown = uncovered.reading(first, ctx)
    elif first is not None and causes:
        # the known cause on the rank that failed first leads, a certain one before a likely one; a message
        # printed only as a warning near it (the run went on after it) after one read on that exception's lines
        causes.sort(
            key=lambda k: (
                not any(_covers(h, first) for h in by_kind[k]),
                all(h.warning for h in by_kind[k]) and not _is_initiating(k, by_kind, first, ctx, seen),
                sure[k] != "certain",
            )
        )
    initiating: Raised | None = None
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
        elif causes and sure[causes[0]] == "likely":
            # nor is a likely lead more than the first of the log's readings: the other causes it shows as errors
            # (not only as warnings the run went on after) are as open, and the lead names them after its own. Two
            # fallback kinds (said only where nothing failed: a warning the run went on after, a stop with Ctrl-C)
            # each read a line of its own, not one failure two ways: both stand, neither is the other's "or"
            lead_fallback = BY_KIND[causes[0]].fallback
            rivals[causes[0]] = [
                k
                for k in causes[1:]
                if not all(h.warning for h in by_kind[k]) and not (lead_fallback and BY_KIND[k].fallback)
            ]
    ctx.cause_ranks = {r for k in causes for h in by_kind[k] if (r := hit_rank(h)) is not None}
    ctx.erring_ranks = {r.rank for r in raised if r.rank is not None} | {
        r for k in by_kind for h in by_kind[k] if not h.warning and (r := hit_rank(h)) is not None
    }
    if unknown is not None and first.rank is not None:
        ctx.cause_ranks.add(first.rank)
    if not causes and unknown is None:  # only consequences: what they follow from is not in this log
        sure = dict.fromkeys(sure, "likely")
    rest = sorted((k for k in by_kind if roles[k] != "cause"), key=lambda k: sure[k] != "certain")
    if not causes and unknown is None and ranks_kind.closed_by_a_timeout(by_kind, ctx):
        # the ranks that timed out closed the connection the others report closed: the timeout came first,
        # whichever rank's traceback was printed first
        rest.sort(key=lambda k: k == "peer_closed")
    first_exit = _first_exit_leads(by_kind, rest, root_rank) if not causes and unknown is None else None
    if first_exit is not None:
        rest.remove(first_exit)
        rest.insert(0, first_exit)
    lead = None
    if unknown is not None:
        lead = (
            f"error on rank {first.rank}" if first.rank is not None else "error",
            unknown.id.removeprefix("log."),
        )
    elif causes:
        lead = (BY_KIND[causes[0]].title, causes[0])
        chosen = (
            _chosen_by_the_log(_readings(causes[0], by_kind, ctx)[0], by_kind[causes[0]], ctx)
            if sure[causes[0]] == "likely"
            else None
        )
        if chosen is not None:  # the reading the log's other lines chose leads, as its finding says
            lead = (chosen.title, chosen.kind)
    elif first_exit is not None:
        lead = (f"exit of rank {root_rank}", first_exit)
    return _Order(by_kind, roles, sure, causes, rest, first, unknown, initiating, rivals, first_exit, lead)


def _finding(
    kind: str, o: _Order, ctx: Context, counts: dict[str, int] | None, raised: list[Raised]
) -> Finding:
    """The finding of ``kind``: its recogniser's words, how sure it is and why, the other readings of a likely
    one, the user's line, what only some kinds add, and, for a consequence, what it follows from."""
    kind_hits = o.by_kind[kind]
    recogniser = BY_KIND[kind]
    summary, fix = recogniser.describe(kind_hits, ctx)
    draft = _Draft(summary, fix, _details(kind, kind_hits, o.roles[kind], counts))
    draft.details["confidence"] = o.sure[kind]
    # the other causes its message was seen with, where that is why it is not certain
    contested = recogniser.contested(kind_hits) if o.sure[kind] == "likely" else {}
    if not recogniser.seen(kind_hits):
        draft.details["evidence"] = UNSEEN
    elif contested:
        draft.details["evidence"] = CONTESTED.format(
            ", ".join(f"{k} ({n} log{'s' if n > 1 else ''})" for k, n in _commonest(contested))
        )
    if o.sure[kind] == "likely":
        _other_readings(draft, kind, contested, o, ctx)
    reached = _users_line(kind_hits, raised, recogniser.span, o.first) if o.roles[kind] == "cause" else None
    if reached is not None and "frame" not in draft.details:
        draft.details["frame"] = str(reached.frame)  # the line of the user's code the error came through
        if reached.code:
            draft.details["code"] = reached.code
        draft.fix += f"\n{first_failure.REACHED} {first_failure.where(reached)}."
    elif reached is None:
        _peer_in_collective(draft, kind, o, raised)
    versions = {k: v for k, v in ctx.facts.items() if k.endswith("_version")}
    if versions:
        draft.details["versions"] = versions  # what the log says it ran with, for the person reading -v
    for extra in _EXTRAS:
        extra(draft, kind, o, ctx, raised)
    # a collective every rank waited in, or a peer that finished without an error: the cause is the call the
    # log names, not another rank's error to look for (found with accelerate's nlp_example.py evaluating once on
    # the main process alone: planted_runs/rank0_final_eval)
    _follows_from(
        draft,
        kind,
        o,
        every_rank_waited(kind_hits, ctx)
        or peer_finished(kind_hits, ctx)
        or kind == ranks_kind.closed_by_a_timeout(o.by_kind, ctx),
    )
    return Finding(f"log.{draft.led_by or kind}", draft.status, draft.summary, draft.details, draft.fix)


# a fix's first word that is an ordinary word capitalised to start its sentence ("When", "Check", "A"), not a
# name (NCCL, SyncBatchNorm, DataLoader(...), torch.load, pip): lower-cased where the fix goes on a sentence
_SENTENCE_START = re.compile(r"[A-Z][a-z]*(?![\w.(_'’-])")


def if_not_that(title: str, fix: str) -> str:
    """Another reading's fix, joined to the sentence that names it as one sentence:
    ``if_not_that("a firewall", "Check the ports.")`` is ``"If it is not that but a firewall: check the ports."``;
    a title that holds a colon of its own is followed by a dash, so the sentence has one colon."""
    if _SENTENCE_START.match(fix):
        fix = fix[0].lower() + fix[1:]
    return f"If it is not that but {title}{' —' if ': ' in title else ':'} {fix}"


def _other_readings(draft: _Draft, kind: str, contested: dict[str, int], o: _Order, ctx: Context) -> None:
    """A likely finding names what else its message fits (the likelier first), another cause as sure of its
    own message, and the error that stopped the run where that is not what it read."""
    recogniser, kind_hits = BY_KIND[kind], o.by_kind[kind]
    draft.summary = f"likely: {draft.summary}"
    others, ruled_out = _readings(kind, o.by_kind, ctx)
    chosen = _chosen_by_the_log(others, kind_hits, ctx)
    if chosen is not None:
        # the log's other lines say which: that reading leads, this one's is named after it
        others.remove(chosen)
        facts = _Said({**ctx.facts, **{k: v for h in kind_hits for k, v in h.facts.items()}})
        because = chosen.because.format_map(facts)
        draft.led_by = chosen.kind
        own = draft.summary.removeprefix("likely: ")
        draft.summary = f"likely: {chosen.title}{f' ({because})' if because else ''}; or " + (
            own if own.startswith(recogniser.title) else f"{recogniser.title}: {own}"
        )
        draft.fix = f"{chosen.fix}\n{if_not_that(recogniser.title, draft.fix)}"
        draft.details["kind"], draft.details["chosen_by"] = chosen.kind, because or chosen.kind
        draft.details["alternatives"] = [f"log.{kind}"]  # its own reading, named and its fix given above
    if others:  # the same message fits these too: name them after this one, not instead of it
        draft.summary += "; or " + "; or ".join(a.title for a in others)
        draft.details.setdefault("alternatives", []).extend(f"log.{a.kind}" for a in others)
        draft.fix += "".join(f"\n{if_not_that(a.title, a.fix)}" for a in others)
        # nothing in the log chose between them: say which lines would
        draft.fix += "".join(f"\nWhich it is: {a.told_by}" for a in others if a.told_by)
    named = {a.kind for a in others} | ruled_out | ({chosen.kind} if chosen is not None else set())
    for other, _ in _commonest(contested):  # the same message on real logs of these causes
        if other in recogniser.absorbs:  # the reading this one replaces where both fit
            continue
        if other in BY_KIND and other not in o.by_kind and other not in named:
            draft.summary += f"; or {BY_KIND[other].title}"
            draft.details.setdefault("alternatives", []).append(f"log.{other}")
            draft.fix += f"\nIf it is not that: real logs printed the same message where the cause was {BY_KIND[other].title}."
    for other in o.rivals.get(kind, []):  # another known cause, as sure of its own message
        draft.summary += f"; or {BY_KIND[other].title} (log.{other}, also in this log)"
        draft.details.setdefault("alternatives", []).append(f"log.{other}")
        draft.fix += f"\n{if_not_that(BY_KIND[other].title, f'See log.{other} below.')}"
    if o.causes and kind == o.causes[0] and o.initiating is not None:
        # what it read is a message printed beside the error that stopped the run: name that error too
        stopped = o.initiating
        draft.summary += f"; the run stopped on {stopped.text()} at {first_failure.where(stopped)}"
        draft.details["initiating_error"] = stopped.text()
        draft.fix += (
            f"\nThe run stopped on {stopped.text()} ({first_failure.where(stopped)}): unless it "
            "follows from this, it is the cause; read it first."
        )


def _readings(kind: str, by_kind: dict[str, list[Hit]], ctx: Context) -> tuple[list[Alternative], set[str]]:
    """The other readings of ``kind``'s message that this log leaves open (its ``also`` whose ``when`` the hits
    or the log meet, no other kind of the log, none ruled out), and the kinds the log's own lines rule out:
    neither named nor offered from other logs' messages."""
    recogniser, kind_hits = BY_KIND[kind], by_kind[kind]
    ruled_out = {a.kind for a in recogniser.also if any(k in ctx.facts for k in a.unless_log)}
    ruled_out |= {
        k for fact, kinds in recogniser.rules_out if any(fact in h.facts for h in kind_hits) for k in kinds
    }
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
    return others, ruled_out


class _Said(dict):
    """The facts an ``Alternative.because`` names, a fact the log lacks read as "?" (never a KeyError)."""

    def __missing__(self, key: str) -> str:
        return "?"


def _chosen_by_the_log(others: list[Alternative], hits: list[Hit], ctx: Context) -> Alternative | None:
    """The first of ``others`` whose ``first_when`` facts are all in ``hits`` or the whole log: the reading the
    log's other lines make the likelier one (None: nothing in the log says which, the recogniser's order stands)."""
    return next(
        (
            a
            for a in others
            if a.first_when and all(f in ctx.facts or any(f in h.facts for h in hits) for f in a.first_when)
        ),
        None,
    )


def _peer_in_collective(draft: _Draft, kind: str, o: _Order, raised: list[Raised]) -> None:
    """gloo's size check aborts its rank in C++ with no Python traceback: the peer's traceback names the user's
    line of the same collective (found with pytorch/examples' tensor_parallel_example.py, the ranks given
    batches of different sizes, under plain torchrun)."""
    if kind != "rank_divergence" or "frame" in draft.details:
        return
    peer = collective_peer.peer_in_collective(o.by_kind, raised)
    if peer is not None:
        phrase, paragraph, lead_with = collective_peer.named(peer)
        draft.summary += f"; {phrase}"
        draft.fix = (f"{lead_with}\n" if lead_with else "") + f"{draft.fix}\n{paragraph}"
        draft.details["frame"] = str(peer.frame)


def _watchdog_took_it_down(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """The watchdog takes its process down (SIGABRT, exit -6) once it reports: torchrun's summary of that exit
    is the same failure, not a second one."""
    if o.lead is None and kind == "child_failed" and "nccl_watchdog_timeout" in o.by_kind:
        draft.summary += " — the watchdog taking its process down after the collective timeout above"
        draft.details["consequence_of"] = "log.nccl_watchdog_timeout"
        draft.status = "warn"
        draft.fix = "Follows from the collective timeout above: see its fix."


def _only_warnings(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """A log that holds only warnings healthy runs print too (the kinds read only where nothing else is: a
    `fallback` recogniser, or hits of its `fallback_facts`), with no exception in it, shows no failure: what they
    say is a `warn` (the run worked, something in it will bite), not a `fail`. Found with a clean run's log that
    ended in torch's exit warning, and T56's runs that were slow or logged nothing. A warning that is a failure
    of its own (no kernel image for this GPU, a driver too old) is not one of those kinds and stays a `fail`."""
    if not raised and all(BY_KIND[k].only_warnings(hits) for k, hits in o.by_kind.items()):
        draft.status = "warn"


def _launcher_summary_of_the_above(
    draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]
) -> None:
    """torchrun's summary of a rank whose own error is in the input: no advice to decorate the script with
    @record to see that traceback, and, where nothing known leads, the summary of the ranks the first
    consequence names is that failure, not a second one (found with a planted run: a collective timeout on
    ranks 0 and 1, then torchrun's summary of rank 0 read as a second failure)."""
    if kind != "child_failed":
        return
    failed = {int(h.facts["failed_rank"]) for h in o.by_kind[kind] if h.facts.get("failed_rank") is not None}
    if any(r.rank in failed for r in raised) or (not failed and raised):
        draft.fix = draft.fix.replace(ranks_kind.RECORD_ADVICE, "")
    if o.lead is not None or "consequence_of" in draft.details or not failed:
        return
    above = next((k for k in o.rest if k != kind), None)
    if above is None or not failed & {r for h in o.by_kind[above] if (r := hit_rank(h)) is not None}:
        return
    title = BY_KIND[above].title
    draft.summary += f" — its summary of {_the(title)} above"
    draft.details["consequence_of"] = f"log.{above}"
    draft.status = "warn"
    draft.fix = f"Follows from {_the(title)} above: see its fix."


def _closed_by_the_timeout(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """A collective's timeout on some ranks and "Connection closed by peer" on the others: the ranks that timed out
    gave up and closed their connections. The timeout says where the others were instead (the innermost frame
    outside torch of their traceback), and the closed connection follows from it (found with Lightning's
    autoencoder example all_gathering a metric on rank 0 alone: rank 1 was in Lightning's barrier, and its closed
    connection led, "the cause is not in this log")."""
    timeout = ranks_kind.closed_by_a_timeout(o.by_kind, ctx)
    if timeout is None or o.lead is not None or not o.rest or o.rest[0] != timeout:
        return
    if kind == "peer_closed":
        title = BY_KIND[timeout].title
        draft.summary += f" — closed by the ranks that gave up on {_the(title)} above (log.{timeout})"
        draft.details["consequence_of"] = f"log.{timeout}"
        draft.status = "warn"
        draft.fix = (
            f"Follows from {_the(title)} above: a rank whose collective times out closes its connections, and "
            "its peers see them closed. See its fix."
        )
    elif kind == timeout:
        for closed in o.by_kind["peer_closed"]:
            victim = next((r for r in raised if _covers(closed, r)), None)
            frames = (
                [f for f in victim.frames if first_failure.installed_package(f.file) != "torch"]
                if victim
                else []
            )
            if frames:
                where = (
                    f"{frames[-1]}: {victim.code}"
                    if not first_failure.is_library(frames[-1].file)
                    else frames[-1]
                )
                draft.summary += f"; rank {victim.rank} was elsewhere, at {where}, when its connection closed"
                draft.fix += (
                    f"\nRank {victim.rank}'s traceback shows where it was instead: {where} (the call it made in "
                    "place of this collective)."
                )
                break


def _waited_for_a_peer(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """A rank waited for a peer that left: its traceback names the user's line that made the collective."""
    if o.lead is not None or kind not in waiting_calls.KINDS or not peer_ended_quietly(o.by_kind[kind], ctx):
        return
    victim = next((r for r in raised if any(_covers(h, r) for h in o.by_kind[kind])), None)
    waited = waiting_calls.waited_at(victim) if victim is not None else None
    if waited is not None:
        draft.summary += f"; {waited[0]}"
        draft.fix = f"{draft.fix}\n{waited[1]}"
        draft.details["frame"] = str(victim.frame)


def _state_dict_gather(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """The survivor waited in a state dict's gather that a condition on the rank kept from the other."""
    if o.roles[kind] != "cause" or kind != "ranks_ended_early":
        return
    gather = waiting_calls.state_dict_waited_in(raised)
    if gather is not None:
        draft.summary = draft.summary.replace(
            watchdog_report.DIFFERENT_ITERATIONS,
            f"the ranks did not all make the state dict's gather at {first_failure.where(gather)}",
        )
        draft.fix = f"{waiting_calls.on_every_rank(gather.code)}\nOtherwise: {draft.fix}"
        draft.details["frame"] = str(gather.frame)


def _where_each_rank_was(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """Where each rank was when the launcher was stopped (a hang stopped with Ctrl-C): its KeyboardInterrupt's
    innermost line of the user's code (found with pytorch/examples' multinode.py, rank 1's dataset hanging:
    the finding said only that torchrun was stopped)."""
    if kind != "launcher_stopped":
        return
    places = interrupted.rank_places(raised)
    if places:
        draft.summary += f"; when it was stopped {places}"
        draft.details["stopped_at"] = places


def _where_it_waited(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """A collective's timeout names the line of the user's code each rank that timed out waited at, from its
    traceback (found with pytorch/examples' ddp-tutorial-series job, one rank kept from a dist.barrier() and one
    passing a tensor of another size to an all_reduce: neither finding named the line)."""
    if kind not in ("collective_timeout", "nccl_watchdog_timeout") or "frame" in draft.details:
        return
    places: dict[str, list[int]] = {}
    span = BY_KIND[kind].span
    for waited in raised:
        if waited.frame is None or first_failure.is_library(waited.frame.file):
            continue
        if any(_on(hit, waited, span) for hit in o.by_kind[kind]):
            ranks = places.setdefault(first_failure.where(waited), [])
            if waited.rank is not None and waited.rank not in ranks:
                ranks.append(waited.rank)
            draft.details.setdefault("frame", str(waited.frame))
    if places:
        said = "; ".join(f"{who(sorted(r)) + ' ' if r else ''}waited at {w}" for w, r in places.items())
        draft.summary += f"; {said}"
        draft.fix += f"\n{first_failure.REACHED} {next(iter(places))}."


# what some kinds add to their finding, in this order, after the user's line
def _raised_warning(hits: list[Hit]) -> bool:
    """Whether a hit is a warning raised as an exception (PYTHONWARNINGS=error): the run's error."""
    return any("warning_raised" in h.facts for h in hits)


def _warning_raised(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """A warning raised as an exception (PYTHONWARNINGS=error) stopped the run: said so, with the filter that
    lets it go on, not "the run went on" (found in USER10's trial, session 41)."""
    warning = next(
        (str(h.facts["warning_raised"]) for h in o.by_kind[kind] if "warning_raised" in h.facts), ""
    )
    if warning:
        draft.summary = raised_warnings.summary(draft.summary, warning)
        draft.fix = raised_warnings.fix(draft.fix, warning)
        draft.status = "fail"


def _after_the_failure(draft: _Draft, kind: str, o: _Order, ctx: Context, raised: list[Raised]) -> None:
    """An error raised by the code that ran because the run had already failed (an `except`/`finally` block, a
    `__del__` or atexit callback Python ignored) is said as that: a second fault, after the error that leads,
    not the cause (found with pytorch/examples' mnist under DDP: a `finally` saving into a missing folder led
    before the ValueError that stopped the run)."""
    hits = o.by_kind[kind]
    if o.lead is None and all(h.facts.get("after_the_failure") == "victim" for h in hits):
        draft.summary += (
            " — raised after this rank lost its peer, by the code that ran while handling that (an `except` or "
            "`finally` block): not the cause"
        )
        draft.status = "warn"
        draft.fix += (
            "\nThis is a second fault: the run had already failed on another rank (the peer this log lost), "
            "whose own log says why; fix this one too, or the next failure's cleanup hides its cause again."
        )
        return
    if o.lead is None or kind == o.lead[1] or o.roles[kind] != "cause":
        return
    if not all("after_the_failure" in h.facts for h in hits):
        return
    ignored = all(h.facts["after_the_failure"] == "ignored" for h in hits)
    if ignored and o.first is not None and all(h.order < o.first.order for h in hits):
        # a `__del__` whose error Python printed and went on after, before the run failed: not raised after it
        draft.summary += (
            f" — printed before {_the(o.lead[0])} above, in a `__del__` or atexit callback, which Python printed "
            "and ignored: the run went on after it"
        )
        draft.details["after"] = f"log.{o.lead[1]}"
        draft.status = "warn"
        draft.fix += (
            f"\nThis is a separate fault: Python ignored it and the run went on, to fail on {_the(o.lead[0])} "
            "above; fix that first."
        )
        return
    where = (
        "in a `__del__` or atexit callback, which Python printed and ignored"
        if ignored
        else ("by the code that ran while handling it (an `except` or `finally` block)")
    )
    draft.summary += f" — raised after {_the(o.lead[0])} above, {where}"
    draft.details["after"] = f"log.{o.lead[1]}"
    draft.status = "warn"
    draft.fix += (
        f"\nThis is a second fault: the run had already failed on {_the(o.lead[0])} above, fix that first. "
        "Fix this one too, or the next failure's cleanup hides its cause again."
    )
    if not ignored:
        # a log does not show which block ran it: an `except` that tries another way (a KeyError answered by
        # loading the item from disk) makes this one the error to fix
        draft.fix += (
            f"\nIf that block is not cleanup but a fallback for {_the(o.lead[0])} (an `except` that tries another "
            "way), this is the error to fix."
        )


_EXTRAS = (
    _only_warnings,
    _after_the_failure,
    _warning_raised,
    _watchdog_took_it_down,
    _launcher_summary_of_the_above,
    _waited_for_a_peer,
    _closed_by_the_timeout,
    _state_dict_gather,
    _where_each_rank_was,
    _where_it_waited,
    fixed_upstream.second_reading,
)


def _follows_from(draft: _Draft, kind: str, o: _Order, all_waited: bool = False) -> None:
    """A consequence names the cause above it, and its fix is that cause's; the first consequence of a log with
    no cause says the cause is not in it and where to look (not a collective every rank waited in: no rank was
    elsewhere, its call is the place to look)."""
    if o.roles[kind] != "cause" and o.lead is not None and kind != o.first_exit:
        draft.summary += f" — a consequence of {_the(o.lead[0])} above (log.{o.lead[1]})"
        draft.details["consequence_of"] = f"log.{o.lead[1]}"
        draft.status = "warn"
        # its own fix would ask for the failing rank's log, or treat the symptom: the cause is above
        draft.fix = f"Fix {_the(o.lead[0])} above: this one follows from it."
    elif (
        o.roles[kind] != "cause"
        and kind == o.rest[0]
        and "consequence_of" not in draft.details
        and not all_waited
    ):
        draft.summary += f"; {CAUSE_NOT_FOUND}"
        # unless it says where already: another rank's log, or the kernel's (dmesg: a process it killed)
        draft.fix = (
            draft.fix if "rank's" in draft.fix or "dmesg" in draft.fix else f"{draft.fix}\n{LOOK_FOR_CAUSE}"
        )
        draft.details["cause"] = "not found in this log"


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
    """``hit`` was read on the exception ``raised``: the same file and rank (a hit of no rank is not a ranked
    exception's), between the top of its traceback and the last line its message goes on in (a message's own lines after it: its detail, the recogniser's
    span, or the three lines torch adds under an error, such as "CUDA kernel errors might be ...")."""
    if hit.source != raised.source:
        return False
    rank = hit_rank(hit)
    if raised.rank is not None and rank is not None and rank != raised.rank:
        return False
    if raised.rank is not None and rank is None:
        # a line without the rank's prefix under a rank's traceback is another process's (torchrun's "failed
        # (exitcode: -9) local_rank: 1" below rank 0's error: rank 1's exit, not rank 0's line)
        return False
    return raised.line - raised.above <= hit.line <= raised.line + len(raised.detail) + max(span, 3)


def _died_unwinding(crashes: list[Hit], raised: Raised) -> bool:
    """The process crashed after the exception that started the failure, on its rank: the first crash line
    (faulthandler's "Fatal Python error: Segmentation fault", the shell's "Segmentation fault (core dumped)")
    within `NEAR` lines below that exception's last line, none above it. It died while unwinding from that
    exception (a destructor or an extension's teardown), which is the cause; the crash is what followed. A crash
    printed first, or alone, or an exception whose own message is the crash, is none of these."""
    end = max(link.line + len(link.detail) for link in _chain(raised))
    if any(h.source != raised.source or hit_rank(h) != raised.rank or h.line <= end for h in crashes):
        return False
    return min(h.line for h in crashes) - end <= NEAR


def _covers(hit: Hit, raised: Raised) -> bool:
    """The known kind ``hit`` is the exception ``raised`` (or one raised `from` it): read on the same rank, or,
    rank unknown, a few lines from it in the same file. Not an exception raised after that one by the code that
    ran because of it (a `finally`, a `__del__`): a second error, not the first one's reading."""
    if "after_the_failure" in hit.facts and not _on(hit, raised):
        return False
    if raised.rank is not None:
        return hit_rank(hit) == raised.rank
    return any(
        hit.source == link.source and hit.rank is None and abs(hit.line - link.line) <= NEAR
        for link in _chain(raised)
    )


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
