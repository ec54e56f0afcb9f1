"""Mixed precision's loss scaler and amp driven out of their order.

``torch/amp/grad_scaler.py`` (``torch/cuda/amp/grad_scaler.py`` before 2.3; FSDP's ``sharded_grad_scaler.py``
the same) keeps a stage per optimizer, READY -> UNSCALED -> STEPPED, which ``update()`` resets. ``unscale_``
refuses a call after ``step()`` ("unscale_() is being called after step().", one cause: the loop's order) and a
second call before ``update()`` ("unscale_() has already been called on this optimizer since the last
update()."). The second has two causes: the loop's own order (``update()`` skipped together with a skipped
step, ``unscale_`` called by hand and again by a clip helper that unscales itself), and the transformers
Trainer with accelerate in mid-2023, which unscaled twice (kinds/versions.py reads that one). The training
loop's own reading leads only where the traceback shows the script calling ``scaler.unscale_(`` itself
(``own_unscale_call``, kinds/__init__.py), and stays likely: that script may also hand the optimizer to a
library that unscales it.

Two more orders of mixed precision: apex's ``amp/_initialize.py`` check_models refuses a model already wrapped in
DataParallel or DistributedDataParallel ("Incoming model is an instance of ... Parallel wrappers should only be
applied to the model(s) AFTER the model(s) have been returned from amp.initialize."); and a training step on
Megatron that asserts the first value of ``megatron/core/optimizer/optimizer.py`` MixedPrecisionOptimizer.step(),
``update_successful``, which is False when the fp16 grad scaler found inf/nan and skipped the step by design
(``assert update_successful`` then ``AssertionError``: the step of THUDM/slime's and redai-studio/Relax's
``train_one_step``).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_AFTER_STEP = "unscale_() is being called after step()"


def _order(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    after_step = any(h.facts.get("after_step") for h in hits)
    summary = (
        "GradScaler.unscale_ was called after scaler.step() for the same optimizer, before scaler.update()"
        if after_step
        else "GradScaler.unscale_ was called a second time for one optimizer before scaler.update() reset it"
    )
    fix = (
        "Keep GradScaler's order once per optimizer and iteration: scaler.scale(loss).backward(); "
        "scaler.unscale_(optimizer) at most once (only to clip or read the gradients); scaler.step(optimizer); "
        "scaler.update(). Call scaler.update() on every iteration that called unscale_, also when the step is "
        "skipped (a gradient norm too large, a NaN check that continues the loop), and do not unscale by hand "
        "before a helper that unscales itself (accelerator.clip_grad_norm_, a Trainer's clipping). With gradient "
        "accumulation, unscale_ only on the iteration that steps."
    )
    return summary + on_ranks(hits), fix


GRAD_SCALER_CALL_ORDER = Recogniser(
    kind="grad_scaler_call_order",
    templates=("torch:unscale-is-being-called-after-step",),
    title="GradScaler's unscale_/step/update out of order",
    anchors=(_AFTER_STEP, "has already been called on this optimizer since the last update"),
    match=re.compile(
        r"(?P<after_step>unscale_\(\) is being called after step\(\))|"
        r"unscale_\(\) has already been called on this optimizer since the last update"
    ),
    # the after-step refusal has one cause; the second-call one is read here only beside the script's own
    # scaler.unscale_( frame (requires), and even then a library the script hands the optimizer to may be
    # the second caller
    confirm=lambda hits, ctx: all(h.facts.get("after_step") for h in hits),
    requires=("own_unscale_call", "unscale_after_step"),
    describe=_order,
)


def _amp_before_wrapper(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    wrapper = next((h.facts["wrapper"] for h in hits if h.facts.get("wrapper")), "a parallel wrapper")
    return (
        f"apex's amp.initialize was given a model already wrapped in {wrapper}" + on_ranks(hits),
        "Call amp.initialize on the bare model (moved to its GPU) and its optimizer first, and wrap the model it "
        "returns afterwards: model, optimizer = amp.initialize(model.cuda(), optimizer, opt_level=...); then "
        "model = DistributedDataParallel(model, device_ids=[local_rank]) (or DataParallel). The optimizer must "
        "be built on the bare model's parameters before amp.initialize.",
    )


AMP_INITIALIZE_ORDER = Recogniser(
    kind="amp_initialize_order",
    templates=("third_party:apex-parallel-wrappers-after-amp-initialize",),
    title="apex's amp.initialize after a parallel wrapper",
    anchors=(
        "Parallel wrappers should only be applied",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "Incoming model is an instance of",
    ),
    facts=(R(r"Incoming model is an instance of (?P<wrapper>[\w.]{1,80}?)\.? Parallel wrappers"),),
    describe=_amp_before_wrapper,
)


def _skipped_step(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the training step asserted update_successful, which Megatron's optimizer.step() returns False when it "
        "skips a step: under fp16 the grad scaler found inf/nan in the gradients (an overflow) and lowered the "
        "loss scale" + on_ranks(hits),
        "A skipped step is dynamic loss scaling working, not a failure: treat optimizer.step()'s (False, None, "
        "None) as a skipped step (do not step the learning-rate scheduler, log the loss scale) instead of "
        "asserting it, as the frameworks' later releases do (redai-studio/Relax#44, THUDM/slime's valid_step); "
        "update the framework, or train in bf16, which has no loss scaler. Overflows on every step (the loss scale "
        "falling to its minimum) point at the model or the data: a learning rate too high, or inputs with "
        "inf/nan.",
    )


# the assert as the traceback prints it: the code line, Python 3.11+'s carets, then the bare AssertionError; only
# in a traceback through Megatron's code (megatron_frame, kinds/__init__.py), where update_successful is its
# optimizer's
SKIPPED_STEP_ASSERTED = Recogniser(
    kind="skipped_step_asserted",
    templates=("third_party:megatron-train-step-assert-update-successful",),
    title="a skipped fp16 step asserted as a failure",
    anchors=("assert update_successful",),
    span=2,
    match=R(r"assert update_successful[ \t]*\n(?:[ \t]*\^+[ \t]*\n)?[ \t]*AssertionError[ \t]*(?:\n|$)"),
    requires=("megatron_frame",),
    # the line is a framework's code, not a message: update_successful is False for one reason in Megatron's
    # optimizers (the fp16 grad scaler's inf/nan), but another optimizer behind the same name may say False for
    # another: likely only
    confirm=lambda hits, ctx: False,
    describe=_skipped_step,
)


RECOGNISERS = (GRAD_SCALER_CALL_ORDER, AMP_INITIALIZE_ORDER, SKIPPED_STEP_ASSERTED)
