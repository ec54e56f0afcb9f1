"""``.to(device)`` called on a Python container where the code expects a tensor.

CPython raises "'tuple' object has no attribute 'to'" (``Objects/object.c``, PyObject_GetAttr) when the training
loop moves a batch item that is a tuple, list, dict or str: a dataset returning its target as a tuple, a collate
function leaving a list, a batch that carries strings (a task name, a file path) beside its tensors. Only a
``.to`` on such an object prints it: certain when the traceback shows the script's own ``.to``, likely otherwise (a
library's loop). (``'NoneType' object has no attribute 'to'`` is something that returned None, not this.)

The message names any container, but only a ``'list'`` was seen on a labelled log (a batch field of strings the
default collate leaves as a list); the threads posting the others find other things in them (a tuple most often
string labels a custom collate's ``zip(*batch)`` left, or a pair not unpacked; a dict, a sample's fields; a str, a
path or a label name), so those stay likely, what each usually is named, as default_collate's ``found <class X>``
does (``dataloader_options``).
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

# what each container usually is where a batch's item is one, as the threads posting it found
USUALLY = {
    "list": "a batch field of strings or of unequal lengths, which the default collate leaves as a list",
    "tuple": "most often string labels a custom collate's zip(*batch) left as a tuple, or an (input, target) "
    "pair that was not unpacked",
    "dict": "a sample's fields (a tokenizer's output or a dataset row as a plain dict)",
    "str": "a text field: a file path, a label name or a task string",
}


def _seen_filler(hits: list[Hit], ctx: Context) -> bool:
    """Certain only for the container a labelled log showed ('list'), from the script's own call; the others
    (tuple, dict, str) are likely: each is usually something else (USUALLY)."""
    return merged(hits).get("container") == "list" and called_from_own_code("torch")(hits, ctx)


def _container(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    kind = merged(hits).get("container", "tuple")
    return (
        f"the code calls .to(device) on a Python {kind}, not a tensor: an item of the batch (or the batch itself) "
        f"is a container the DataLoader passed through, {USUALLY.get(kind, USUALLY['tuple'])}"
        + on_ranks(hits),
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
    # traceback shows so, for the list real logs showed), or a library's loop handed batches of another shape
    confirm=_seen_filler,
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
