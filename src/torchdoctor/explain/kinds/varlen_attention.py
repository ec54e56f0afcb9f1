"""Packed sequences' offsets flash-attn's varlen kernel refuses, read by versions.py as a release's bug.

flash-attn's variable-length attention (``csrc/flash_attn/flash_api.cpp`` mha_varlen_fwd and mha_varlen_bwd, the
same in ``hopper/flash_api.cpp`` and the ROCm ``flash_attn_ck``; CHECK_SHAPE: ``#x " must have shape ("
#__VA_ARGS__ ")"``, since 2.0) takes the batch size from ``cu_seqlens_q`` (``batch_size = cu_seqlens_q.numel() -
1``) and checks both offset tensors against it: "cu_seqlens_k must have shape (batch_size + 1)" says the keys' offsets
count another number of sequences than the queries' (or are not 1-D), "cu_seqlens_q must have shape (batch_size +
1)" that the queries' offsets are not a 1-D tensor (a batch dimension kept). In training the offsets come from the
code that unpads or packs the batch, not from the script: transformers' flash-attention integration preparing them
from a packed batch's position_ids (``modeling_flash_attention_utils.py``; huggingface/transformers#39474 changed
cu_seqlens_k and max_k there and multi-GPU training with packed batches failed, reverted by #39653), or a
trainer's packing collator. Likely: the line names the kernel, not who built its offsets.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = (
    "cu_seqlens_k must have shape (batch_size + 1)",
    "cu_seqlens_q must have shape (batch_size + 1)",
)
REFUSED = re.compile(
    r"(?P<varlen_offsets>cu_seqlens_(?P<varlen_which>[qk])) must have shape \(batch_size \+ 1\)"
)
TEMPLATES = (
    "third_party:flash-attn-cu-seqlens-k-must-have-shape",
    "third_party:flash-attn-cu-seqlens-q-must-have-shape",
)
FACTS = ("varlen_offsets",)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for flash-attn's varlen kernel refusing the packed batch's sequence offsets."""
    if first(hits, "varlen_which") == "q":
        what = (
            "flash-attn's variable-length attention was given cu_seqlens_q that is not a 1-D tensor of batch_size + 1 "
            "offsets (a batch dimension kept on the sequence boundaries of a packed batch)"
        )
    else:
        what = (
            "flash-attn's variable-length attention was given cu_seqlens_k counting another number of sequences than "
            "cu_seqlens_q (batch_size is len(cu_seqlens_q) - 1): the code that unpacked the batch gave the keys other "
            "sequence boundaries than the queries"
        )
    return (
        what + ", which in training is the library that builds them from a packed (padding-free) batch, e.g. "
        "transformers' flash-attention integration reading them from position_ids (a change of July 2025, "
        "huggingface/transformers#39474, reverted by #39653)" + on_ranks(hits),
        "Update transformers (pip install -U transformers), or pin the release before the change, when packed or "
        "padding-free batches (position_ids restarting at 0 per sequence, DataCollatorWithFlattening, a trainer's "
        "packing) reach flash_attention_2; a trainer or collator that builds the offsets itself needs the release "
        "that matches the transformers installed. Code of your own calling flash_attn_varlen_func must pass 1-D int32 "
        "cu_seqlens_q and cu_seqlens_k of the same length (0, then the cumulative sequence lengths), the same tensor "
        "for both in self-attention.",
    )
