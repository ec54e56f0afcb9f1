"""Flight-recorder dumps: which collective the ranks of a stuck job disagree on, and who is behind.

torch records every rank's recent collectives in a ring buffer (``TORCH_FR_BUFFER_SIZE``, formerly
``TORCH_NCCL_TRACE_BUFFER_SIZE``): process group, sequence number, operation, sizes, dtypes, whether it
completed, and the Python stack that called it. NCCL jobs write it to ``TORCH_FR_DUMP_TEMP_FILE`` + rank on a
timeout; any job can get it from ``torch._C._distributed_c10d._dump_fr_trace()`` (``torchdoctor launch
--watchdog`` does, for every rank of a hung run). The file is a pickle (or JSON, from ``_dump_fr_trace_json``).

Per process group this names the first collective where the ranks disagree, rather than the first mismatch of
the whole job (torch's analyzer), and it reads what torch's cannot: gloo dumps (their ``pg_config`` is
empty), some ranks' files missing, ring buffers that dropped their oldest entries (``record_id`` tells: a
buffer that never wrapped starts at 0), and files cut off mid-write. It never unpickles with ``pickle.load``:
a dump is a file from whoever sent it (`safe_pickle`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from torchdoctor.explain import safe_pickle
from torchdoctor.findings import Finding
from torchdoctor.hang.source import (  # noqa: F401 - read from here too
    RANK_WORDS,
    Condition,
    Frame,
    enclosing_loop,
    is_library,
    rank_condition,
    user_call,
)
from torchdoctor.rank_list import who

# Operations whose tensors must have the same sizes on every rank (gather, scatter, all_to_all and the
# p2p ones legitimately differ).
SAME_SIZES = frozenset(
    "all_reduce allreduce allreduce_coalesced all_reduce_coalesced broadcast reduce all_gather "
    "_allgather_base all_gather_into_tensor allgather allgather_coalesced reduce_scatter "
    "_reduce_scatter_base reduce_scatter_tensor reduce_scatter_tensor_coalesced".split()
)
_NEEDED = frozenset(
    "process_group profiling_name input_sizes output_sizes input_dtypes output_dtypes".split()
)
_RANK_IN_NAME = re.compile(r"(\d+)(?:\.[A-Za-z]+)?$")


@dataclass
class Collective:
    """One collective as one rank recorded it."""

    pg: str
    seq: int
    op: str
    input_sizes: list = field(default_factory=list)
    output_sizes: list = field(default_factory=list)
    input_dtypes: list = field(default_factory=list)
    output_dtypes: list = field(default_factory=list)
    completed: bool | None = None
    frames: list[Frame] = field(default_factory=list)  # outermost first

    def shape(self) -> str:
        """``all_reduce #3 [4] Float``."""
        sizes = " ".join(str(s) for s in self.input_sizes or self.output_sizes)
        dtypes = ",".join(dict.fromkeys(self.input_dtypes or self.output_dtypes))
        return " ".join(part for part in (f"{self.op} #{self.seq}", sizes, dtypes) if part)

    def signature(self) -> tuple:
        # what the rank sent: a rank known by its noted calls alone (`from_calls`) has no output side
        sizes = repr(self.input_sizes or self.output_sizes) if self.op in SAME_SIZES else ""
        return (self.op, sizes, tuple(self.input_dtypes or self.output_dtypes))


@dataclass
class RankRecord:
    """What one rank's dump says: its collectives per process group, oldest first."""

    rank: int
    source: str
    collectives: dict[str, list[Collective]] = field(default_factory=dict)
    pg_names: dict[str, str] = field(default_factory=dict)  # pg -> its description ("default_pg")
    pg_ranks: dict[str, list[int]] = field(default_factory=dict)  # only NCCL dumps say
    complete: bool = True  # the ring buffer never dropped an entry
    truncated: bool = False  # the file was cut off: its newest entries are lost


@dataclass
class Disagreement:
    """The first collective of one process group where the ranks part ways."""

    pg: str
    pg_name: str
    seq: int
    kind: str  # "never_entered" | "op" | "sizes" | "dtypes" | "pending" (never completed, no dump says why)
    entered: dict[tuple, list[int]]  # signature -> ranks, in the order first seen
    examples: dict[tuple, Collective]
    behind: list[int]  # ranks that never entered #seq
    last_of: dict[int, Collective | None]  # a rank that is behind -> its last collective in this group
    unknown: list[int]  # ranks whose dump cannot tell (missing, cut off before #seq)


# ---------------------------------------------------------------------------------------------------------
# Reading


def looks_like_dump(head: bytes) -> bool:
    """True for the first bytes of a flight-recorder dump: a pickle (protocol 2 or later; any pickle, so a
    stranger's is refused by name rather than read as text) or torch's JSON form of one."""
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return True
    text = head.lstrip()[:4096]
    return text.startswith(b"{") and b'"entries"' in text and (b'"pg_config"' in text or b'"version"' in text)


def read_dump(path: Path) -> RankRecord:
    """One rank's dump. Raises `safe_pickle.UnsafePickle` (or ``ValueError``) with one line for a file that
    is not a dump it can read, ``OSError`` for one it cannot open."""
    raw = path.read_bytes()
    if not raw.lstrip()[:1] == b"{":
        loaded = safe_pickle.loads(raw)
        data, truncated = loaded.data, loaded.truncated
    else:
        try:
            data, truncated = json.loads(raw.decode("utf-8", errors="replace")), False
        except ValueError as error:
            raise ValueError(f"neither a pickle nor JSON ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries", []), list):
        raise ValueError("not a flight-recorder dump (no 'entries' list)")
    if "entries" not in data and not truncated:
        raise ValueError("not a flight-recorder dump (no 'entries' list)")
    rank = data.get("rank")
    if not isinstance(rank, int):
        match = _RANK_IN_NAME.search(path.name)
        if not match:
            raise ValueError("cannot tell which rank wrote it: its name does not end in the rank's number")
        rank = int(match[1])
    return parse(data, rank, str(path), truncated)


def parse(data: dict, rank: int, source: str = "", truncated: bool = False) -> RankRecord:
    """A `RankRecord` from a dump already loaded (plain data); entries that lack what is needed are skipped."""
    record = RankRecord(rank, source or f"rank {rank}'s dump", truncated=truncated)
    record_ids = []
    entries = [e for e in data.get("entries") or [] if isinstance(e, dict)]
    if truncated:
        # The entry being written when the file was cut may lack keys, or hold a list cut short (sizes,
        # dtypes) that would read as a mismatch: leave the last one out whatever it looks like.
        keys = max((len(e) for e in entries), default=0)
        entries = [e for e in entries[:-1] if len(e) == keys and _NEEDED <= e.keys()]
    for entry in entries:
        if isinstance(entry.get("record_id"), int):
            record_ids.append(entry["record_id"])
        collective = _collective(entry)
        if collective is not None:
            record.collectives.setdefault(collective.pg, []).append(collective)
            group = entry.get("process_group")
            if isinstance(group, (list, tuple)) and len(group) > 1 and isinstance(group[1], str):
                record.pg_names.setdefault(collective.pg, group[1])
    record.complete = not record_ids or min(record_ids) == 0
    for collectives in record.collectives.values():
        collectives.sort(key=lambda c: c.seq)
    for name, config in (data.get("pg_config") or {}).items():
        if isinstance(config, dict) and name:  # gloo writes one entry named '' with no ranks
            ranks = _rank_list(config.get("ranks"))
            if ranks:
                record.pg_ranks[str(name)] = ranks
    return record


def _collective(entry: dict) -> Collective | None:
    if entry.get("is_p2p"):
        return None
    # torch 2.3 and older wrote one ``seq_id`` for collectives and p2p alike
    seq, group = entry.get("collective_seq_id", entry.get("seq_id")), entry.get("process_group")
    if not isinstance(seq, int) or seq <= 0:
        return None
    if isinstance(group, (list, tuple)) and group:
        pg = str(group[0])
    elif "pg_id" in entry:
        pg = str(entry["pg_id"])
    else:
        return None
    name = str(entry.get("profiling_name", "?"))
    state = entry.get("state")
    completed = entry.get("retired") if isinstance(entry.get("retired"), bool) else None
    if state == "completed":
        completed = True
    return Collective(
        pg,
        seq,
        name.split(":", 1)[-1],
        _plain_list(entry.get("input_sizes")),
        _plain_list(entry.get("output_sizes")),
        [str(d) for d in _plain_list(entry.get("input_dtypes"))],
        [str(d) for d in _plain_list(entry.get("output_dtypes"))],
        completed,
        _calls(entry.get("frames")),
    )


def _plain_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def _calls(frames: Any) -> list[Frame]:
    calls = []
    for frame in frames if isinstance(frames, list) else []:
        if isinstance(frame, dict):
            line = frame.get("line")
            calls.append(
                Frame(
                    str(frame.get("filename", "?")),
                    line if isinstance(line, int) else 0,
                    str(frame.get("name")),
                )
            )
    return calls[::-1]  # torch writes the innermost frame first


def _rank_list(text: Any) -> list[int]:
    if isinstance(text, (list, tuple)):
        return [r for r in text if isinstance(r, int)]
    if isinstance(text, str) and len(text) < 10_000_000:
        return [int(r) for r in re.findall(r"\d+", text)]
    return []


# ---------------------------------------------------------------------------------------------------------
# Comparing


def disagreements(records: dict[int, RankRecord], world: list[int] | None = None) -> list[Disagreement]:
    """Per process group, the first collective (by sequence number) where the ranks disagree: some never
    entered it, or they entered different operations, sizes or dtypes. ``world``: every rank of the job,
    when known (the default group, ``"0"``, has them all)."""
    found = []
    for pg in sorted({pg for r in records.values() for pg in r.collectives}, key=_pg_order):
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
        for rank, collective in sorted(present.items()):
            entered.setdefault(collective.signature(), []).append(rank)
            examples.setdefault(collective.signature(), collective)
        name = next((r.pg_names[pg] for r in records.values() if pg in r.pg_names), "")
        if len(entered) == 1 and not behind:
            if unknown and pending is None and all(c.completed is False for c in present.values()):
                pending = Disagreement(pg, name, seq, "pending", entered, examples, [], {}, unknown)
            continue
        kind = "never_entered" if len(entered) == 1 else _what_differs(list(examples.values()))
        last_of = {}
        for rank in behind:
            kept = records[rank].collectives.get(pg, [])
            last_of[rank] = kept[-1] if kept else None
        return Disagreement(pg, name, seq, kind, entered, examples, behind, last_of, unknown)
    return pending


def _what_differs(collectives: list[Collective]) -> str:
    if len({c.op for c in collectives}) > 1:
        return "op"
    if len({repr((c.input_sizes, c.output_sizes)) for c in collectives}) > 1:
        return "sizes"
    return "dtypes"


def _pg_order(pg: str) -> tuple:
    return (0, int(pg), "") if pg.isdigit() else (1, 0, pg)


# ---------------------------------------------------------------------------------------------------------
# Saying it


def where(collective: Collective) -> str:
    """``" (train.py:10 in main)"`` for the user's line that called it, or nothing when the stack is unknown."""
    call = user_call(collective.frames)
    return f" ({call.file}:{call.line} in {call.function})" if call else ""


def _stack_lines(collective: Collective, limit: int = 6) -> list[str]:
    return [str(call) for call in collective.frames[-limit:][::-1]]


def to_finding(d: Disagreement, sources: dict[int, str] | None = None) -> Finding:
    """A `Finding` (``log.rank_divergence`` or ``log.collective_mismatch``) for one disagreement."""
    group = f"process group {d.pg}" + (f" ({d.pg_name})" if d.pg_name and d.pg_name != d.pg else "")
    all_entered = sorted(r for ranks in d.entered.values() for r in ranks)
    stacks = {}
    for signature, example in d.examples.items():
        stacks[who(d.entered[signature])] = _stack_lines(example)
    for rank, last in d.last_of.items():
        stacks[f"rank {rank} (its last collective)"] = _stack_lines(last) if last else []
    details: dict[str, Any] = {
        "process_group": d.pg,
        "process_group_name": d.pg_name,
        "sequence_number": d.seq,
        "entered": {who(r): (e.shape(), where(e).strip(" ()")) for (s, r), e in _pairs(d)},
        "never_entered": d.behind,
        "unknown": d.unknown,
        "stacks": stacks,
    }
    if sources:
        details["files"] = {str(rank): path for rank, path in sorted(sources.items())}
    if d.kind == "pending":
        (example,) = d.examples.values()
        summary = (
            f"{group}: {who(all_entered)} entered {example.shape()}{where(example)} and it never completed; "
            f"{who(d.unknown)} left no dump that reaches it, so {'they are' if len(d.unknown) > 1 else 'it is'} "
            "the likely one(s) that never came"
        )
        fix = f"Find {who(d.unknown)}'s dump(s) or logs: what {who(d.unknown)} did instead is not in these files."
        return Finding("log.collective_pending", "warn", summary, details, fix)
    if d.kind == "never_entered":
        (example,) = d.examples.values()
        behind_at = "; ".join(
            f"rank {rank}'s last was {last.shape()}{where(last)}" if last else f"rank {rank} recorded none"
            for rank, last in sorted(d.last_of.items())[:8]
        )
        summary = (
            f"{group}: {who(d.behind)} never entered {example.shape()}{where(example)}, "
            f"which {who(all_entered)} entered" + (f"; {behind_at}" if behind_at else "") + _unknown_text(d)
        )
        fix = _divergence_fix(d, example)
        return Finding("log.rank_divergence", "fail", summary, details, fix)
    parts = "; ".join(
        f"{who(ranks)}: {d.examples[s].shape()}{where(d.examples[s])}" for s, ranks in d.entered.items()
    )
    what = {"op": "different operations", "sizes": "different sizes", "dtypes": "different dtypes"}[d.kind]
    summary = f"{group}: collective #{d.seq} has {what} on different ranks: {parts}"
    if d.behind:
        summary += f"; {who(d.behind)} never entered it"
    summary += _unknown_text(d)
    return Finding("log.collective_mismatch", "fail", summary, details, _mismatch_fix(d))


def _pairs(d: Disagreement):
    return [((s, ranks), d.examples[s]) for s, ranks in d.entered.items()]


def _unknown_text(d: Disagreement) -> str:
    return f" ({who(d.unknown)}: no dump that reaches #{d.seq}, so unknown)" if d.unknown else ""


def _divergence_fix(d: Disagreement, example: Collective) -> str:
    lines = []
    call = user_call(example.frames)
    if call:
        condition = rank_condition(call.file, call.line)
        if condition:
            lines.append(
                f"{call.file}:{call.line} sits under a condition on the rank, {condition}: "
                "every rank of the group must make the same collective calls; move the "
                "collective out of it, or make the other ranks call it too."
            )
    lines.append(
        f"{who(d.behind)} took another path before {example.op} #{d.seq}: look for a condition on the rank, an "
        "early `return`/`break`, an exception caught and ignored, or a different number of batches per rank "
        "(DistributedSampler(drop_last=True) evens them)."
    )
    lines.append(
        f"To see where {who(d.behind)} is when it hangs: `torchdoctor launch --watchdog 300 train.py` prints every "
        "rank's stack and joins it with these dumps."
    )
    return "\n".join(lines)


def _mismatch_fix(d: Disagreement) -> str:
    op = next(iter(d.examples.values())).op
    if d.kind == "op":
        return (
            "The ranks call collectives in a different order: every rank of a group must make the same calls in "
            "the same order. Look at each rank's line above for a condition on the rank between them."
        )
    if d.kind == "sizes":
        return (
            f"Every rank must pass {op} tensors of the same shape. For data whose length differs per rank, pad it "
            "to the largest (accelerate's pad_across_processes), gather the sizes first, or keep batches even "
            "(drop_last=True)."
        )
    return f"Every rank must pass {op} tensors of the same dtype: cast before the call (e.g. `.float()`)."


# ---------------------------------------------------------------------------------------------------------
# The entry point for `torchdoctor explain`


def explain_dumps(paths: list[Path]) -> list[Finding]:
    """Findings for a set of flight-recorder dumps (one file per rank): one per process group whose ranks
    disagree (``log.rank_divergence``, ``log.collective_mismatch``), one per file refused or cut off
    (``log.unreadable_dump``, ``log.truncated_dump``), ranks with no file (``log.missing_dumps``); an ``ok``
    finding when the ranks agree."""
    findings: list[Finding] = []
    records: dict[int, RankRecord] = {}
    for path in paths:
        path = Path(path)
        try:
            record = read_dump(path)
        except (safe_pickle.UnsafePickle, ValueError) as error:
            findings.append(_unreadable(path, str(error)))
            continue
        except OSError as error:
            findings.append(_unreadable(path, error.strerror or str(error)))
            continue
        if record.rank in records:
            findings.append(
                _unreadable(path, f"a second dump for rank {record.rank} ({records[record.rank].source})")
            )
            continue
        records[record.rank] = record
        if record.truncated:
            count = sum(len(c) for c in record.collectives.values())
            findings.append(
                Finding(
                    "log.truncated_dump",
                    "warn",
                    f"rank {record.rank}'s dump {path} is cut off; read the {count} collective(s) before the cut",
                    {"file": str(path), "rank": record.rank, "collectives_read": count},
                    "The rank was probably killed while it wrote the file; what it did after the cut is unknown.",
                )
            )
    if not records:
        return findings
    world = list(range(max(records) + 1))
    for record in records.values():
        for ranks in record.pg_ranks.values():
            world = sorted(set(world) | set(ranks))
    missing = [rank for rank in world if rank not in records]
    if missing:
        findings.append(
            Finding(
                "log.missing_dumps",
                "warn",
                f"no dump from {who(missing)} (dumps read: {who(list(records))}); "
                "what those ranks did is unknown",
                {"missing": missing, "read": sorted(records)},
                "Collect every rank's file (TORCH_FR_DUMP_TEMP_FILE + rank on each node).",
            )
        )
    sources = {rank: r.source for rank, r in records.items()}
    found = [to_finding(d, sources) for d in disagreements(records, world)]
    if not found:
        groups = sorted({pg for r in records.values() for pg in r.collectives}, key=_pg_order)
        newest = max((c[-1].seq for r in records.values() for c in r.collectives.values() if c), default=0)
        findings.append(
            Finding(
                "log.flight_recorder",
                "ok",
                f"flight-recorder dumps of {who(list(records))}: the ranks agree on every collective they "
                f"recorded (process group(s) {', '.join(groups) or 'none'}, up to #{newest})",
                {"files": {str(k): v for k, v in sorted(sources.items())}},
            )
        )
    return found + findings


def _unreadable(path: Path, why: str) -> Finding:
    return Finding(
        "log.unreadable_dump",
        "warn",
        f"{path}: not read as a flight-recorder dump: {why}",
        {"file": str(path), "reason": why},
        "Nothing in it was run. A dump is written by torch (TORCH_FR_DUMP_TEMP_FILE); check where this file came from.",
    )


def fill_call_sites(record: RankRecord, calls: dict[str, list]) -> None:
    """Give the collectives of ``record`` that were dumped without their stack the call site the worker
    noted itself (`torchdoctor.hang.calls`: process group -> its `Call` s)."""
    for pg, collectives in record.collectives.items():
        noted = calls.get(pg, [])
        for collective in collectives:
            if collective.frames:
                continue
            for call in noted:
                if call.first <= collective.seq <= call.last:
                    collective.frames = list(call.frames)
                    break


# torch's dtype names as the flight recorder writes them (c10's ScalarType names)
TORCH_DTYPES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def from_calls(rank: int, calls: dict[str, list], source: str = "") -> RankRecord:
    """A `RankRecord` made of the calls a worker noted (`torchdoctor.hang.calls`), for a rank that left no
    dump: a killed rank, or a job that failed before anyone asked for one. A call that used several
    sequence numbers (``all_gather_object``) stands for the first of them."""
    # it holds only the calls made through torch.distributed's Python functions (not DDP's own): a sequence
    # number it lacks is unknown, never "not entered" (read as a ring buffer cut short)
    record = RankRecord(rank, source or f"rank {rank}'s noted calls", complete=False, truncated=True)
    for pg, noted in calls.items():
        record.collectives[pg] = [
            Collective(
                pg,
                call.first,
                call.op,
                [call.shape] if call.shape is not None else [],
                [],
                [TORCH_DTYPES.get(call.dtype, call.dtype)] if call.dtype else [],
                [],
                True if call.last > call.first else None,
                list(call.frames),
            )
            for call in noted
        ]
    return record


# ---------------------------------------------------------------------------------------------------------
# Digests: what a node sends the node that reports for the whole job


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
