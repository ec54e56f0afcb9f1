"""A rank's record of its collectives (`RankRecord`): read from its flight-recorder dump (a pickle, read
without unpickling, or torch's JSON form), or made from the call sites a worker noted itself when it left
no dump (`torchdoctor.hang.calls`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchdoctor.explain import safe_pickle
from torchdoctor.hang.source import Frame

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
    state: str = (
        ""  # the recorder's: "scheduled", "started" (only with TORCH_NCCL_ENABLE_TIMING=1), "completed"
    )
    # a call a worker noted that used several sequence numbers (broadcast_object_list: a size, then the bytes): its
    # op and sizes are the Python function's, not those of the first c10d collective a dump records at its number
    several: bool = False

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
    return record_of(*load_plain(path), path)


def load_plain(path: Path) -> tuple[Any, bool]:
    """A pickle (read as plain data, `safe_pickle`) or JSON file's content, and whether it was cut off. Raises
    `safe_pickle.UnsafePickle` or ``ValueError`` with one line, ``OSError`` for a file it cannot open."""
    raw = path.read_bytes()
    if not raw.lstrip()[:1] == b"{":
        loaded = safe_pickle.loads(raw)
        return loaded.data, loaded.truncated
    try:
        return json.loads(raw.decode("utf-8", errors="replace")), False
    except ValueError as error:
        raise ValueError(f"neither a pickle nor JSON ({error})") from None


def record_of(data: Any, truncated: bool, path: Path) -> RankRecord:
    """The `RankRecord` of what `load_plain` read from ``path``; ``ValueError`` where it is not a dump."""
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
        state if isinstance(state, str) else "",
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
                several=call.last > call.first,
            )
            for call in noted
        ]
    return record
