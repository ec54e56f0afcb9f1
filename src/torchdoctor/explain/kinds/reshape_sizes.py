"""A ``view``/``reshape`` to a size written into the code that the tensor's element count does not fit.

``aten/src/ATen/InferSize.h`` infer_size_impl (``native/TensorShape.cpp`` before 1.0) checks that the shape asked
for holds exactly the tensor's elements, or divides them where one dimension is -1, and else raises "shape '[1000,
1024, 1]' is invalid for input of size 8192000". The shape is the code's; the size is the data's. Most often a
number baked into the script, the model or its config (a batch size, a resolution, a flattened feature count)
differs from what the loader delivers: the sizes printed tell which dimension, and the fix is written with them.
An operator's refusal like the others (tensor_misuse.py's ``OPERATOR_REFUSAL``): a library's own reshape prints
the same for values its release built, so the reading is likely, that one named.
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

RECOGNISERS = (HARDCODED_SHAPE,)
