"""A tensor of several values used as a Python truth value (``if tensor:``).

A tensor of several values used as a Python truth value, refused by torch's conversion (``aten/src/ATen/
native/TensorCompare.cpp`` is_nonzero: "Boolean value of Tensor with more than one value is ambiguous"): certain
when the traceback shows the condition in the script's own code, likely otherwise (a library's condition). (NumPy given a tensor that requires grad, and a tensor of several values made a
number, are `tensor_misuse`'s `numpy_requires_grad` and `item_non_scalar`.)
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import (
    Context,
    Hit,
    Pattern,
    Recogniser,
    called_from_own_code,
    library_call,
    on_ranks,
)

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _condition(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a tensor of several values was used as a Python truth value (an if, while, and/or, assert or "
        "bool())" + on_ranks(hits),
        "Say which truth is meant on the line the traceback names: (mask).any() or .all() for a comparison of "
        "tensors, torch.equal(a, b) for equality of whole tensors, x.item() when x should hold one value (a "
        "loss that is not reduced: use loss.mean()); element-wise choices need torch.where(cond, a, b), and "
        "`a and b` on tensors is `a & b`.",
    )


TENSOR_IN_PYTHON_CONDITION = Recogniser(
    kind="tensor_in_python_condition",
    templates=("aten:boolean-value-of-tensor-more-than-one-value",),
    title="a tensor of several values in a Python condition",
    anchors=("Boolean value of Tensor with more than one value is ambiguous",),
    # raised at the condition itself, in whichever code holds it: the script's (certain when its traceback shows
    # so), or a library's given a tensor where it takes a number or a flag (torch's own functional.py checks
    # on an argument count as the script's: the argument is the script's)
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's condition on a tensor it was handed where it takes a number or a flag",
            "pass it a Python number (x.item()) or the value it documents, or update the library if its own "
            "code builds that tensor.",
        ),
    ),
    describe=_condition,
)


RECOGNISERS = (TENSOR_IN_PYTHON_CONDITION,)
