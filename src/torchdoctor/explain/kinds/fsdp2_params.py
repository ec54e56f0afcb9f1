"""FSDP2 (fully_shard) refusing a parameter's layout when it shards it, or a group's mixed gradient dtypes.

The texts are ``torch/distributed/fsdp/_fully_shard/``'s:

- ``_fsdp_param.py`` ``_init_sharded_param`` (torch 2.6 and later, pytorch/pytorch#137000): "FSDP does not support
  non-contiguous parameters yet: param.shape=torch.Size([4096, 4096]) param.stride()=(1, 4096)". A parameter that is
  a transpose or permute of its storage (weights converted from another framework's layout, a checkpoint loaded by
  assignment from a transposed tensor) cannot be chunked on dim 0; pytorch/torchtitan#1180 made the encoder's
  parameters contiguous before ``fully_shard``. The message names the check: certain.
- ``_fsdp_collectives.py`` ``foreach_reduce``: "FSDP reduce-scatter expects uniform gradient dtype but got
  {torch.bfloat16, torch.float32}". One reduce-scatter carries gradients of two dtypes: with
  ``MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)`` and gradient accumulation, a
  parameter whose gradient arrives only on the synchronised micro-batch stays bf16 beside the others' fp32
  accumulated gradients (pytorch/pytorch#160279, #196996; NVIDIA-NeMo/Automodel#3540), or the parameters of one
  ``fully_shard`` group are themselves of two dtypes. Likely: the message does not say which.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _non_contiguous(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    shape = (
        f" (shape {facts['nc_shape']}, strides {facts.get('nc_stride', '?')})"
        if facts.get("nc_shape")
        else ""
    )
    return (
        f"fully_shard refused a parameter whose memory is not contiguous{shape}: a transposed or permuted view, "
        "which FSDP2 cannot chunk" + on_ranks(hits),
        "Make the parameters contiguous before fully_shard: for p in module.parameters(): p.data = "
        "p.data.contiguous() (or build them so: nn.Parameter(w.t().contiguous()) when converting or loading "
        "transposed weights). Do it on the module before the fully_shard calls, after any weight loading that "
        "assigns tensors.",
    )


NON_CONTIGUOUS = Recogniser(
    kind="fsdp2_noncontiguous_param",
    title="a non-contiguous parameter given to fully_shard",
    anchors=("FSDP does not support non-contiguous parameters",),
    templates=("torch:fsdp-does-not-support-non-contiguous",),
    facts=(
        R(
            r"param\.shape=(?P<nc_shape>torch\.Size\(\[[\d, ]{1,80}\]\)) param\.stride\(\)=(?P<nc_stride>\([\d, ]{1,80}\))"
        ),
    ),
    describe=_non_contiguous,
)


def _mixed_grads(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    dtypes = merged(hits).get("grad_dtypes", "")
    which = f" ({dtypes})" if dtypes else ""
    return (
        f"FSDP2's gradient reduce-scatter met gradients of two dtypes in one group{which}" + on_ranks(hits),
        "With MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) and gradient accumulation "
        "(set_requires_gradient_sync(False) on the first micro-batches), a parameter that gets its gradient only on "
        "the last micro-batch stays bf16 beside the others' fp32: upgrade torch (pytorch/pytorch#160279 casts it), "
        "or make every parameter of the group take part in every micro-batch (unused ones out of the module, or "
        "multiplied by 0 into the loss), or set reduce_dtype to the param_dtype. When no accumulation is used, the "
        "group's parameters are of two dtypes themselves: cast the module to one dtype before fully_shard (keep "
        "fp32 norms in a fully_shard group of their own), or let mp_policy cast them.",
    )


MIXED_GRADS = Recogniser(
    kind="fsdp2_mixed_grad_dtype",
    title="FSDP2 reducing gradients of two dtypes in one group",
    anchors=("FSDP reduce-scatter expects uniform gradient dtype",),
    templates=("torch:fsdp-reduce-scatter-expects-uniform-gradient",),
    facts=(R(r"expects uniform gradient dtype but got (?P<grad_dtypes>\{[\w., ]{1,120}\})"),),
    confirm=lambda hits, ctx: False,  # which of the two causes is not in the message
    describe=_mixed_grads,
)

RECOGNISERS = (NON_CONTIGUOUS, MIXED_GRADS)
