"""What a gather, reduce or broadcast was handed that it cannot carry: shapes that differ between ranks, or no tensors.

accelerate's ``verify_operation`` (``accelerate/utils/operations.py``, 0.22+, only with ``ACCELERATE_DEBUG_MODE``)
wraps ``gather``, ``broadcast`` and ``reduce``: every rank first sends its tensor's shape through one
``gather_object`` and raises "Cannot apply desired operation due to shape mismatches" when the shapes differ.
Every rank has joined that same exchange, so this is not a rank that skipped a collective: each rank's tensor
differs (sequences of different lengths, generated outputs, a last batch split unevenly). The exchange carries
shapes only, not the operation: a rank in ``gather`` and another in ``reduce`` print the same line, so the line
alone stays likely, ranks that ran different collectives named. Two ranks naming the same operation, or
torchdoctor's own debug mode (``torchdoctor/distributed/messages.py`` compares the operation first and adds the
call sites, "Called from:"), rule that reading out.

The same operations refuse what is not a tensor (``recursively_apply``: "Unsupported types (<class 'str'>) passed to
`_gpu_gather_one`"), and ``gather_for_metrics`` handed a tuple with an object in it falls back to ``gather_object``,
whose flat list of every rank's items a ``preds, refs = ...`` then fails to unpack (CPython's "too many values to
unpack"): both are a metric's names or numbers gathered as they are (found with accelerate's nlp_example
evaluation loop on 2 gloo ranks, predictions turned into label names before the gather).
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _same_operation_twice(hits: list[Hit], ctx: Context) -> bool:
    if any("call_sites" in h.facts for h in hits):
        return True
    operations = [h.facts["gather_operation"] for h in hits if "gather_operation" in h.facts]
    return len(operations) > len(set(operations))


# torch's functional collectives are what DTensor and the tensor-parallel styles call inside a model's forward
_FUNCTIONAL = "torch.distributed._functional_collectives."
TP_SAME_INPUT = (
    "A tensor-parallel layer (ColwiseParallel, RowwiseParallel, a DTensor op) makes its collective on each rank's "
    "own piece of the same activations, so every rank of a tensor-parallel group must be given the same input "
    "batch: load the same batch on the ranks of one TP group (the same seed or the same data order), shard the "
    "data over the data-parallel mesh dimension only (no DistributedSampler over the TP ranks), and keep every "
    "batch the same size (DataLoader(..., drop_last=True))."
)


# the collectives whose every rank's tensor is combined element by element or overwritten by the source's: the
# shapes must match, and a gather's padding is no fix (accelerate's ``reduce`` and ``broadcast``, torch's own, as
# torchdoctor's debug mode names them: ``torch.distributed.all_reduce``)
_SAME_SHAPE = re.compile(r"(?:^|\.)(?P<name>all_reduce|reduce|broadcast|reduce_scatter\w*)$")


def _same_shape_fix(name: str) -> str:
    if name == "broadcast":
        return (
            "broadcast copies the source rank's tensor into the tensor every other rank passed, so each rank "
            "must pass one of the source's shape: allocate the receiving tensor from the source's shape (send "
            "the shape first, e.g. dist.broadcast_object_list([t.shape], src=0)), or broadcast a Python object "
            "(broadcast_object_list) instead."
        )
    return (
        f"{name} combines the ranks' tensors element by element, so every rank must pass the same shape; a "
        "tensor whose size follows the rank's data (a batch, an uneven last batch, a per-rank list of values) "
        "cannot be reduced. Reduce a statistic of fixed shape instead (a sum and a count: "
        "torch.stack([loss.sum(), torch.tensor(float(len(batch)))])), or give every rank the same number of "
        "samples (DataLoader(..., drop_last=True), accelerate's even_batches=True); to collect values of "
        "different sizes, gather them (pad first) rather than reduce them."
    )


def _describe(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    operation = first(hits, "gather_operation", "a gather")
    shapes = first(hits, "gather_shapes")
    summary = f"the ranks handed tensors of different shapes to {operation}" + on_ranks(hits)
    same_shape = _SAME_SHAPE.search(operation)
    if same_shape:
        name = same_shape["name"]
        called = name if name == operation else f"{name} ({operation})"
        summary = f"the ranks handed tensors of different shapes to {called}" + on_ranks(hits)
        if shapes:
            summary += " (" + ", ".join(line.strip(" -") for line in shapes.splitlines()) + ")"
        return summary + f": {name} is not a gather, every rank's shape must be the same", _same_shape_fix(
            name
        )
    if shapes:
        summary += " (" + ", ".join(line.strip(" -") for line in shapes.splitlines()) + ")"
    if operation.startswith(_FUNCTIONAL):
        # found with pytorch/examples' tensor_parallel_example.py, rank 1 given a batch of 16 rows, rank 0 of 20:
        # the fix was accelerate's padding of a gather, for a collective inside a RowwiseParallel layer
        summary += ": a collective inside a tensor-parallel (DTensor) layer, so the ranks were given different inputs"
        return summary, TP_SAME_INPUT
    return summary, (
        "Each rank's tensor has its own shape (sequences padded to each batch's own longest, generated outputs "
        "of different lengths, a last batch split unevenly), and a gather concatenates them only when they "
        "match. Before gathering, pad them to one size across the ranks: "
        "accelerator.pad_across_processes(t, dim=1, pad_index=tokenizer.pad_token_id) for token ids (dim 0 for "
        "a batch of a different size), then accelerator.gather_for_metrics(t) (it also drops the samples the "
        "last batch repeated); or gather them as Python objects without padding: "
        "accelerator.gather_for_metrics(t, use_gather_object=True) (accelerate 0.30+). A reduce or broadcast "
        "needs the same shape on every rank: build the tensor from sizes that do not depend on the rank's data."
    )


GATHERED_SHAPES_DIFFER = Recogniser(
    # accelerate/utils/operations.py verify_operation; torchdoctor/distributed/messages.py mismatch_message
    kind="gathered_shapes_differ",
    templates=("accelerate:cannot-apply-desired-operation-due-to",),
    title="tensors of different shapes on the ranks, in one collective",
    anchors=("Cannot apply desired operation due to shape mismatches",),
    span=12,
    facts=(
        R(r"Operation: `(?P<gather_operation>[\w.]{1,120})`"),
        R(
            r"Input shapes:\s*(?P<gather_shapes>- Process \d+: [^\n]{1,80}(?:\s*- Process \d+: [^\n]{1,80}){0,3})"
        ),
        R(r"\n(?P<call_sites>Called from:)\n"),
    ),
    confirm=_same_operation_twice,
    also=(
        Alternative(
            "rank_divergence",
            "ranks that reached different collectives (accelerate compares only the shapes, not the operation)",
            "Check that every rank calls the same gather / reduce / broadcast in the same order: a branch on the "
            "rank or on each rank's data (an early stop, a metric on the main process only) makes one rank's "
            "gather meet another's reduce; torchdoctor launch --debug names each rank's operation and line.",
            # torchdoctor's debug mode compares the operation first and names the call sites
            unless=("call_sites",),
        ),
    ),
    describe=_describe,
)

# accelerate/utils/operations.py recursively_apply (gather, reduce, broadcast, pad_across_processes): "Unsupported types
# (<class 'str'>) passed to `_gpu_gather_one`. Only nested list/tuple/dicts of objects that are valid for
# `is_torch_tensor` should be passed."
_NOT_TENSORS = "Only nested list/tuple/dicts of objects that are valid for"
_TO_TENSORS = (
    "accelerate's gather, reduce and broadcast carry tensors only (in lists, tuples and dicts). Gather what the "
    "metric needs as a tensor on the device, class ids rather than their names (torch.tensor(ids, "
    "device=accelerator.device)), and turn ids into names after the gather; for Python objects themselves (strings, "
    "records) call accelerate.utils.gather_object(obj), or gather_for_metrics(obj, use_gather_object=True), on "
    "that object alone: it returns every rank's items in one flat list."
)


def _not_tensors(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    types, function = first(hits, "gather_types", "an object"), first(hits, "gather_function", "")
    # its private helpers (_gpu_gather_one, _gpu_broadcast_one, ...) by the operation the script called
    operation = next((op for op in ("gather", "broadcast", "reduce", "pad") if op in function), "gather")
    operation = "pad_across_processes" if operation == "pad" else operation
    return f"accelerate's {operation} was handed {types}, not a tensor" + on_ranks(hits), _TO_TENSORS


# the same refusal as accelerate 0.10.0 to 0.18.0 worded it (recursively_apply; 0.19.0 rewords it as above): "Can't
# apply _gpu_gather_one on object of type <class 'int'>, only of nested list/tuple/dicts of objects that satisfy
# is_torch_tensor."
_NOT_TENSORS_OLD = "only of nested list/tuple/dicts of objects that satisfy"

GATHER_NOT_TENSORS = Recogniser(
    kind="gather_not_tensors",
    title="a gather handed objects that are not tensors",
    templates=(
        "accelerate:unsupported-types-passed-to-only-nested",
        "third_party:accelerate-cant-apply-only-nested",
    ),
    anchors=(_NOT_TENSORS, _NOT_TENSORS_OLD),
    facts=(
        R(
            r"Unsupported types \((?P<gather_types>[^)\n]{1,200}\)?)\) passed to `(?P<gather_function>\w{1,60})`"
        ),
        R(
            r"Can't apply (?P<gather_function>\w{1,60}) on object of type (?P<gather_types><class '[^'\n]{1,120}'>)"
        ),
    ),
    describe=_not_tensors,
)

RECOGNISERS = (GATHERED_SHAPES_DIFFER, GATHER_NOT_TENSORS)

_UNPACK = re.compile(r"too many values to unpack \(expected (?P<names>\d+)")
_OBJECT_GATHER = re.compile(r"\b(?:gather_for_metrics|gather_object)\(")


def flattened_objects(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) when ``raised`` is CPython's unpacking of what accelerate's gather_for_metrics (or
    gather_object) returned into names, which fails because an object that is not a tensor made it gather Python
    objects: their result is every rank's items in one flat list, not one gathered value per name; else None."""
    found = _UNPACK.search(raised.message)
    if raised.type != "ValueError" or found is None or not _OBJECT_GATHER.search(raised.code):
        return None
    names = found["names"]
    return (
        f"accelerate gathered Python objects, not tensors, and its result could not be unpacked into {names} names: "
        "something handed to gather_for_metrics is not a tensor (a list of strings or numbers), so it gathered every "
        f"rank's items into one flat list ({names} per rank, one after the other), not {names} gathered values",
        "gather_for_metrics gathers tensors when everything it is handed is a tensor, and otherwise falls back to "
        "gather_object, which concatenates the ranks' objects (for a tuple: its items from rank 0, then rank 1's, "
        "...). Hand it tensors only, or gather each value on its own and unpack nothing: preds = "
        "accelerator.gather_for_metrics(preds); refs = accelerator.gather_for_metrics(refs).\n" + _TO_TENSORS,
    )


# accelerate 0.10.0 to 0.18.0's honor_type (utils/operations.py) rebuilt a tuple or list from a generator inside
# `try: type(obj)(generator) except TypeError: type(obj)(*list(generator))` (the fallback meant for namedtuples), so
# the TypeError recursively_apply raised for an item that is not a tensor was swallowed, and the generator it had
# stopped gave nothing: gather, reduce, broadcast or pad_across_processes of ``(tensor, 1)`` returned ``()``, and the
# names it was unpacked into got none ("not enough values to unpack (expected 2, got 0)", huggingface/accelerate#1263;
# 0.19.0, #1285, checks for a namedtuple instead and lets the TypeError through)
_EMPTIED = re.compile(r"not enough values to unpack \(expected (?P<names>\d+), got 0\)")
_ACCELERATE_OPERATION = re.compile(
    r"\b(?:accelerator|accelerate\.utils)\.(?P<operation>gather_for_metrics|gather|reduce|broadcast|pad_across_processes)\("
)


def emptied_by_old_accelerate(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) when ``raised`` is CPython's unpacking, on a line that calls accelerate's gather (or reduce,
    broadcast, pad_across_processes), of an empty result into names: an accelerate before 0.19.0 handed a tuple or
    list with something that is not a tensor in it returns it empty; else None. Ranks printing at once can double
    the exception's name ("ValueErrorValueError")."""
    found = _EMPTIED.search(raised.message)
    operation = _ACCELERATE_OPERATION.search(raised.code)
    if found is None or operation is None or not re.fullmatch(r"(?:ValueError)+", raised.type):
        return None
    names, called = found["names"], operation["operation"]
    return (
        f"accelerate's {called} returned nothing to unpack into {names} names: it was handed a tuple or list with "
        "something in it that is not a tensor (a number, a string), and accelerate before 0.19.0 drops that "
        "TypeError and returns the tuple empty",
        f"accelerate's {called} carries tensors only (in lists, tuples and dicts), and accelerate 0.10 to 0.18 "
        "returns an empty tuple or list when one item is not a tensor instead of saying so (0.19.0 raises "
        "\"Unsupported types (<class 'int'>) passed to `_gpu_gather_one`\"). Make every item a tensor on the device "
        "(torch.tensor(value, device=accelerator.device)), or gather the tensors alone and keep plain numbers "
        "out of it; upgrade accelerate (pip install -U accelerate) to have the type named.\n" + _TO_TENSORS,
    )
