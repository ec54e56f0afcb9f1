"""Comparing the ranks' records: per process group, the first collective (by sequence number) where the ranks
part ways: some never entered it, they entered different operations, sizes or dtypes, or it never completed
and only ranks with no dump can say why; failing those, the first that every rank entered and none saw
complete (the collective itself stalled: no rank is behind).
"""

from __future__ import annotations

from dataclasses import dataclass

from torchdoctor.explain.flight_recorder.records import Collective, RankRecord


@dataclass
class Disagreement:
    """The first collective of one process group where the ranks part ways."""

    pg: str
    pg_name: str
    seq: int
    kind: str  # "never_entered" | "op" | "sizes" | "dtypes" | "pending" (never completed, no dump says why)
    # | "stalled" (every rank of the group entered it, none saw it complete)
    entered: dict[tuple, list[int]]  # signature -> ranks, in the order first seen
    examples: dict[tuple, Collective]
    behind: list[int]  # ranks that never entered #seq
    last_of: dict[int, Collective | None]  # a rank that is behind -> its last collective in this group
    unknown: list[int]  # ranks whose dump cannot tell (missing, cut off before #seq)


def disagreements(records: dict[int, RankRecord], world: list[int] | None = None) -> list[Disagreement]:
    """Per process group, the first collective (by sequence number) where the ranks disagree: some never
    entered it, or they entered different operations, sizes or dtypes. ``world``: every rank of the job,
    when known (the default group, ``"0"``, has them all)."""
    found = []
    for pg in sorted({pg for r in records.values() for pg in r.collectives}, key=pg_order):
        members = _members(pg, records, world)
        found_here = _first_disagreement(pg, records, members)
        if found_here:
            found.append(found_here)
    return found


def _members(pg: str, records: dict[int, RankRecord], world: list[int] | None) -> list[int]:
    said = next((r.pg_ranks[pg] for r in records.values() if pg in r.pg_ranks), None)
    if said:
        return sorted(set(said))
    if pg == "0" and world:
        return sorted(world)
    return sorted(rank for rank, r in records.items() if pg in r.collectives)


def _first_disagreement(pg: str, records: dict[int, RankRecord], members: list[int]) -> Disagreement | None:
    by_seq: dict[int, dict[int, Collective]] = {}
    newest: dict[int, int] = {}
    oldest: dict[int, int] = {}
    for rank in members:
        record = records.get(rank)
        if record is None:
            continue
        for collective in record.collectives.get(pg, []):
            by_seq.setdefault(collective.seq, {})[rank] = collective
        kept = record.collectives.get(pg, [])
        newest[rank] = kept[-1].seq if kept else 0
        oldest[rank] = kept[0].seq if kept else 0
    pending = None  # a collective that never completed, where only ranks with no dump can say why
    stalled = None  # one that every rank of the group entered and none saw complete
    for seq in sorted(by_seq):
        present = by_seq[seq]
        behind, unknown = [], []
        for rank in members:
            record = records.get(rank)
            if rank in present:
                continue
            if record is None or record.truncated and newest[rank] < seq:
                unknown.append(rank)  # no file, or the file ends before it could say
            elif newest[rank] < seq and (newest[rank] or record.complete):
                behind.append(rank)
            # else: the ring buffer dropped it, nothing to compare
        entered: dict[tuple, list[int]] = {}
        examples: dict[tuple, Collective] = {}
        for rank, collective in sorted(_comparable(present).items()):
            entered.setdefault(collective.signature(), []).append(rank)
            examples.setdefault(collective.signature(), collective)
        name = next((r.pg_names[pg] for r in records.values() if pg in r.pg_names), "")
        if len(entered) == 1 and not behind:
            never_completed = all(c.completed is False for c in present.values())
            if unknown and pending is None and never_completed:
                pending = Disagreement(pg, name, seq, "pending", entered, examples, [], {}, unknown)
            elif not unknown and stalled is None and never_completed and len(present) == len(members):
                stalled = Disagreement(pg, name, seq, "stalled", entered, examples, [], {}, [])
            continue
        kind = "never_entered" if len(entered) == 1 else _what_differs(list(examples.values()))
        last_of = {}
        for rank in behind:
            kept = records[rank].collectives.get(pg, [])
            last_of[rank] = kept[-1] if kept else None
        return Disagreement(pg, name, seq, kind, entered, examples, behind, last_of, unknown)
    return pending or stalled


def _comparable(present: dict[int, Collective]) -> dict[int, Collective]:
    """The collectives at one sequence number whose op and sizes can be set side by side: a noted call that used
    several numbers (an object collective) is not compared with the c10d collective a dump records there (the
    same call seen at another level); it still counts as entered."""
    recorded = {rank: c for rank, c in present.items() if not c.several}
    return recorded if recorded else present


def _what_differs(collectives: list[Collective]) -> str:
    if len({c.op for c in collectives}) > 1:
        return "op"
    if len({repr((c.input_sizes, c.output_sizes)) for c in collectives}) > 1:
        return "sizes"
    return "dtypes"


def pg_order(pg: str) -> tuple:
    """How process groups are sorted: by number ("0" first), then by name."""
    return (0, int(pg), "") if pg.isdigit() else (1, 0, pg)
