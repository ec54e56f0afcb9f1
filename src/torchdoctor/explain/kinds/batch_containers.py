"""``.to(device)`` called on a Python container where the code expects a tensor.

CPython raises "'tuple' object has no attribute 'to'" (``Objects/object.c``, PyObject_GetAttr) when the training
loop moves a batch item that is a tuple, list, dict or str: a dataset returning its target as a tuple, a collate
function leaving a list, a batch that carries strings (a task name, a file path) beside its tensors. Only a
``.to`` on such an object prints it: certain when the traceback shows the script's own ``.to``, likely otherwise (a
library's loop). (``'NoneType' object has no attribute 'to'`` is something that returned None, not this.)
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import (
    Context,
    Hit,
    Recogniser,
    called_from_own_code,
    library_call,
    merged,
    on_ranks,
)

FAMILY = "a script's own mistakes"

CONTAINER = re.compile(r"'(?P<container>tuple|list|dict|str)' object has no attribute 'to'")


def _container(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    kind = merged(hits).get("container", "tuple")
    return (
        f"the code calls .to(device) on a Python {kind}, not a tensor: an item of the batch (or the batch itself) "
        "is a container the DataLoader passed through" + on_ranks(hits),
        "Move the tensors inside it, where the traceback points: x = [t.to(device) for t in x] for a tuple or "
        "list, {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()} for a dict with strings "
        "or other non-tensor fields (a task name, a path); or make the dataset return tensors (torch.tensor(target) "
        "rather than a tuple) and give the DataLoader a collate_fn that stacks them.",
    )


BATCH_NOT_TENSOR = Recogniser(
    kind="batch_not_tensor",
    title=".to(device) on a tuple, list or dict instead of a tensor",
    templates=("third_party:cpython-container-has-no-attribute-to",),
    anchors=("' object has no attribute 'to'",),
    match=CONTAINER,
    facts=(CONTAINER,),
    # CPython raises it at the .to() itself, in whichever code holds it: the script's loop (certain when its
    # traceback shows so), or a library's loop handed batches of another shape than it takes
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's training loop calling .to() on a batch item of another shape than it takes",
            "make the dataset return what the library documents (a dict of tensors, its own batch type), or "
            "update the library if its own collate leaves the container.",
        ),
    ),
    describe=_container,
)

RECOGNISERS = (BATCH_NOT_TENSOR,)
