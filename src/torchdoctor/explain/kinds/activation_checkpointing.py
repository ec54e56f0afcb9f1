"""Activation checkpointing whose recomputed forward ran unlike the first: torch's CheckpointError.

``torch/utils/checkpoint.py`` (the non-reentrant checkpoint of torch 2.x, ``_checkpoint_hook`` and
``check_recomputed_tensors_match``) recomputes the forward of each checkpointed block in the backward and checks it
saved what the first forward saved: "A different number of tensors was saved during the original forward and
recomputation." with the two counts, or "Recomputed values for the following tensors have different metadata than
during the forward pass." with each tensor's saved and recomputed shape, dtype and device. The forward ran another
way the second time. What threads established: a fused kernel that saves other tensors when recomputed (xformers'
fused SwiGLU under Lightning's FSDP activation checkpointing, jzhang38/TinyLlama#152: the owner's fix, torch's own
SwiGLU layers); DeepSpeed ZeRO-3 recomputing with a frozen parameter already released (recomputed shape [0]: a bug
fixed by deepspeedai/DeepSpeed#8148); torch.compile with DDP and checkpointing (pytorch/pytorch#144035); a forward
whose path depends on state the recompute changes (a cache, a router, a length computed from the data);
scaled_dot_product_attention picking its cuDNN backend on one run and not the other, whose saved RNG seed and
offset differ in dtype and shape (torch's DTensor path under checkpointing, whose merged fix keeps cuDNN attention
out while checkpointing is on: the train half's 4671.txt). Several
causes print the same words: likely, never certain. Both labelled threads found a library's layer or option that does
not go with checkpointing, which leads (``library_option_conflict``), this kind's reading named after it; a tensor
recomputed with shape [0] leads with the release's bug instead (parameters released before the recomputation).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_COUNT = "A different number of tensors was saved during the original forward and recomputation"
_METADATA = "Recomputed values for the following tensors have different metadata than during the forward pass"


def _recomputed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    saved, again = first(hits, "saved_count"), first(hits, "recomputed_count")
    counts = (
        f" ({saved} tensors saved in the forward, {again} in the recomputation)" if saved and again else ""
    )
    emptied = any(h.facts.get("recomputed_empty") for h in hits)
    return (
        "activation checkpointing recomputed a block's forward in the backward and it ran another way than the first "
        f"time{counts}: a part of the model that does not go with checkpointing"
        + (", or parameters released before the recomputation (shape [0])" if emptied else "")
        + on_ranks(hits),
        "Find the checkpointed block whose forward differs when recomputed: rerun with "
        "torch.utils.checkpoint.set_checkpoint_debug_enabled(True) (or checkpoint(..., debug=True)) to see the "
        "operators of both runs. Usual causes: a fused kernel of another library inside the block (xformers' fused "
        "SwiGLU or attention, apex's fused layers): use torch's own layers there or leave that block out of the "
        "checkpointing policy; scaled_dot_product_attention taking another backend on recomputation than in "
        "the forward (its cuDNN backend saves other tensors than the flash and memory-efficient ones, the RNG "
        "seed and offset of another dtype or shape): pin the backends around the model with "
        "torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]), leaving "
        "cuDNN attention out; a forward that depends on state the first run changed (a cache, a counter, a "
        "data-dependent length): make it the same on recomputation; under DeepSpeed ZeRO-3 with frozen parameters "
        "(LoRA) a shape of [0] recomputed is parameters released too early: upgrade DeepSpeed, or turn "
        "checkpointing off for the frozen part.",
    )


ACTIVATION_CHECKPOINTING = Recogniser(
    kind="activation_checkpoint_recompute",
    title="activation checkpointing with a part of the model that recomputes differently",
    templates=(
        "torch_native:checkpoint-different-number-saved",
        "torch_native:checkpoint-recomputed-metadata",
    ),
    anchors=(_COUNT, _METADATA),
    # several causes print these words (a release's bug among them): never certain
    generic=(_COUNT, _METADATA),
    facts=(
        R(rf"(?P<recomputed_unlike>{_COUNT}|{_METADATA})"),
        R(r"Number of tensors saved during forward: (?P<saved_count>\d+)"),
        R(r"Number of tensors saved during recomputation: (?P<recomputed_count>\d+)"),
        R(r"recomputed metadata: \{'shape': torch\.Size\(\[(?P<recomputed_empty>0)\]\)"),
    ),
    span=4,
    also=(
        # a recomputed shape of [0]: the parameter was released (ZeRO-3's partitioning) before the recomputation
        # read it, which is the engine's doing, not the model's
        Alternative(
            "library_version_bug",
            "a bug of the installed release (DeepSpeed ZeRO-3 with frozen parameters before deepspeedai/"
            "DeepSpeed#8148, torch.compile with DDP and checkpointing: pytorch/pytorch#144035)",
            "Upgrade the library whose code runs the checkpointed blocks (DeepSpeed, torch, the trainer), or run "
            "without torch.compile or without checkpointing to see which one it is.",
            first_when=("recomputed_empty",),
            because="a tensor recomputed with shape [0]: a parameter released before the recomputation read it",
        ),
        # otherwise the threads that established a cause found a layer or an option of a library that does not go
        # with activation checkpointing (xformers' fused SwiGLU, SDPA's cuDNN backend): torch's non-reentrant
        # checkpoint needs the recomputation to save what the forward saved, which a fused kernel or a backend
        # chosen per call does not promise
        Alternative(
            "library_option_conflict",
            "a library's layer or option that does not go with activation checkpointing (a fused kernel, an "
            "attention backend chosen per call)",
            "Turn off, for the checkpointed blocks, the library feature that recomputes differently: replace a "
            "fused kernel (xformers' fused SwiGLU or attention, apex's fused layers) by torch's own layers or leave "
            "that block out of the checkpointing policy; pin scaled_dot_product_attention's backends while "
            "checkpointing (torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION, "
            "SDPBackend.EFFICIENT_ATTENTION]), no cuDNN attention); or turn activation checkpointing off to confirm.",
            unless=("recomputed_empty",),
            first_when=("recomputed_unlike",),
            because="the recomputation saved other tensors than the forward, what a fused or per-call kernel does",
        ),
    ),
    describe=_recomputed,
)

RECOGNISERS = (ACTIVATION_CHECKPOINTING,)
