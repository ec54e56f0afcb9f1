"""Warnings users post alone, with no failure in the log: what each means and whether to act on it.

Users post these warnings on their own, asking what they mean; none stops a run, so each is a finding only where the
log shows no failure (``fallback``) and only likely:

- DDP's reducer (``torch/csrc/distributed/c10d/reducer.cpp``): "Grad strides do not match bucket view strides. This
  may indicate grad was not created according to the gradient layout contract, or that the param's strides changed
  since DDP was constructed.  This is not an error, but may impair performance." followed by ``grad.sizes() = [256,
  256, 1, 1], strides() = [256, 1, 256, 256]`` and the bucket's. A gradient laid out otherwise than its parameter
  (a 1x1 convolution fed channels_last or permuted input, a parameter made from a transpose) is copied into DDP's
  bucket instead of being written there: an extra copy per step (open-mmlab/mmsegmentation#3270,
  whai362/PVT#51: "transpose causes the gradients stride wrong. Need to be contiguous").
- ZeRO-3's step (``deepspeed/runtime/zero/stage3.py``): "<n> pytorch allocator cache flushes since last step. this
  happens when there is high memory pressure ...": the caching allocator ran out of GPU memory and freed its cache
  to retry, n times in one step, each a synchronisation across the ranks (jzhang38/EasyContext#11,
  LLaVA-VL/LLaVA-NeXT#247).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _strides(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    sizes = facts.get("grad_sizes")
    which = f" (a gradient of shape {sizes}, strides {facts.get('grad_strides', '?')})" if sizes else ""
    return (
        "DDP warned that a gradient's memory layout differs from its parameter's bucket"
        + which
        + ": a performance "
        "warning, not an error — each such gradient is copied into the bucket every step" + on_ranks(hits),
        "Nothing has to change if the run's speed is fine. To remove the copy, give parameters and their gradients "
        "one layout: when the inputs are channels_last, convert the model before wrapping it "
        "(model.to(memory_format=torch.channels_last), then DDP(model)); when a permute / transpose feeds a layer "
        "(often a 1x1 convolution or a Linear), add .contiguous() after it; make parameters built from a transpose "
        "contiguous (nn.Parameter(w.t().contiguous())); change no parameter's layout after DDP is constructed.",
    )


GRAD_STRIDES = Recogniser(
    kind="ddp_grad_layout",
    title="DDP's warning of gradients laid out unlike their bucket",
    anchors=("Grad strides do not match bucket view strides",),
    templates=("torch_cpp:grad-strides-do-not-match-bucket",),
    span=2,
    facts=(
        R(
            r"grad\.sizes\(\) = (?P<grad_sizes>\[[\d, ]{1,60}\]), strides\(\) = (?P<grad_strides>\[[\d, ]{1,60}\])"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: what the run did wrong, if anything, is elsewhere
    fallback=True,
    describe=_strides,
)


def _cache_flushes(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    counts = [int(h.facts["flushes"]) for h in hits if h.facts.get("flushes", "").isdigit()]
    many = f" (up to {max(counts)} in one step)" if counts else ""
    return (
        "ZeRO-3 warned that the GPU ran out of cached memory and PyTorch's allocator flushed its cache to retry"
        + many
        + ": memory pressure that slows every step"
        + on_ranks(hits),
        "Leave GPU memory some room: lower the micro batch size or sequence length, turn on activation (gradient) "
        "checkpointing, lower stage3_max_live_parameters / stage3_prefetch_bucket_size in zero_optimization, or "
        'offload optimizer states ("offload_optimizer": {"device": "cpu"}). PYTORCH_CUDA_ALLOC_CONF='
        "expandable_segments:True lessens fragmentation. If the flushes stay, call "
        "get_accelerator().empty_cache() (torch.cuda.empty_cache()) at the same point of each step on every rank, "
        "so the ranks flush together instead of waiting on each other.",
    )


CACHE_FLUSHES = Recogniser(
    kind="zero3_memory_pressure",
    title="ZeRO-3's allocator cache flushes under memory pressure",
    anchors=("pytorch allocator cache flushes since last step",),
    templates=("deepspeed:pytorch-allocator-cache-flushes-since-last",),
    facts=(R(r"(?P<flushes>\d{1,6}) pytorch allocator cache flushes since last step"),),
    confirm=lambda hits, ctx: False,  # a warning: slow, not failed
    fallback=True,
    describe=_cache_flushes,
)


RECOGNISERS = (GRAD_STRIDES, CACHE_FLUSHES)
