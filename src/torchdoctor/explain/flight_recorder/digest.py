"""Digests: a rank's newest collectives in a few JSON rows, what a node sends the node that reports for the
whole job at a hang (and a rank, in library mode, the rank that reports), and the record read back from one.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from torchdoctor.explain.flight_recorder.records import Collective, RankRecord
from torchdoctor.hang.source import Frame


class DigestRow(NamedTuple):
    """One collective in a `digest`, in the order it travels as a JSON list."""

    seq: int
    op: str
    input_sizes: list
    output_sizes: list
    input_dtypes: list
    output_dtypes: list
    completed: bool | None
    frames: list  # [file, line, function], outermost first

    @classmethod
    def read(cls, pg: str, row: Any) -> Collective:
        """The `Collective` a row stands for; ``ValueError`` naming what is wrong with it."""
        if not isinstance(row, (list, tuple)) or len(row) != len(cls._fields):
            raise ValueError(
                f"a digest row of process group {pg} is not {len(cls._fields)} fields: {str(row)[:80]}"
            )
        r = cls(*row)
        if not isinstance(r.seq, int) or not isinstance(r.frames, list):
            raise ValueError(f"a digest row of process group {pg} does not read: {str(row)[:80]}")
        frames = [Frame(str(f[0]), int(f[1]), str(f[2])) for f in r.frames]
        return Collective(
            pg,
            r.seq,
            str(r.op),
            r.input_sizes,
            r.output_sizes,
            r.input_dtypes,
            r.output_dtypes,
            r.completed,
            frames,
        )


def digest(record: RankRecord, keep: int = 4) -> dict:
    """The newest ``keep`` collectives of each process group of ``record``, as JSON-able data: enough to find
    where the ranks part ways at a hang (the older ones agreed, or the job would have stopped there)."""
    groups = {}
    for pg, collectives in record.collectives.items():
        groups[pg] = [
            list(
                DigestRow(
                    c.seq,
                    c.op,
                    c.input_sizes,
                    c.output_sizes,
                    c.input_dtypes,
                    c.output_dtypes,
                    c.completed,
                    [[f.file, f.line, f.function] for f in c.frames[-12:]],
                )
            )
            for c in collectives[-keep:]
        ]
    dropped = any(len(c) > keep for c in record.collectives.values())
    return {
        "rank": record.rank,
        "source": record.source,
        "complete": record.complete and not dropped,
        "truncated": record.truncated,
        "pg_names": record.pg_names,
        "pg_ranks": record.pg_ranks,
        "collectives": groups,
    }


def from_digest(data: dict) -> RankRecord:
    """The `RankRecord` a `digest` stands for (its older collectives dropped, as a ring buffer drops them)."""
    record = RankRecord(
        int(data["rank"]),
        str(data.get("source", "")),
        complete=bool(data.get("complete")),
        truncated=bool(data.get("truncated")),
        pg_names=dict(data.get("pg_names") or {}),
        pg_ranks={k: [int(r) for r in v] for k, v in (data.get("pg_ranks") or {}).items()},
    )
    for pg, rows in (data.get("collectives") or {}).items():
        record.collectives[pg] = [DigestRow.read(pg, row) for row in rows]
    return record
