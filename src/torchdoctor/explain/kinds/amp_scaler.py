"""GradScaler driven out of its order.

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
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks

FAMILY = "numerics and precision"

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

RECOGNISERS = (GRAD_SCALER_CALL_ORDER,)
