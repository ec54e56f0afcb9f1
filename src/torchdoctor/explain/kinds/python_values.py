"""A tensor used where Python or NumPy wants a plain value, refused by torch's conversions.

Each message is printed by one conversion for one cause, so each is certain:

- NumPy given a tensor autograd still records (``torch/csrc/utils/tensor_numpy.cpp`` tensor_to_numpy: "Can't
  call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."; "... on Variable ..." while
  tensors were Variables): a loss or output logged, plotted or scored with NumPy/scikit-learn;
- a tensor of several values in an ``if``, ``while``, ``and``/``or`` or ``assert`` (``aten/src/ATen/native/
  TensorCompare.cpp`` is_nonzero: "Boolean value of Tensor with more than one value is ambiguous");
- ``float(t)``, ``int(t)`` or ``.item()`` on a tensor of several values (``python_variable_methods.cpp``
  dispatch_to: "only one element tensors can be converted to Python scalars"; ``native/Scalar.cpp`` item: "a
  Tensor with 8 elements cannot be converted to Scalar").
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

R = re.compile


def _grad_numpy(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a tensor autograd still records (requires_grad) was handed to NumPy" + on_ranks(hits),
        "Detach it where it leaves torch, on the line the traceback names: x.detach().cpu().numpy(), or "
        "x.item() for one value (a loss or metric to log). Metrics computed in evaluation can run under "
        "torch.no_grad() (then nothing requires grad); a library converting the tensor itself (scikit-learn, "
        "matplotlib) needs the detached copy passed in.",
    )


GRAD_TENSOR_TO_NUMPY = Recogniser(
    kind="grad_tensor_to_numpy",
    templates=("aten:numpy-on-tensor-that-requires-grad", "aten:numpy-on-variable-that-requires-grad"),
    title="a tensor that requires grad handed to NumPy",
    anchors=(
        "Can't call numpy() on Tensor that requires grad",
        "Can't call numpy() on Variable that requires grad",
    ),
    describe=_grad_numpy,
)


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
    describe=_condition,
)


def _item(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    many = first(hits, "elements")
    told = f" ({many} values)" if many else ""
    return (
        f"float(), int() or .item() was called on a tensor of several values{told}" + on_ranks(hits),
        "Reduce it before it becomes a Python number: loss.mean().item() for a loss left unreduced "
        "(reduction='none', or DataParallel's one loss per GPU), acc.sum().item() for a count; convert a "
        "tensor of values with .tolist() (or .detach().cpu().numpy()) rather than float(); a list of tensors "
        "given to np.array / torch.tensor needs torch.stack first.",
    )


ITEM_OF_MANY_VALUES = Recogniser(
    kind="item_of_many_values",
    templates=(
        "aten:only-one-element-tensors-to-python-scalars",
        "aten:tensor-with-elements-cannot-be-converted-to-scalar",
    ),
    title="a tensor of several values converted to a number",
    anchors=(
        "only one element tensors can be converted to Python scalars",
        " elements cannot be converted to Scalar",
    ),
    facts=(R(r"a Tensor with (?P<elements>\d+) elements cannot be converted to Scalar"),),
    match=R(
        r"only one element tensors can be converted|a Tensor with \d+ elements cannot be converted to Scalar"
    ),
    describe=_item,
)

RECOGNISERS = (GRAD_TENSOR_TO_NUMPY, TENSOR_IN_PYTHON_CONDITION, ITEM_OF_MANY_VALUES)
