"""A ``view``/``reshape`` to a size written into the code that the tensor's element count does not fit.

``aten/src/ATen/InferSize.h`` infer_size_impl (``native/TensorShape.cpp`` before 1.0) checks that the shape asked
for holds exactly the tensor's elements, or divides them where one dimension is -1, and else raises "shape '[1000,
1024, 1]' is invalid for input of size 8192000". The shape is the code's; the size is the data's. Most often a
number baked into the script, the model or its config (a batch size, a resolution, a flattened feature count)
differs from what the loader delivers: the sizes printed tell which dimension, and the fix is written with them.
An operator's refusal like the others (tensor_misuse.py's ``OPERATOR_REFUSAL``): a library's own reshape prints
the same for values its release built, so the reading is likely, that one named.

Its sibling for an assignment: ``x[idx] = value`` (index_put_) checks that the value broadcasts to the region the
index selects (``aten/src/ATen/native/TensorAdvancedIndexing.cpp`` make_index_put_iterator: "shape mismatch: value
tensor of shape [31564, 128] cannot be broadcast to indexing result of shape [128, 31564]"). Where the two shapes
hold the same sizes in another order, the value is laid out transposed: advanced indices that a slice separates, or
that follow one (``x[:, i, j] = v``), put the region's dimensions in an order the code did not expect.
"""

from __future__ import annotations

import math
import re

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

_INVALID = re.compile(
    r"shape '\[(?P<reshape_to>-?\d+(?:, ?-?\d+){0,11})\]' is invalid for input of size (?P<numel>\d+)"
)


def _which(shape: list[int], numel: int) -> str:
    """What the sizes say: the first dimension (a batch size) or the rest (a per-sample size) disagree; both
    when the numbers fit either."""
    rest = math.prod(d for d in shape[1:] if d != -1)
    readings = []
    if shape[0] > 0 and -1 not in shape[1:] and rest and numel % rest == 0:
        readings.append(
            f"the tensor holds {numel // rest} rows of {rest} where the code asks for {shape[0]} (a batch size "
            "baked into the code: a last, smaller batch, another loader's batch size, a batch split over GPUs)"
        )
    per_sample = numel // shape[0] if shape[0] > 0 and numel % shape[0] == 0 else 0
    if per_sample and rest and per_sample % rest == 0 and per_sample != rest:
        readings.append(
            f"each of the {shape[0]} samples holds {per_sample} values where the code asks for {rest} (the data "
            f"has {per_sample // rest} times the resolution or features the code was set for)"
        )
    if readings:
        return "; or ".join(readings)
    if -1 in shape and rest:
        return f"{numel} is not a multiple of {rest}, the product of the sizes written in"
    return f"{numel} values cannot be laid out as {shape}"


def _explain(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    shape = [int(d) for d in first(hits, "reshape_to").split(",")]
    numel = int(first(hits, "numel"))
    return (
        f"a view/reshape to {shape} of a tensor of {numel} elements: {_which(shape, numel)}" + on_ranks(hits),
        "Derive the sizes on the line the traceback names from the tensor itself instead of writing them in: "
        "x.view(x.size(0), -1) or x.reshape(batch, -1), not a batch size or feature count from the config. A "
        "batch size baked in fails on the last batch (drop_last=True in the DataLoader, or use x.size(0)); a "
        "resolution or length set in the config must be the data's: subsample the data to it (x[:, ::k]) or set "
        "it to what the files hold.",
    )


HARDCODED_SHAPE = Recogniser(
    kind="hardcoded_shape",
    templates=("aten:shape-invalid-for-input-of-size",),
    title="a reshape to a size written into the code that the data does not fit",
    anchors=("' is invalid for input of size ",),
    match=_INVALID,
    describe=_explain,
    **OPERATOR_REFUSAL,
)

_INDEX_PUT = re.compile(
    r"value tensor of shape \[(?P<value_shape>[\d, ]{0,80})\] cannot be broadcast to indexing result of shape "
    r"\[(?P<region_shape>[\d, ]{0,80})\]"
)


def _index_put(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    value, region = first(hits, "value_shape", ""), first(hits, "region_shape", "")
    sizes = [sorted(int(d) for d in shape.split(",") if d.strip()) for shape in (value, region)]
    summary = f"an assignment into an indexed region of shape [{region}] was given a value of shape [{value}]"
    fix = (
        "On the line the traceback names (x[index] = value), make the value the shape of the region the index "
        f"selects, [{region}]: print x[index].shape and value.shape, and reshape, slice or broadcast the value to it "
        "(value.view(...), value.expand(...)); or fix the index when the region is the wrong one (a mask or index "
        "list of another length than the value's rows)."
    )
    if sizes[0] == sizes[1] and value.replace(" ", "") != region.replace(" ", ""):
        summary += ": the same sizes in another order, a transposed value"
        fix = (
            f"The value holds the region's sizes in another order: transpose or permute it to [{region}] "
            "(value.t(), value.permute(...)). Advanced indices after a slice, or separated by one (x[:, i, j] = v), "
            "select a region whose indexed dimension is not where the code expects it (numpy's indexing rule, "
            "which torch follows).\n" + fix
        )
    return summary + on_ranks(hits), fix


INDEX_ASSIGN_SHAPE = Recogniser(
    kind="index_assign_shape",
    templates=("aten:index-put-value-cannot-be-broadcast",),
    title="a value assigned into an indexed region of another shape",
    anchors=(" cannot be broadcast to indexing result of shape ",),
    match=_INDEX_PUT,
    facts=(_INDEX_PUT,),
    describe=_index_put,
    **OPERATOR_REFUSAL,
)

RECOGNISERS = (HARDCODED_SHAPE, INDEX_ASSIGN_SHAPE)
