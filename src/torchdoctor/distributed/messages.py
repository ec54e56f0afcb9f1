"""The words of debug mode's errors: which ranks disagree on what, and how to fix it; who never arrived.

`torchdoctor.distributed.debug` decides that something is wrong; this module says it, in accelerate's wording
where accelerate has one, with each rank's call site, three or more consecutive ranks in one line.
"""

from __future__ import annotations

import json
import re
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
    "dimension": "dimensions",  # a functional all-gather's or reduce-scatter's (torchdoctor.distributed.functional)
    "split sizes": "split sizes",
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
            + _conditions_at(entries)  # the condition that sent a rank its own way, when the source shows one
        )
    for field, plural in FIELDS.items():
        values = [entries[r].get(field) for r in ranks]
        if any(v != values[0] for v in values):
            lines = "\n  - ".join(grouped({r: _show(entries[r].get(field)) for r in ranks}))
            fix = shape_fix(values, first["operation"]) if field == "shape" else ""
            fix = dtype_fix(values) if field == "dtype" else fix
            return (
                f"Cannot apply desired operation due to {field} mismatches. "
                f"All {plural} across devices must be valid."
                f"\n\nOperation: `{first['operation']}`\nInput {plural}:\n  - {lines}"
                + sites
                + (f"\n\n{fix}" if fix else "")
            )
    called_from = {r: entries[r].get("site") for r in ranks}
    if len(set(called_from.values())) > 1 and all(called_from.values()):
        return (
            f"Cannot apply desired operation: the processes called `{first['operation']}` from different lines. "
            "All processes must call the same collectives in the same order, and a call from another line "
            "usually means a rank took another path (a condition on the rank, a loop that ran a different "
            "number of times); if these lines are meant to pair up, call the collective from one line after "
            "the branch." + _sites_block(entries) + _conditions_at(entries)
        )
    if backend == "nccl" and any("cpu" in json.dumps(entries[r].get("device")) for r in ranks):
        lines = "\n  - ".join(f"Process {r}: {_show(entries[r].get('device'))}" for r in ranks)
        return (
            "Cannot apply desired operation: the NCCL backend only communicates CUDA tensors; move the CPU "
            f"tensors with `.cuda()` first.\n\nOperation: `{first['operation']}`\nInput devices:\n  - {lines}"
            + sites
        )
    return ""


def dtype_fix(dtypes: list[Any]) -> str:
    """The fix for ranks whose tensors (or nested tensors) have different dtypes, one per rank in ``dtypes``.

    >>> dtype_fix(["torch.float32", "torch.float64"])[:80]
    "Fix: the ranks' tensors have different dtypes (torch.float32, torch.float64): a "
    """
    seen = list(dict.fromkeys(leaf for value in dtypes for leaf in _leaves(value)))
    if len(seen) < 2:
        return ""
    return (
        f"Fix: the ranks' tensors have different dtypes ({', '.join(seen)}): a collective sends raw bytes, so "
        f"every rank must pass the same dtype. Cast to one dtype on every rank before the call (e.g. "
        f"`.to({seen[0]})`), and look at where one rank's dtype came from (a `.double()`, a NumPy float64 array "
        "through `torch.from_numpy`, integer values where the others hold floats, autocast on one rank only)."
    )


def _leaves(value: Any):
    """The strings of a nested dtype description (a dict, list or tuple of them), in order."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield str(value)


GATHERS = ("gather", "pad_across_processes")  # operations whose fix is to pad or gather objects


def shape_fix(shapes: list[Any], operation: str = "gather") -> str:
    """How to fix the common shape mismatches (an uneven last batch, different sequence lengths), or ``""``.

    ``shapes`` holds each rank's ``shape`` field: a shape, or nested lists/dicts of shapes; ``operation``
    (its name) picks the advice that fits: padding and ``gather_object`` for a gather, the same shape on every
    rank for a reduction or a broadcast.

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
        if not any(name in operation for name in GATHERS):
            return _same_shape_fix(operation, dim, sizes)
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


def _same_shape_fix(operation: str, dim: int, sizes: str) -> str:
    name = operation.rsplit(".", 1)[-1]
    where = f"in dimension {dim} ({sizes})"
    if "broadcast" in name:
        return (
            f"Fix: the ranks' tensors differ {where}: `{name}` copies the source rank's tensor into a tensor of "
            "the same shape on every other rank. Allocate the receiving tensors with the source's shape (send "
            "the shape first, e.g. with `broadcast_object_list`), or broadcast a Python object instead."
        )
    if operation.startswith("torch.distributed._functional_collectives."):
        # made by DTensor or a tensor-parallel style inside the model: not a statistic the script reduces
        return (
            f"Fix: the ranks' tensors differ {where}: `{name}` runs inside a tensor-parallel (DTensor) layer, on "
            "each rank's piece of the same activations, so the ranks were given different inputs. Give every rank "
            "of a tensor-parallel group the same batch (the same seed or data order; shard the data over the "
            "data-parallel mesh dimension only, no DistributedSampler over the TP ranks), every batch the same "
            "size (`DataLoader(..., drop_last=True)`)."
        )
    what = "rows, often an uneven last batch" if dim == 0 else "sizes"
    return (
        f"Fix: the ranks' tensors differ {where} ({what}): `{name}` combines the ranks' tensors element by "
        "element, so every rank must pass the same shape. Reduce a statistic of fixed shape instead of the "
        "batch itself (a sum and a count: `torch.stack([loss.sum(), torch.tensor(float(len(batch)))])`), or "
        "give every rank the same number of samples (`DataLoader(..., drop_last=True)`, accelerate's "
        "`even_batches=True`)."
    )


def divergence_message(
    group_key: str, seq: int, entries: Mapping[int, Mapping[str, Any] | None], blocked: Mapping[int, Any]
) -> str:
    """The error when the ranks' running fingerprints first differ at collective ``seq`` of a process group.

    ``entries`` holds each rank's call there (None: it has not made one); ``blocked`` where a rank without
    one is blocked instead (``[group key, seq]``), or None.
    """
    group = group_words(group_key)
    made = {r: e for r, e in entries.items() if e is not None}
    absent = sorted(r for r, e in entries.items() if e is None)
    head = (
        f"The ranks diverged at collective #{seq} of {group}: debug mode compared their running fingerprints "
        "(operation, shapes, dtypes, call site of every collective) and they first differ there."
    )
    if absent:
        lines = [head, "", f"Collective #{seq}:"]
        lines += [
            f"  - Process {r}: `{e['operation']}` at {e.get('site', '<unknown>')}" for r, e in made.items()
        ]
        for r in absent:
            where = blocked.get(r)
            if where:
                lines.append(
                    f"  - Process {r}: has not reached it; it is blocked in collective #{where[1]} of "
                    f"{group_words(where[0])}"
                )
            else:
                lines.append(f"  - Process {r}: has not reached it (it did not hand over its calls)")
        if any(blocked.get(r) for r in absent):
            lines += [
                "",
                "Each rank waits inside a collective the other has not reached: an order swap across process "
                "groups, a deadlock no call will end. Fix: call the collectives of different groups in the same "
                "order on every rank.",
            ]
        return "\n".join(lines)
    text = mismatch_message(made)
    if not text:
        text = "Cannot apply desired operation: the processes made different calls at the same point." + (
            _sites_block(made)
        )
    return head + "\n\n" + text + _conditions_at(made)


_SITE = re.compile(r"^(?P<file>.+?):(?P<line>\d+) in ")


def _conditions_at(entries: Mapping[int, Mapping[str, Any]]) -> str:
    """A line for each call site of ``entries`` that sits under a condition on the rank (``if
    state.is_world_process_zero: dist.barrier()`` in a Trainer callback: found for session 31, where the message
    named both calls but not the condition that sent one rank alone to its own); "" when none does."""
    from torchdoctor.hang.source import rank_condition

    lines = []
    for site in dict.fromkeys(str(e.get("site", "")) for e in entries.values()):
        found = _SITE.match(site)
        condition = rank_condition(found["file"], int(found["line"])) if found else None
        if condition:
            lines.append(
                f"{found['file']}:{found['line']} sits under a condition on the rank, {condition}: every rank "
                "must make the same collective calls."
            )
    return "".join("\n" + line for line in lines)


def group_words(group_key: str) -> str:
    """How an error names a process group from its key (``world``, ``0-1``, ``0-1@3``).

    >>> group_words("0-1@3")
    'the process group 3 (ranks 0-1)'
    """
    if group_key == "world":
        return "the world group"
    ranks, _, name = group_key.partition("@")
    return f"the process group {name} (ranks {ranks})" if name else f"the process group of ranks {ranks}"


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
        if _IN_BACKWARD.search(answer.get("stack", "")):
            lines.append(f"    {IN_BACKWARD}")
    if len(missing) > MISSING_ASKED:
        lines.append(f"  - {who(missing[MISSING_ASKED:], 'Process', 'Processes')}: not asked")
    return "\n".join(lines)


# torch/_tensor.py backward -> torch/autograd/graph.py _engine_run_backward: the rank is inside backward()
_IN_BACKWARD = re.compile(
    r"torch[/\\]autograd[/\\](?:graph|__init__)\.py\", line \d+, in (?:_engine_run_backward|backward)"
)
# found with a DDP loop one rank ran once more than the other, under launch --debug: the message showed the
# stack in backward() and said nothing of the collective there, which debug mode does not check
IN_BACKWARD = (
    "it is in backward(): a model wrapped in DistributedDataParallel all-reduces its gradients there, a collective "
    "debug mode does not check, so this rank ran more backward passes (steps) than the ranks waiting here."
)


def _sites_block(entries: Mapping[int, Mapping[str, Any]]) -> str:
    if not any("site" in entry for entry in entries.values()):
        return ""
    sites = {r: entries[r].get("site", "<unknown>") for r in entries}
    return "\nCalled from:\n  - " + "\n  - ".join(grouped(sites))


def _show(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
