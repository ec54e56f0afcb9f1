"""PyTorch/XLA's report of operators with no XLA lowering, which run on the CPU and make TPU training crawl.

Under ``PT_XLA_DEBUG=1`` (and in Lightning's and other trainers' TPU runs) PyTorch/XLA's metrics analysis
(``torch_xla/csrc/debug_util`` and ``torch_xla/debug/metrics``: the ``UnloweredOp`` analyzer of the
``pt-xla-profiler``) prints "pt-xla-profiler: Op(s) not lowered: aten::sgn_out, aten::im2col, ...,  Please open
a GitHub issue with the above op lowering requests." for every ``aten::`` counter it saw, that is every operator
PyTorch/XLA has no lowering for. Such an operator falls back to the CPU: the tensors go to the host and back on
every step ("TransferFromServerTime too frequent"), so the run is many times slower than on one GPU
(pytorch/xla#3080, Lightning-AI/pytorch-lightning#7368, #8863). ``aten::nonzero`` and other data-dependent shapes
also recompile the graph each step. The line says which operators, not that they are why a run failed or
stalled: likely.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

FAMILY = "drivers and GPUs"

NOT_LOWERED = re.compile(r"Op\(s\) not lowered: (?P<unlowered_ops>(?:aten::\w{1,80}, ){1,40})")


def _not_lowered(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    ops = [op for op in first(hits, "unlowered_ops", "").split(", ") if op]
    named = ", ".join(ops) or "some aten operators"
    dynamic = " (aten::nonzero makes data-dependent shapes, which recompile the graph every step)" * (
        "aten::nonzero" in ops
    )
    return (
        f"PyTorch/XLA has no lowering for {named}{dynamic}: these operators ran on the CPU, with a copy between "
        "the TPU and the host every step, which is why the TPU run is slow" + on_ranks(hits),
        "Find where the model calls them (PT_XLA_DEBUG=1 and torch_xla.debug.metrics.metrics_report() list the "
        "counters) and replace each with operators XLA has lowered: e.g. x.sign() on real numbers for sgn, "
        "unfold/conv instead of im2col, masks (torch.where) of a fixed shape instead of nonzero or boolean "
        "indexing; a newer torch_xla may have lowered the op. Ask for the missing ones in a pytorch/xla issue "
        "titled with the operator, as the message says.",
    )


XLA_OP_NOT_LOWERED = Recogniser(
    kind="xla_op_not_lowered",
    templates=("third_party:torch-xla-op-not-lowered",),
    title="operators PyTorch/XLA runs on the CPU",
    anchors=("Op(s) not lowered: aten::",),
    match=NOT_LOWERED,
    confirm=lambda hits, ctx: False,  # names the operators, not that they are what made the run fail
    describe=_not_lowered,
)

RECOGNISERS = (XLA_OP_NOT_LOWERED,)
