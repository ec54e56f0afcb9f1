"""The words of debug mode's errors: which ranks disagree on what, and how to fix it; who never arrived.

`torchdoctor.distributed.debug` decides that something is wrong; this module says it, in accelerate's wording
where accelerate has one, with each rank's call site, three or more consecutive ranks in one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from torchdoctor.distributed import stacks
from torchdoctor.rank_list import grouped, who

# signature field -> how the error names its values (plural), compared in this order
FIELDS = {
    "shape": "shapes",
    "dtype": "dtypes",
    "device": "devices",
    "src": "source ranks",
    "dst": "destination ranks",
    "reduce op": "reduce ops",
}
MISSING_ASKED = 8  # missing ranks asked where they are; beyond that they are listed


def mismatch_message(entries: Mapping[int, Mapping[str, Any]], backend: str = "") -> str:
    """The error text for the first field on which the ranks' ``entries`` differ, or ``""`` when they agree.

    With ``backend="nccl"``, CPU tensors are an error too (NCCL only moves GPU memory).

    >>> print(mismatch_message({0: {"operation": "op", "shape": [1, 5]}, 1: {"operation": "op", "shape": [2, 6]}}))
    Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.
    <BLANKLINE>
    Operation: `op`
    Input shapes:
      - Process 0: [1, 5]
      - Process 1: [2, 6]
    """
    ranks = sorted(entries)
    first = entries[ranks[0]]
    sites = _sites_block(entries)
    operations = [entries[r]["operation"] for r in ranks]
    if len(set(operations)) > 1:
        lines = "\n  - ".join(f"Process {r}: `{entries[r]['operation']}`" for r in ranks)
        return (
            "Cannot apply desired operation because the processes called different operations at the same "
            f"point. All processes must call the same collectives in the same order.\n\nOperations:\n  - {lines}"
            + sites
        )
    for field, plural in FIELDS.items():
        values = [entries[r].get(field) for r in ranks]
        if any(v != values[0] for v in values):
            lines = "\n  - ".join(grouped({r: _show(entries[r].get(field)) for r in ranks}))
            fix = shape_fix(values) if field == "shape" else ""
            return (
                f"Cannot apply desired operation due to {field} mismatches. "
                f"All {plural} across devices must be valid."
                f"\n\nOperation: `{first['operation']}`\nInput {plural}:\n  - {lines}"
                + sites
                + (f"\n\n{fix}" if fix else "")
            )
    if backend == "nccl" and any("cpu" in json.dumps(entries[r].get("device")) for r in ranks):
        lines = "\n  - ".join(f"Process {r}: {_show(entries[r].get('device'))}" for r in ranks)
        return (
            "Cannot apply desired operation: the NCCL backend only communicates CUDA tensors; move the CPU "
            f"tensors with `.cuda()` first.\n\nOperation: `{first['operation']}`\nInput devices:\n  - {lines}"
            + sites
        )
    return ""


def shape_fix(shapes: list[Any]) -> str:
    """How to fix the common shape mismatches (an uneven last batch, different sequence lengths), or ``""``.

    ``shapes`` holds each rank's ``shape`` field: a shape, or nested lists/dicts of shapes.

    >>> shape_fix([[4, 3], [2, 3]]).splitlines()[0]
    'Fix: the ranks hold different numbers of rows in dimension 0 (4, 2), often an uneven last batch:'
    """
    leaves = [list(_shape_leaves(shape)) for shape in shapes]
    for found in zip(*leaves, strict=False):
        if all(s == found[0] for s in found):
            continue
        if len({len(s) for s in found}) > 1:
            return (
                "Fix: the ranks' tensors have different numbers of dimensions "
                f"({', '.join(str(len(s)) for s in found)}): look at how each rank builds this tensor "
                "(a squeeze() that drops a dimension of size 1 on one rank, a last batch of one sample)."
            )
        dims = [d for d in range(len(found[0])) if len({s[d] for s in found}) > 1]
        if len(dims) != 1:
            return ""
        dim, sizes = dims[0], ", ".join(str(s[dims[0]]) for s in found)
        if dim == 0:
            return (
                f"Fix: the ranks hold different numbers of rows in dimension 0 ({sizes}), often an uneven last "
                "batch:\n"
                "  - pad them to the longest before gathering: `pad_across_processes(tensor, dim=0)`, and drop "
                "the padding after;\n"
                "  - or give every rank the same number of samples: `DataLoader(..., drop_last=True)`, or "
                "accelerate's `even_batches=True` (the default);\n"
                "  - or gather the sizes first (`gather(torch.tensor([len(tensor)]))`), or use `gather_object`."
            )
        return (
            f"Fix: the ranks' tensors differ in dimension {dim} ({sizes}), e.g. sequence lengths: pad them to "
            f"the longest first: `pad_across_processes(tensor, dim={dim}, pad_index=...)`."
        )
    return ""


def _shape_leaves(shape: Any):
    if isinstance(shape, list) and all(isinstance(n, int) for n in shape):
        yield shape
    elif isinstance(shape, list):
        for item in shape:
            yield from _shape_leaves(item)
    elif isinstance(shape, Mapping):
        for key in sorted(shape):
            yield from _shape_leaves(shape[key])


def missing_message(
    store: Any, group_key: str, seq: int, members: list[int], waiting: Mapping[int, dict], wait: float
) -> str:
    """The error text when ranks of ``members`` never reached collective ``seq``: who is waiting where, and,
    asked through the store, where each missing rank is now."""
    missing = [r for r in members if r not in waiting]
    operation = waiting[min(waiting)]["operation"]
    if not missing:  # the last one arrived during the grace period: it reports itself as late
        return (
            f"Collective #{seq} `{operation}`: a process arrived only after the others had waited "
            f"{wait:g} s (TORCHDOCTOR_DEBUG_TIMEOUT); see its own error for where it was."
        )
    lines = [
        f"{who(missing, 'Process', 'Processes')} "
        f"did not reach collective #{seq} within {wait:g} s "
        "(TORCHDOCTOR_DEBUG_TIMEOUT); the others are waiting for them.",
        "",
        f"Operation: `{operation}`",
        "Waiting at it:",
    ]
    lines += [f"  - {line}" for line in grouped({r: e["site"] for r, e in waiting.items()})]
    lines.append("Missing:")
    answers = stacks.ask_all(store, missing[:MISSING_ASKED], f"{group_key}/{seq}")
    for rank in missing[:MISSING_ASKED]:
        answer = answers[rank]
        if answer is None:
            lines.append(
                f"  - Process {rank}: did not say where it is within {stacks.ANSWER_SECONDS:g} s (it died, "
                "runs without debug mode, or is stuck in code that holds the GIL)"
            )
            continue
        last = answer.get("last", {}).get(group_key)
        if last and last[0] == seq - 1:
            lines.append(f"  - Process {rank}: last seen at collective #{last[0]} `{last[1]}` at {last[2]}")
        elif last:
            lines.append(f"  - Process {rank}: last checked collective #{last[0]} `{last[1]}` at {last[2]}")
        else:
            lines.append(f"  - Process {rank}: never reached a checked collective")
        lines.append("    where it is now (innermost call last):")
        lines += ["      " + line for line in answer.get("stack", "").splitlines()]
    if len(missing) > MISSING_ASKED:
        lines.append(f"  - {who(missing[MISSING_ASKED:], 'Process', 'Processes')}: not asked")
    return "\n".join(lines)


def _sites_block(entries: Mapping[int, Mapping[str, Any]]) -> str:
    if not any("site" in entry for entry in entries.values()):
        return ""
    sites = {r: entries[r].get("site", "<unknown>") for r in entries}
    return "\nCalled from:\n  - " + "\n  - ".join(grouped(sites))


def _show(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
