"""A parameter FSDP manages replaced after wrapping, refused when FSDP writes it back into its flat parameter.

``torch/distributed/fsdp/_flat_param.py`` (FSDP1 with ``use_orig_params=True``), ``_writeback_orig_params``: before
each forward FSDP checks whether an original parameter is still a view of its ``FlatParameter``; one that was
replaced (``module.weight = nn.Parameter(...)``) or given new storage (``param.data = ...``, a dtype cast or a
``.to()`` of the module after wrapping) is copied back, and ``_writeback_tensor`` requires the shard's 1-D shape:
"Cannot writeback when the parameter shape changes\\nExpects torch.Size([525336576]) but got torch.Size([128256,
4096])". A parameter reassigned at its full shape fails there. Users meet it most on one GPU: FSDP over one process
is NO_SHARD, whose parameters keep their full shape, and accelerate upcasting fp16/bf16 parameters to fp32 under
mixed precision (``param.data = param.data.to(torch.float32)``) is such a reassignment (pytorch/pytorch#151223,
Lightning-AI/litgpt#491: "everything goes well using world_size >= 2"); elsewhere code that changes parameters after
wrapping (resizing embeddings, loading weights by assignment, adding adapters). The message does not say which
change it was: likely, with the fixes for both.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _writeback(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    what = facts.get("writeback_what", "parameter")
    shapes = ""
    if facts.get("writeback_expected"):
        shapes = f" (FSDP expected its shard {facts['writeback_expected']}, found {facts.get('writeback_got', '?')})"
    return (
        f"a {what} FSDP manages was replaced or given new storage after wrapping, at its full shape, and FSDP "
        f"(use_orig_params=True) could not write it back into its flat parameter{shapes}" + on_ranks(hits),
        "On one GPU (one process, so NO_SHARD) this is what accelerate's fp32 upcast of fp16/bf16 parameters "
        "does: run FSDP on 2 or more processes, or train on one GPU without FSDP, or load the model in float32 "
        "(torch_dtype=torch.float32) and let mixed precision cast. Otherwise change parameters before wrapping, "
        "not after: resize_token_embeddings, weights loaded by assigning module.weight / param.data, adapters "
        "(PEFT) and dtype casts all go before FSDP(...) / accelerator.prepare(...); after it, change values in "
        "place (with torch.no_grad(): param.copy_(...)). use_orig_params=False also avoids the writeback.",
    )


PARAM_REPLACED = Recogniser(
    kind="fsdp_param_replaced",
    title="an FSDP-managed parameter replaced after wrapping",
    anchors=("Cannot writeback when the ",),
    templates=("torch:cannot-writeback-when-the-shape-changes",),
    match=R(r"Cannot writeback when the (?:parameter|gradient) shape changes"),
    span=2,
    facts=(
        R(r"Cannot writeback when the (?P<writeback_what>parameter|gradient) shape changes"),
        R(
            r"Expects (?P<writeback_expected>torch\.Size\(\[[\d, ]{1,60}\]\)) but got (?P<writeback_got>torch\.Size\("
            r"\[[\d, ]{0,80}\]\))"
        ),
    ),
    confirm=lambda hits, ctx: False,  # which change it was is not in the message
    describe=_writeback,
)

RECOGNISERS = (PARAM_REPLACED,)
