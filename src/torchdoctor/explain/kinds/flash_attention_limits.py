"""FlashAttention's backward pass for a large head dimension, which only the GPUs with the most shared memory run.

FlashAttention 1.x (``csrc/flash_attn/fmha_api.cpp``) runs the backward pass for a head dimension above 64 only
on an A100 or H100 (sm80/sm90), whose shared memory per block its kernels need: elsewhere it refuses with
"FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as the implementation needs a large amount
of shared memory.", and its README and docstrings say it as "Head dim > 64 backward requires A100 or H100."
(FlashAttention 2 raised the limits: backward up to head dimension 256 on A100/H100, 192 on other Ampere and
Ada GPUs.) So fine-tuning a model with 128-dimensional heads (LLaMA's) through a FlashAttention 1 patch on a 3090,
an A40 or an A6000 stops there (Dao-AILab/flash-attention#51, modelscope/ms-swift#9). A paste may quote the
README rather than the error: likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks

FAMILY = "drivers and GPUs"

ANCHORS = (
    "FlashAttention backward for head dim > 64 requires A100 or H100",
    "Head dim > 64 backward requires A100 or H100",
)


def _head_dim(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "FlashAttention's backward pass for a head dimension above 64 runs only on an A100 or H100 (it needs "
        "their shared memory), and this GPU is neither: training (not inference) with this model's heads stops "
        "there" + on_ranks(hits),
        "Train without the FlashAttention patch on this GPU: turn the project's flash_attention option off (or "
        "do not call its replace_..._attn_with_flash_attn / use attn_implementation='sdpa'), or install "
        "FlashAttention 2 (pip install -U flash-attn), whose backward covers head dimensions up to 192 on Ampere "
        "and Ada GPUs; or train on an A100/H100. Inference (forward only) with head dimension up to 128 works "
        "on other GPUs.",
    )


FLASH_ATTN_HEADDIM = Recogniser(
    kind="flash_attn_headdim_needs_a100",
    templates=("third_party:flash-attn-backward-head-dim-requires-a100",),
    title="FlashAttention's backward for a large head dimension off A100/H100",
    anchors=ANCHORS,
    confirm=lambda hits, ctx: False,  # a quote of the README reads the same as the error
    describe=_head_dim,
)

RECOGNISERS = (FLASH_ATTN_HEADDIM,)
