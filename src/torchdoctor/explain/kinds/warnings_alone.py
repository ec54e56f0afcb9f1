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
- DDP's reducer again (``reducer.cpp``, a ``TORCH_WARN_ONCE`` after the first backward): "find_unused_parameters=True
  was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in
  an extra traversal of the autograd graph every iteration, ..." (torch 1.8-1.9 without "in the forward pass" and
  with "a false positive your model has"): the flag costs a walk of the graph every step for nothing. transformers'
  Trainer before 4.3 set it for every model it wrapped, with no way to turn it off (huggingface/transformers#9802);
  4.3 added ``ddp_find_unused_parameters`` and kept the default: True for a PreTrainedModel without gradient
  (activation) checkpointing (``Trainer._build_accelerator_args`` in 5.23, ``_wrap_model`` before), so every such
  Trainer run on several GPUs prints this warning, a healthy one too. Where the log shows the Trainer ran (its
  frames, its printed metrics, an example's ``--do_train``) the finding says that and names the argument; the
  pre-4.3 Trainer is named beside it unless the log shows a later release (5.x's ``[transformers]`` prefix and
  quoted metrics, 4.38+'s ``grad_norm``, the argument itself).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

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


# transformers' Trainer ran: its printed metrics (every release), an example script's --do_train (TrainingArguments
# read by HfArgumentParser); its frames are hub_datasets' saw_hf_trainer. A Trainer of 4.3 or later: 5.x's logger
# prefix and its metrics printed as strings, 4.38+'s grad_norm, the argument 4.3 added printed
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("_samples_per_second': ", re.compile(r"(?P<hf_trainer_ran>'(?:train|eval)_samples_per_second': )")),
    ("--do_train", re.compile(r"(?P<hf_trainer_ran>(?<![\w-])--do_train\b)")),
    ("[transformers] ", re.compile(r"(?P<hf_trainer_from_4_3>^\[transformers\] )", re.M)),
    ("_runtime': '", re.compile(r"(?P<hf_trainer_from_4_3>'(?:train|eval)_runtime': ')")),
    ("'grad_norm': ", re.compile(r"(?P<hf_trainer_from_4_3>'grad_norm': )")),
    ("ddp_find_unused_parameters", re.compile(r"(?P<hf_trainer_from_4_3>\bddp_find_unused_parameters\b)")),
)


def _unused_unneeded(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if "hf_trainer_ran" in ctx.facts or "saw_hf_trainer" in ctx.facts:
        return (
            "DDP warned that find_unused_parameters=True was set but no parameter went unused: transformers' Trainer "
            "sets it for a model without gradient checkpointing unless ddp_find_unused_parameters is given, so its "
            "runs on several GPUs print this, healthy ones too; every step walks the autograd graph once more for "
            "nothing (a performance warning, not an error)" + on_ranks(hits),
            "Nothing has to change if the run's speed is fine. To save the extra traversal where every parameter "
            "gets a gradient each step, pass ddp_find_unused_parameters=False to TrainingArguments "
            "(--ddp_find_unused_parameters False on the command line). Keep the default for a model that leaves "
            "some parameters out of the loss on some steps (a head or branch not always used): with the flag off, "
            "DDP stops there with 'Expected to have finished reduction in the prior iteration'.",
        )
    return (
        "DDP warned that find_unused_parameters=True was set but no parameter went unused: every step walks the "
        "autograd graph once more for nothing (a performance warning, not an error)" + on_ranks(hits),
        "Nothing has to change if the run's speed is fine; the extra traversal is a common reason a run gets slower "
        "with more GPUs. Turn the flag off where every parameter gets a gradient each step: "
        "DistributedDataParallel(model, find_unused_parameters=False) (its default); Lightning: strategy='ddp' "
        "instead of 'ddp_find_unused_parameters_true'; transformers' Trainer (which sets it for a model without "
        "gradient checkpointing): ddp_find_unused_parameters=False. Keep the flag if later steps do leave "
        "parameters unused (a branch taken only sometimes): the warning says so itself, it may be a false positive "
        "then.",
    )


FIND_UNUSED_UNNEEDED = Recogniser(
    kind="find_unused_parameters_unneeded",
    title="DDP's find_unused_parameters set where nothing is unused",
    anchors=("was specified in DDP constructor, but did not find any unused parameters",),
    templates=(
        "torch_cpp:find-unused-parameters-true-was-specified",
        "torch_native:ddp-find-unused-parameters-nothing-unused-1-8",
    ),
    confirm=lambda hits, ctx: False,  # a warning: slower, not failed
    fallback=True,
    also=(
        Alternative(
            "library_version_bug",
            "a transformers Trainer before 4.3 (early 2021) setting find_unused_parameters=True for every model it "
            "wraps in DDP, with no argument to turn it off",
            "pip install -U transformers (4.3 and later take ddp_find_unused_parameters; huggingface/transformers"
            "#9802), then pass ddp_find_unused_parameters=False.",
            unless_log=("hf_trainer_from_4_3",),
        ),
    ),
    describe=_unused_unneeded,
)


RECOGNISERS = (GRAD_STRIDES, CACHE_FLUSHES, FIND_UNUSED_UNNEEDED)
