"""The hang report: where every rank is (ranks in the same place on one line), then the verdict, joined with
the ranks' flight-recorder records when there are any (`torchdoctor.hang.joined_verdict`), else from the
stacks alone (`torchdoctor.hang.verdict`), and the culprit. Used by the watchdog on one node
(`torchdoctor.hang.supervise`, `torchdoctor.hang.watch`) and, through `torchdoctor.hang.job`, for a job on many.
"""

from __future__ import annotations

from torchdoctor.hang.joined_verdict import joined_verdict
from torchdoctor.hang.places import grouped, ranks_named
from torchdoctor.hang.stacks import RankStack
from torchdoctor.hang.verdict import Verdict, stacks_verdict


def diagnosis(stacks: list[RankStack], records: dict | None = None) -> str:
    """What the stacks (and, when given, the ranks' flight-recorder records) say: which ranks never came
    to the collective the others wait in, where they are instead, and what to look for."""
    return verdict(stacks, records).text


def verdict(stacks: list[RankStack], records: dict | None = None) -> Verdict:
    """`diagnosis` as a `Verdict`: the culprit rank(s) and line, the kind, the text."""
    if records:
        joined = joined_verdict(stacks, records)
        if joined is not None:
            return joined
    return stacks_verdict(stacks)


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
            f"Culprit: {ranks_named(found.culprits)}{where}"
            + (f"; {ranks_named(others)} wait because of it." if others else ".")
        )
    missing = [
        f"rank {s.rank}: {'; '.join(s.evidence)}" for s in sorted(stacks, key=lambda s: s.rank) if s.evidence
    ]
    if missing:
        lines.append("Evidence not used: " + "; ".join(missing) + ".")
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"
