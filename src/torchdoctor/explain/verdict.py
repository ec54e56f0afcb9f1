"""From hits to findings: one per kind, the root cause first, consequences named as such."""

from __future__ import annotations

from torchdoctor.explain.kinds import BY_KIND
from torchdoctor.explain.ranks import hit_rank
from torchdoctor.explain.recognisers import Context, Hit, rank_list
from torchdoctor.findings import Finding

CAUSE_NOT_FOUND = "the cause is not in this log (this is what it led to)"
LOOK_FOR_CAUSE = (
    "The cause is the first rank that failed: find it (torchrun's Root Cause block, the earliest error by time) "
    "and read that rank's own log; `torchdoctor explain FOLDER` with every rank's log names it."
)


def role(kind: str, hits: list[Hit]) -> str:
    """``cause`` or ``consequence`` (an NCCL error that says another process exited is a consequence)."""
    if kind == "nccl_error" and any("remote process exited" in h.facts.get("reason", "") for h in hits):
        return "consequence"
    return BY_KIND[kind].role


def findings(hits: list[Hit], ctx: Context, counts: dict[str, int] | None = None) -> list[Finding]:
    """One finding per kind seen, causes first (earliest first), then what they led to."""
    by_kind: dict[str, list[Hit]] = {}
    for hit in sorted(hits, key=lambda h: h.order):
        by_kind.setdefault(hit.kind, []).append(hit)
    for kind in list(by_kind):
        needed = BY_KIND[kind].requires
        if needed and not any(fact in ctx.facts for fact in needed):
            del by_kind[kind]
    for kind in list(by_kind):
        for vaguer in BY_KIND[kind].absorbs:
            by_kind.pop(vaguer, None)
    roles = {kind: role(kind, kind_hits) for kind, kind_hits in by_kind.items()}
    sure = {kind: BY_KIND[kind].confidence(kind_hits, ctx) for kind, kind_hits in by_kind.items()}
    # a certain cause leads a likely one (stable: earliest first within each)
    causes = sorted((k for k in by_kind if roles[k] == "cause"), key=lambda k: sure[k] != "certain")
    ctx.cause_ranks = {r for k in causes for h in by_kind[k] if (r := hit_rank(h)) is not None}
    if not causes:  # only consequences: what they follow from is not in this log, so none of them is certain
        sure = dict.fromkeys(sure, "likely")
    rest = sorted((k for k in by_kind if roles[k] != "cause"), key=lambda k: sure[k] != "certain")
    ordered = causes + rest
    found = []
    for kind in ordered:
        kind_hits = by_kind[kind]
        recogniser = BY_KIND[kind]
        summary, fix = recogniser.describe(kind_hits, ctx)
        details = _details(kind, kind_hits, roles[kind], counts)
        details["confidence"] = sure[kind]
        if sure[kind] == "likely":
            summary = f"likely: {summary}"
        versions = {k: v for k, v in ctx.facts.items() if k.endswith("_version")}
        if versions:
            details["versions"] = versions  # what the log says it ran with, for the person reading -v
        status = "fail"
        if roles[kind] != "cause" and causes:
            lead = BY_KIND[causes[0]]
            summary += f" — a consequence of the {lead.title} above (log.{lead.kind})"
            details["consequence_of"] = f"log.{lead.kind}"
            status = "warn"
        elif roles[kind] != "cause" and kind == rest[0]:
            summary += f"; {CAUSE_NOT_FOUND}"
            fix = fix if "rank's" in fix else f"{fix}\n{LOOK_FOR_CAUSE}"  # unless it says where already
            details["cause"] = "not found in this log"
        found.append(Finding(f"log.{kind}", status, summary, details, fix))
    return found


def _details(kind: str, hits: list[Hit], role_: str, counts: dict[str, int] | None) -> dict:
    ranks = sorted({r for h in hits if (r := hit_rank(h)) is not None})
    facts: dict = {}
    for hit in hits:
        for key, value in hit.facts.items():
            facts.setdefault(key, value)
    facts.pop("msg_rank", None)
    details = (
        {"kind": kind, "role": role_, "ranks": rank_list(ranks)} if ranks else {"kind": kind, "role": role_}
    )
    details["seen"] = (counts or {}).get(kind, len(hits))
    details["where"] = [f"{h.source}:{h.line}" for h in hits[:5]]
    details["facts"] = facts
    return details
