"""DTensor refusing an in-place op whose result would need another placement than the tensor it writes into.

``torch/distributed/tensor/_ops/utils.py``: an in-place op on a DTensor must keep its input's placement; when
no sharding strategy of the op does ("{op}: in-place operations that require placement changes are not
supported. The input has placement {placement}, but no valid strategy preserves this placement ..."), DTensor
refuses it. Under FSDP2 or tensor parallelism the parameters are DTensors sharded as Shard(0): an optimizer or
a custom update that computes its update over the whole matrix (Muon's Newton-Schulz, Shampoo) or as a
replicated tensor and adds it in place is the usual writer. The message names the op and the placement, not
whose code called it (the script's or a library's optimizer): likely, a library's bug named.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = re.compile


def _inplace_placement(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    op = first(hits, "op") or "an in-place op"
    placement = first(hits, "placement")
    where = f" (placed as {placement})" if placement else ""
    return (
        f"{op} would have to change the placement of the DTensor it writes into{where}: DTensor refuses in-place "
        "ops whose result it cannot keep in the input's placement" + on_ranks(hits),
        "Find what writes into a sharded parameter in place (FSDP2's and tensor parallelism's parameters are "
        "DTensors, sharded as Shard(0)): an optimizer step or a custom update that computes its update as a full "
        "or replicated tensor. Give the update the parameter's placement first "
        "(distribute_tensor(update, p.device_mesh, p.placements), or work on p.to_local() and its local shard), "
        "or use the out-of-place form. Optimizers that transform whole matrices (Muon's Newton-Schulz "
        "orthogonalisation, Shampoo) need the full matrix: gather it (p.full_tensor()), update, redistribute; "
        "and keep parameters they cannot shard (1-D, or rank-1 [1, N] heads whose dim 0 is smaller than the "
        "mesh) on AdamW, or train that model with DDP.",
    )


DTENSOR_INPLACE_PLACEMENT = Recogniser(
    kind="dtensor_inplace_placement",
    templates=("torch:in-place-operations-that-require-placement",),
    title="an in-place op on a DTensor that would change its placement",
    anchors=("in-place operations that require placement changes are not supported",),
    match=R(
        r"(?:(?P<op>aten\.[\w.]{1,60}): )?in-place operations that require placement changes are not supported"
        r"(?:[^\n]{0,40}?placement (?P<placement>\((?:[^()\n]|\([^()\n]{0,40}\)){1,80}\)))?"
    ),
    describe=_inplace_placement,
    **OPERATOR_REFUSAL,
)

RECOGNISERS = (DTENSOR_INPLACE_PLACEMENT,)
