"""A NaN gradient through ``torch.where`` from the branch it did not select.

``torch.where(cond, a, b)`` picks values in the forward pass, but its backward node (``WhereBackward0`` from
torch 1.10, ``SWhereBackward`` before: ``tools/autograd/derivatives.yaml``, printed in a tensor's repr as
``grad_fn=<...>``) hands the unselected branch a zero gradient, and that branch's own backward multiplies it by
its derivative: where the derivative is inf or NaN (``x / 0``, ``log(0)``, ``sqrt(0)``, ``exp`` overflowing,
``cos(inf)``), 0 * inf is NaN and reaches the input. PyTorch documents it (the MaskedTensor tutorial
"Distinguishing between 0 and NaN gradient", pytorch/pytorch issue 10729): autograd does not tell a gradient that
is not there from one that is zero.

No message is printed, only the values: a tensor whose ``grad_fn`` is where's backward beside a printed gradient
holding ``nan``. A NaN coming from elsewhere prints the same, so this is only ever likely.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_WHERE_NODE = R(r"grad_fn=<(?P<where_node>S?WhereBackward\d?)>")
# a printed tensor holding nan that is not the where's own output (that line shows its grad_fn): a gradient
_NAN_GRADIENT = R(r"(?P<nan_gradient>\btensor\(\[?[^()\n]{0,300}?\bnan\b)(?![^\n]*grad_fn=)")
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (("nan", _NAN_GRADIENT),)

NAN_UPSTREAM = Alternative(
    "nan_overflow",
    "NaN already in the values the where selected (an overflow or a NaN loss upstream)",
    "Find the first NaN with torch.autograd.detect_anomaly(): the backward that returns it names the op.",
)


def _where_nan(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    node = first(hits, "where_node", "WhereBackward0")
    summary = (
        f"a gradient is NaN beside a torch.where ({node}): the branch where did not select still gets "
        "differentiated, and its inf or NaN derivative times 0 is NaN" + on_ranks(hits)
    )
    fix = (
        "torch.where chooses values, not gradients: the unselected branch is still differentiated, and 0 * inf "
        "is NaN. Make that branch safe before the op, not after it: compute it on a masked input, e.g. "
        "safe_x = torch.where(cond, x, torch.ones_like(x)); y = torch.where(cond, f(safe_x), other) (the "
        "'double where'), or clamp the input into the op's domain (x.clamp(min=eps) before log/sqrt/division). "
        "torch.masked's MaskedTensor keeps the two branches' gradients apart."
    )
    return summary, fix


WHERE_UNSELECTED_NAN = Recogniser(
    kind="where_unselected_nan",
    templates=("torch_native:where-backward-node", "torch_native:swhere-backward-node"),
    title="a NaN gradient from the branch torch.where did not select",
    anchors=("WhereBackward",),
    match=_WHERE_NODE,
    # said only beside a NaN gradient, and never certain: the NaN may come from the selected values
    requires=("nan_gradient",),
    confirm=lambda hits, ctx: False,
    also=(NAN_UPSTREAM,),
    describe=_where_nan,
)

RECOGNISERS = (WHERE_UNSELECTED_NAN,)
