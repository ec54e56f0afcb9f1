"""What the dumps say, as findings with their fix: one per process group whose ranks disagree, one per file
refused or cut off, the ranks with no file; `explain_dumps` is what ``torchdoctor explain`` calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchdoctor.explain import memory_snapshot, safe_pickle
from torchdoctor.explain.flight_recorder.compare import Disagreement, disagreements, pg_order
from torchdoctor.explain.flight_recorder.records import Collective, RankRecord, load_plain, record_of
from torchdoctor.findings import Finding
from torchdoctor.hang.source import condition_on_chain, rank_condition, user_call
from torchdoctor.rank_list import who


def where_called(collective: Collective) -> str:
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
        "entered": {who(r): (e.shape(), where_called(e).strip(" ()")) for (s, r), e in _pairs(d)},
        "never_entered": d.behind,
        "unknown": d.unknown,
        "stacks": stacks,
    }
    if sources:
        details["files"] = {str(rank): path for rank, path in sorted(sources.items())}
    if d.kind == "pending":
        (example,) = d.examples.values()
        summary = (
            f"{group}: {who(all_entered)} entered {example.shape()}{where_called(example)} and it never completed; "
            f"{who(d.unknown)} left no dump that reaches it, so {'they are' if len(d.unknown) > 1 else 'it is'} "
            "the likely one(s) that never came"
        )
        fix = f"Find {who(d.unknown)}'s dump(s) or logs: what {who(d.unknown)} did instead is not in these files."
        return Finding("log.collective_pending", "warn", summary, details, fix)
    if d.kind == "stalled":
        (example,) = d.examples.values()
        summary, fix = stalled_text(d, example)
        fix += "\n`torchdoctor launch --watchdog 300 train.py` shows where each rank's host waits, on the next hang."
        details["states"] = {who(r): e.state for (s, r), e in _pairs(d)}
        return Finding("log.collective_stalled", "warn", summary, details, fix)
    if d.kind == "never_entered":
        (example,) = d.examples.values()
        behind_at = "; ".join(
            f"rank {rank}'s last was {last.shape()}{where_called(last)}"
            if last
            else f"rank {rank} recorded none"
            for rank, last in sorted(d.last_of.items())[:8]
        )
        summary = (
            f"{group}: {who(d.behind)} never entered {example.shape()}{where_called(example)}, "
            f"which {who(all_entered)} entered" + (f"; {behind_at}" if behind_at else "") + _unknown_text(d)
        )
        fix = _divergence_fix(d, example)
        return Finding("log.rank_divergence", "fail", summary, details, fix)
    parts = "; ".join(
        f"{who(ranks)}: {d.examples[s].shape()}{where_called(d.examples[s])}"
        for s, ranks in d.entered.items()
    )
    what = {"op": "different operations", "sizes": "different sizes", "dtypes": "different dtypes"}[d.kind]
    summary = f"{group}: collective #{d.seq} has {what} on different ranks: {parts}"
    if d.behind:
        summary += f"; {who(d.behind)} never entered it"
    summary += _unknown_text(d)
    return Finding("log.collective_mismatch", "fail", summary, details, _mismatch_fix(d))


def stalled_text(d: Disagreement, example: Collective) -> tuple[str, str]:
    """The summary and fix of a collective every rank of its group entered and none saw complete."""
    group = f"process group {d.pg}" + (f" ({d.pg_name})" if d.pg_name and d.pg_name != d.pg else "")
    ranks = sorted(r for ranks in d.entered.values() for r in ranks)
    if len(ranks) == 1:
        summary = (
            f"{group}: {example.shape()}{where_called(example)} never completed on {who(ranks)}, the only rank "
            "of its group: with no peer to wait for, it waited for that rank's own GPU, where work queued "
            "before it had not finished"
        )
        fix = (
            f"Find what {who(ranks)}'s GPU was still running when the collective was queued: a kernel that runs "
            "very long or never ends (a custom CUDA kernel, a spin-wait on the device), on the same "
            "stream before it."
        )
        return summary, fix
    summary = (
        f"{group}: every rank of the group ({who(ranks)}) entered {example.shape()}{where_called(example)} and "
        "none saw it complete: no rank is behind, so the collective itself stalled (the network between the "
        "ranks, or a rank's GPU still busy with work queued before it)"
    )
    fix = (
        "Next: `torchdoctor net` (can the ranks reach each other, at what bandwidth), `torchdoctor check` on each "
        "node, and the NCCL log (NCCL_DEBUG=INFO): which transport each rank chose and the last call it made."
    )
    return summary, fix


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
        said = (
            "The ranks call collectives in a different order: every rank of a group must make the same calls in "
            "the same order."
        )
        # the side whose call sits under a condition on the rank, read along its whole call chain (u41: a barrier
        # in nanoGPT's checkpoint save, under `if ... and master_process:` many lines up, against rank 1's backward)
        branches = []
        for (_, ranks), example in _pairs(d):
            found = condition_on_chain(example.frames)
            if found:
                frame, condition = found
                branches.append(
                    f"{who(ranks).capitalize()}'s {example.op} #{d.seq} ({frame.file}:{frame.line}) sits under a "
                    f"condition on the rank, {condition}"
                )
        if not branches:
            return f"{said} Look at each rank's line above for a condition on the rank between them."
        return (
            f"{said} {'; '.join(branches)}: the ranks that skip that branch never make the call inside it and go on "
            "to their next one; make the call on every rank and keep only the write or the print under the condition."
        )
    if d.kind == "sizes":
        return (
            f"Every rank must pass {op} tensors of the same shape. For data whose length differs per rank, pad it "
            "to the largest (accelerate's pad_across_processes), gather the sizes first, or keep batches even "
            "(drop_last=True)."
        )
    return f"Every rank must pass {op} tensors of the same dtype: cast before the call (e.g. `.float()`)."


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
            data, truncated = load_plain(path)
            if memory_snapshot.is_snapshot(data):  # a CUDA memory snapshot, plain data too: read once
                findings.extend(memory_snapshot.snapshot_findings(path, data))
                continue
            record = record_of(data, truncated, path)
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
        groups = sorted({pg for r in records.values() for pg in r.collectives}, key=pg_order)
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
