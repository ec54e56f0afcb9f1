"""A Python object of the wrong type where the training script expects a tensor, a class or a function.

CPython raises these in a few fixed words, whatever library is around them:

- "'tuple' object has no attribute 'backward'" (``Objects/object.c``, PyObject_GetAttr): ``loss.backward()`` on a
  loss that is a tuple, list, dict, str or a Python number, not a tensor: a loss function returning several values,
  values unpacked in another order than returned, a number taken with ``.item()`` or ``float()`` before
  ``backward``. Only a ``.backward`` on such an object prints it: certain when the traceback shows the script's
  own ``.backward``, likely in a library's loop (``'NoneType'`` is something that returned None, not this).
- "'tuple' object has no attribute 'shape'" (the same function) with a tensor's method or attribute (``shape``,
  ``size``, ``dim``, ``argmax``, ``view``, ...): a model's output tuple used as one tensor, as a metric or a loss
  reads it. A batch that is a tuple prints the same: likely, ``batch_not_tensor`` named.
- "'module' object is not callable" (``Objects/call.c``, _PyObject_MakeTpCall): a module called where the class or
  function inside it was meant (``import Model`` then ``Model(...)`` for ``Model.Model``). Certain when the
  traceback shows the script's own call; a library's call is likely another package's release.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Recogniser,
    called_from_own_code,
    library_call,
    merged,
    on_ranks,
)

FAMILY = "a script's own mistakes"

LOSS_CONTAINER = re.compile(
    r"'(?P<loss_type>tuple|list|dict|str|float|int)' object has no attribute 'backward'"
)
TENSOR_METHODS = (
    "shape|size|dim|ndim|argmax|argmin|view|reshape|squeeze|unsqueeze|permute|float|long|cpu|detach|numpy|"
    "softmax|sigmoid|max|min|mean|sum|item"
)
OUTPUT_TUPLE = re.compile(rf"'tuple' object has no attribute '(?P<tensor_method>{TENSOR_METHODS})'")
MODULE_CALLED = re.compile(r"'module' object is not callable")


def _loss(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    kind = merged(hits).get("loss_type", "tuple")
    return (
        f"backward() was called on a Python {kind}, not a tensor: the loss the training step built is not the "
        "loss tensor" + on_ranks(hits),
        "Call backward() on the tensor: if the loss function returns several values, unpack them in the order it "
        "returns them (loss, *rest = criterion(...)) or make it return the loss alone; do not turn the loss into a "
        "number (.item(), float()) before backward().",
    )


def _output_tuple(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    method = merged(hits).get("tensor_method", "shape")
    return (
        f"the code reads .{method} of a tuple where it expects a tensor: a model that returns several outputs "
        "(logits and more) passed on whole to a loss or a metric" + on_ranks(hits),
        "Unpack the model's output and pass the tensor it is about on: logits, *rest = model(x) (or outputs[0], "
        "outputs.logits); or make forward return one tensor.",
    )


def _module_called(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the script calls a Python module as if it were a class or a function (an import of the module, not of "
        "the name inside it)" + on_ranks(hits),
        "Import the class or function from the module (from models.Model import Model, or call Model.Model(...)); "
        "the line the traceback points at names the module that is called.",
    )


LOSS_NOT_TENSOR = Recogniser(
    kind="loss_not_tensor",
    title="backward() on a tuple or a number instead of the loss tensor",
    templates=("third_party:cpython-object-has-no-attribute-backward",),
    anchors=("' object has no attribute 'backward'",),
    match=LOSS_CONTAINER,
    facts=(LOSS_CONTAINER,),
    # CPython raises it at the .backward() itself, in whichever code holds it: the script's (certain when its
    # traceback shows so), or a library's loop calling backward on what a step or a loss of its returned
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's loop calling backward() on what a training step or a loss function returned (a tuple "
            "where the release it was written for returned the loss)",
            "return the loss tensor from the step it calls (Lightning: the loss, or a dict with 'loss'), or pin the "
            "release of the library whose loss function the code was written for.",
        ),
    ),
    describe=_loss,
)

MODEL_OUTPUT_TUPLE = Recogniser(
    kind="model_output_tuple",
    title="a model's output tuple used as one tensor",
    templates=("third_party:cpython-tuple-has-no-attribute-tensor-method",),
    anchors=("'tuple' object has no attribute '",),
    match=OUTPUT_TUPLE,
    facts=(OUTPUT_TUPLE,),
    confirm=lambda hits, ctx: False,  # a batch that is a tuple prints it too
    also=(
        Alternative(
            "batch_not_tensor",
            "a batch (or an item of it) that is a tuple, not a tensor",
            "Make the dataset return tensors and let the DataLoader stack them, or take the tensor out of the "
            "batch's tuple before using it.",
        ),
    ),
    describe=_output_tuple,
)

MODULE_CALLED_AS_CLASS = Recogniser(
    kind="module_called_as_class",
    title="a module called as if it were its class",
    templates=("third_party:cpython-module-object-not-callable",),
    anchors=("'module' object is not callable",),
    match=MODULE_CALLED,
    # raised at the call, in whichever code makes it: the script's (certain when its traceback shows so), or a
    # library's calling a name that the installed release of another package made a module
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code calling a name that the installed release of another package made a module",
            "install the release of the package it was written for (its requirements pin it), or update the "
            "library to one made for the installed release.",
        ),
    ),
    describe=_module_called,
)

RECOGNISERS = (LOSS_NOT_TENSOR, MODEL_OUTPUT_TUPLE, MODULE_CALLED_AS_CLASS)
