"""Kinds of failure in the training loop itself: NaN and overflow, DDP's reducer, DataLoader workers, crashes.

The message texts are torch's (``torch/csrc/distributed/c10d/reducer.cpp``, ``torch/utils/data/_utils``,
``torch/autograd``), DeepSpeed's and apex's loss scalers, transformers' and torchdoctor's overflow detector,
torchrun's failure summary and the kernel's OOM killer.
"""

from __future__ import annotations

import re

from torchdoctor.explain.quote import quote
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    called_from_own_code,
    first,
    library_call,
    merged,
    on_ranks,
    unless_a_library_called,
)

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _half_constant(hits: list[Hit]) -> tuple[str, str]:
    return (
        "a number too large for float16 was written into a Half tensor (value cannot be converted to type "
        "at::Half without overflow): float16 tops out at 65504" + on_ranks(hits),
        "The model (or the part that raised) runs in float16, and a line the traceback names writes a constant "
        "past its range into one of its tensors: a mask filled with -1e9 / -1e10 or torch.finfo(torch.float32)"
        ".min, a score set to 2**30. Run the model in bfloat16 (from_pretrained(..., torch_dtype=torch.bfloat16), "
        "bf16=True; bf16 has float32's range) or float32; in the code, take the bound from the tensor's own "
        "dtype, x.masked_fill(mask, torch.finfo(x.dtype).min), or use float('-inf'). If the line is a library's "
        "(a model's remote code, a generation helper), its newer release usually fixed it: update it.",
    )


def _sampling_nan(hits: list[Hit]) -> tuple[str, str]:
    return (
        "sampling got probabilities that hold NaN, inf or a negative value (torch.multinomial: probability "
        "tensor contains either inf, nan or element < 0): the model's logits were not finite"
        + on_ranks(hits),
        "The logits the sampler turned into probabilities were NaN/inf: most often a model run in float16 "
        "whose activations overflow (load it in bfloat16, torch_dtype=torch.bfloat16, or float32 for "
        "generation), or weights that are NaN already (a training run that diverged: its last checkpoint; a "
        "checkpoint that did not load whole). Check torch.isfinite(logits).all() on one step; in an RL trainer "
        "(PPO, GRPO) a NaN loss or reward in the step before poisons the policy's weights: lower the learning "
        "rate, clip gradients, and look for the first NaN in its logged metrics (grad_norm: nan).",
    )


def _tensorboard_nan(hits: list[Hit]) -> tuple[str, str]:
    return (
        "a value written to TensorBoard was NaN or inf (tensorboardX: NaN or Inf found in input tensor.): a "
        "logged scalar, most often the loss, or a histogram of weights or gradients" + on_ranks(hits),
        "The writer only reports it and goes on; find which tag it was (the add_scalar / add_histogram call "
        "just before the warning) and print that value for the same step. If it is the loss or a gradient, "
        "training diverged: a lower learning rate or warm-up, gradient clipping (clip_grad_norm_), bf16 instead "
        "of fp16, and a check of the data for NaN (torch.isfinite(batch).all()); "
        "torch.autograd.set_detect_anomaly(True) names the first backward op that returns NaN.",
    )


def _loss_scale_search(hits: list[Hit]) -> tuple[str, str]:
    """Steps skipped while fp16's dynamic loss scale is still searched down from its start: the log's only lines."""
    scales = sorted({h.facts["scale_to"] for h in hits if h.facts.get("scale_to")}, key=float)
    lowest = f" (down to {scales[0]} so far)" if scales else ""
    return (
        "fp16's dynamic loss scale is searching for its value: the first steps overflowed and were skipped, the "
        f"loss scale halved each time{lowest}, and no optimizer step has run yet, so the learning rate reads 0 "
        "(normal at the start; no error in this log)" + on_ranks(hits),
        "Nothing to change while the skips stop after a few steps: DeepSpeed starts the loss scale at "
        '2**initial_scale_power (2**32 by default, "fp16": {"initial_scale_power": 16} starts lower and '
        "skips fewer) and halves it on every overflow, and transformers' Trainer logs learning_rate 0 until the "
        "first step is taken. If the steps keep being skipped and the loss scale falls towards 1 (min_loss_scale), "
        "the gradients overflow at every scale: lower the learning rate, clip gradients, or train in bf16 "
        '("bf16": {"enabled": true}) where the GPU has it.',
    )


def _nan(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if all("scale_search" in h.facts or "scale_search_lr" in h.facts for h in hits):
        return _loss_scale_search(hits)
    if facts.get("fairseq_min_scale"):
        summary = (
            f"fp16 loss scale hit fairseq's minimum ({facts['fairseq_min_scale']}): the gradients held inf or NaN "
            "at every scale" + on_ranks(hits)
        )
        fix = (
            "fairseq's dynamic loss scaler kept halving the scale because every step's gradients overflowed, and "
            "stopped at --min-loss-scale. Lower --lr (or lengthen --warmup-updates), clip gradients "
            "(--clip-norm), or train in fp32 (drop --fp16 / --amp; --bf16 where the GPU has it), which does not "
            "overflow at 65504; a NaN the data or the loss makes (a log of 0) prints the same: check a batch "
            "in fp32 first."
        )
        return summary, fix
    if facts.get("min_scale") and facts.get("apex_scaler"):
        summary = (
            f"fp16 loss scale fell to {facts['apex_scale']} (apex amp: Gradient overflow. Skipping step): the "
            "gradients held inf or NaN at every scale" + on_ranks(hits)
        )
        fix = (
            "apex's dynamic loss scaler halves the scale on each step whose gradients overflow; now and then is "
            "normal, but a scale below 1 means every step overflows: the loss or the activations are already "
            "inf/NaN in the forward pass, which no scale fixes. Lower the learning rate or add warm-up, clip "
            "gradients, check a batch in fp32 (opt_level O0) for NaN in the data or the loss; then move from "
            "apex.amp (deprecated) to torch.autocast with torch.amp.GradScaler, or train in bf16, which does not "
            "overflow at 65504. To keep apex: amp.initialize(..., min_loss_scale=1.0) stops the halving at 1."
        )
        return summary, fix
    if facts.get("min_scale"):
        summary = "fp16 loss scale hit its minimum: the gradients held inf or NaN at every scale (DeepSpeed)"
        fix = (
            "Dynamic loss scaling kept halving the scale because every step overflowed, and gave up. In the "
            'DeepSpeed config, fp16 section: a static "loss_scale": 8 (or a larger "min_loss_scale" / '
            '"initial_scale_power": 16 with "loss_scale_window"), or better train in bf16 ("bf16": '
            '{"enabled": true}), which does not overflow at 65504. Then lower the learning rate / clip '
            "gradients if it still diverges; torchdoctor's DebugUnderflowOverflow names the first module "
            "whose output overflows."
        )
        return summary + on_ranks(hits), fix
    if facts.get("half_constant"):
        return _half_constant(hits)
    if facts.get("sampling_nan"):
        return _sampling_nan(hits)
    if facts.get("tensorboard_nan") and not facts.get("what"):
        return _tensorboard_nan(hits)
    what = quote(facts.get("what", "NaN or inf in the loss or gradients"))
    summary = f"the loss or gradients became NaN/inf: {what}" + on_ranks(hits)
    if ctx.facts.get("pure_half"):
        half = ctx.facts["pure_half"].strip()
        return (
            summary + f"; the model itself is trained in float16 ({half}), not in mixed precision",
            f"Training the whole model in half precision ({half}: fp16 weights, gradients and optimizer state) "
            "overflows and loses the small updates: fp16 tops out at 65504 and Adam's state and the weight "
            "updates need more precision than it has. Train in single-precision (float32) weights and let "
            "autocast run the layers in half: torch.autocast('cuda', dtype=torch.float16) with torch.amp."
            "GradScaler (or dtype=torch.bfloat16, no scaler needed), or the project's mixed-precision option "
            "instead of its half one; keep a plain .half() model for inference.",
        )
    lead = (
        "Find the first module whose activations or gradients overflow: torchdoctor's DebugUnderflowOverflow "
        "(same API as transformers' debug_utils) dumps the frames before the first inf/nan.\n"
    )
    if facts.get("detector_abort"):
        summary, lead = _detector_stopped(facts, ctx, summary)
    fix = lead + (
        "Usual fixes: bf16 instead of fp16 (fp16 overflows at 65504; with fp16 keep dynamic loss scaling, "
        "loss_scale / GradScaler), a lower learning rate or warm-up, gradient clipping "
        "(clip_grad_norm_), keep_in_fp32 for the layers that overflow (run them in float32), and check the data "
        "for NaN."
    )
    return summary, fix


def _detector_stopped(facts: dict, ctx: Context, summary: str) -> tuple[str, str]:
    """The summary and the fix's lead where the overflow detector itself stopped the run: it already found the
    first module whose values went inf/nan (in its message, torchdoctor's; in the last frame printed above the
    error, transformers'), so the lead reads that answer instead of asking for the detector."""
    module = facts.get("overflow_module")
    if module is not None:
        name = f"{module or 'the model'} ({facts['overflow_class']})"
        passed = facts["overflow_pass"]
        summary += f"; the overflow detector stopped it at the first inf/nan, in the {passed} of {name}"
        where = f"The detector stopped at {name}, named in its error"
    else:
        summary += "; the overflow detector (DebugUnderflowOverflow) stopped it at the first inf/nan"
        where = "The detector stopped at the module of the last frame it printed above the error"
    entered = ctx.facts.get("overflow_input")
    if entered:
        lead = (
            f"{where}, and its {entered} already held inf/nan: the bad value came into that module from outside "
            "the watched modules, from the batch itself or from an operation in forward between modules. Check "
            "the batch on that rank before the model (torch.isfinite(x).all()), "
            "and the step that built it (a division by a zero std, a log of 0).\n"
        )
    else:
        lead = (
            f"{where}: the first module whose values held inf/nan, its inputs and weights still finite (the "
            "frames before it): that module overflowed (look at its abs max against the dtype's range) or did an "
            "operation at the edge of its domain.\n"
        )
    return summary, lead


# Anomaly mode names the backward node that first returned NaN (engine.cpp validate_outputs: "Function
# 'SqrtBackward0' returned nan values in its 0th output."; no number after the node's name before torch 1.10).
# These ops' derivatives are infinite or undefined at one edge of their domain: sqrt, rsqrt and a fractional pow
# at 0, the logs at 0 (log1p at -1), a norm or a distance of a zero vector (x / |x| = 0 / 0), acos, asin and atanh
# at +-1. The infinite derivative times a zero (or a masked) gradient is NaN in float32 as much as in float16, so
# the op's domain leads and the overflow is the other reading (an inf already in the input prints the same).
_DOMAIN_NODES = "Sqrt|Rsqrt|Pow|Log|Log2|Log10|Log1p|Norm|LinalgVectorNorm|Cdist|Acos|Asin|Atanh"
DOMAIN_EDGE = R(rf"Function '(?P<domain_node>(?:{_DOMAIN_NODES})Backward\d?)' returned nan values in its")

_EDGE_OF = {
    "Sqrt": "sqrt of 0",
    "Rsqrt": "rsqrt of 0",
    "Pow": "a fractional power, x ** 0.5, of 0 or of a negative number",
    "Log": "log of 0",
    "Log2": "log2 of 0",
    "Log10": "log10 of 0",
    "Log1p": "log1p of -1",
    "Norm": "the norm of a zero vector",
    "LinalgVectorNorm": "the norm of a zero vector",
    "Cdist": "the distance between two equal points",
    "Acos": "acos of +-1",
    "Asin": "asin of +-1",
    "Atanh": "atanh of +-1",
}


def _domain_edge(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    node = first(hits, "domain_node", "SqrtBackward0")
    op = re.sub(r"Backward\d?$", "", node)
    summary = (
        f"a gradient became NaN in {node}, at the edge of its op's domain ({_EDGE_OF.get(op, 'an edge value')}): "
        "its derivative is infinite there, and times a zero gradient NaN, in float32 too" + on_ranks(hits)
    )
    fix = (
        f"Keep the input of that op ({op.lower()}) off the edge, where the traceback of the forward call that "
        "anomaly mode printed above points: x.clamp(min=eps) before sqrt or log, torch.log(p + eps), "
        "(x.pow(2).sum(-1) + eps).sqrt() for a norm, x.clamp(-1 + eps, 1 - eps) before acos or asin. If the "
        "input itself already held inf (an fp16 overflow upstream), the fix is there instead: bf16 or float32, "
        "a lower learning rate, gradient clipping."
    )
    return summary, fix


NAN_AT_ZERO = Recogniser(
    kind="nan_at_zero",
    templates=("torch_native:anomaly-returned-nan",),
    title="NaN at the edge of an op's domain (sqrt, log, a norm of 0)",
    anchors=("returned nan values in its",),
    match=DOMAIN_EDGE,
    # the node says which op, not what its input was: 0 (the domain's edge) or an inf from upstream
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "bad_training_data",
            "NaN or inf already in the data (a sample, a label, a feature normalised by a zero std)",
            "Check each batch before the model: torch.isfinite(x).all() for inputs and targets.",
        ),
    ),
    describe=_domain_edge,
)


NAN_OVERFLOW = Recogniser(
    # DeepSpeed runtime/fp16/loss_scaler.py, torch/autograd anomaly mode, detectron2, transformers'
    # debug_utils and torchdoctor's detector, clip_grad_norm_(error_if_nonfinite=True)
    kind="nan_overflow",
    templates=(
        "deepspeed:current-loss-scale-already-at-minimum",
        "torch_native:anomaly-returned-nan",
        # deepspeed/runtime/fp16/loss_scaler.py, fused_optimizer.py: a step skipped at the minimum scale (1)
        "deepspeed:deepspeed-fp16-dynamic-loss-scale-overflow",
        "deepspeed:attempted-loss-scale-reducing-to",
        # deepspeed/runtime/fp16/loss_scaler.py and zero/stage3.py: a step skipped; transformers/trainer.py
        # (_get_learning_rate under DeepSpeed): the lr asked before the first optimizer step, reported as 0
        "deepspeed:deepspeed-overflow-rank-skipping-step",
        "deepspeed:deepspeed-overflow-rank-skipping-step-attempted",
        "transformers:tried-to-get-lr-value-before",
        # aten BatchLinearAlgebra.cpp: an SVD of a matrix holding NaN/inf (Reference LAPACK 3.10+ says so)
        "torch_native:linalg-svd-non-finite",
        # ESPnet's trainers skipping a step whose clipped gradient norm is NaN: espnet2/train/trainer.py, and the
        # CustomUpdater of espnet/asr/pytorch_backend/asr.py (and its chainer twin) before it
        "third_party:espnet2-grad-norm-not-finite",
        "third_party:espnet-grad-norm-is-nan",
        "third_party:fairseq-minimum-loss-scale-reached",
        "third_party:apex-amp-gradient-overflow-skipping-step",
        "third_party:tensorboardx-nan-or-inf-found",
        "torch:clip-grad-norm-non-finite-continuing",
        "third_party:fairseq-amp-minimum-loss-scale-reached",
        "third_party:lightning-loss-returned-not-finite",
        "third_party:lightning-detected-nan-inf-parameter",
        # aten Distributions.cpp (multinomial: sampling from probabilities that hold NaN/inf) and c10/util/
        # TypeCast.h (a Python number too large for a float16 tensor it is written into)
        "aten:multinomial-probability-tensor-invalid",
        "aten:value-cannot-be-converted-without-overflow",
    ),
    title="NaN / overflow",
    anchors=(
        "loss scale already at minimum",
        "returned nan values in its",
        "Loss became infinite or NaN",
        "Detected inf/nan",
        # the detector's abort (abort_after_batch_num, or transformers' on the first inf/nan): its own ValueError,
        # raised on the rank whose activations overflowed, after the frames above
        "DebugUnderflowOverflow: inf/nan detected",
        "loss=nan",
        "loss: nan",
        "loss = nan",
        "'loss': nan",
        "Loss: nan",
        "Loss is nan",
        "loss is nan",
        "Loss is NaN",
        "loss is NaN",
        "loss: NaN",
        "loss=NaN",
        '"loss": NaN',  # json.dumps writes a float NaN so: a JSON-lines metrics log
        # the same prints with an infinite loss (fp16 overflows to inf before it turns NaN): a trainer's log line
        # ("Skip this batch 2! (Loss: inf)", "loss=inf"); `match` keeps out a best/min loss initialised to inf
        "Loss: inf",
        "loss: inf",
        "loss=inf",
        "loss = inf",
        "'loss': inf",
        "Loss is inf",
        "loss is inf",
        "gradients from `parameters` is non-finite",
        "but found invalid values",
        "Gradient overflow",
        "Attempted loss scale: ",
        # DeepSpeed's skipped step ("[deepscale]" before 0.3.x's rename) and transformers' Trainer reporting lr=0
        # while no optimizer step has run yet: fp16's loss-scale search at the start (fallback_facts below)
        "OVERFLOW! Rank ",
        "tried to get lr value before scheduler/optimizer started stepping",
        "because the input matrix contained non-finite values",
        # ESPnet: "The grad norm is nan. Skipping updating the model." (espnet2), "grad norm is nan. Do not update
        # model." (espnet1); the "inf" one is left out: under fp16 GradScaler's first steps overflow by design
        "grad norm is nan",
        # fairseq/optim/dynamic_loss_scaler.py (fp16_optimizer.py before 0.10; "AMP: " in amp_optimizer.py, 0.10.2+)
        "Minimum loss scale reached (",
        # Lightning's finite checks: the loss (loops/utilities.py check_finite_loss, "is nan or inf." in 0.7-1.3,
        # the tensor's repr after) and a parameter (utilities/finite_checks.py detect_nan_parameters, 0.7-2.0)
        "The loss returned in `training_step` is ",
        "Detected nan and/or inf values in `",
        # torch.multinomial (generate()'s sampling, an RL trainer's rollouts) given NaN/inf probabilities; the
        # backticks are newer releases' (threads show both)
        "probability tensor contains either ",
        # a constant past float16's range (65504) written into a Half tensor: a mask fill with -1e9 or
        # float32's min, a score set to 2**30, in a model run in float16
        "value cannot be converted to type at::Half without overflow",
        # tensorboardX's x2num.check_nan: a value given to the SummaryWriter (add_scalar, add_histogram) that is
        # NaN or inf; printed as "Warning: ..." (print) or "WARNING:root:..." (logging) and the run goes on
        "NaN or Inf found in input tensor",
        # the gradient norm a trainer logs: transformers' Trainer (4.38+, its logs dict), mmcv/mmengine's text logger;
        # an "inf" alone is left out, as GradScaler's first steps overflow by design
        "'grad_norm': nan",
        "grad_norm: nan",
        # torch 1.9's clip_grad_norm_ before error_if_nonfinite became an error (nn/utils/clip_grad.py)
        "Non-finite norm encountered in torch.nn.utils.clip_grad_norm_",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "fp16 dynamic loss scale overflow!",
        "[deepspeed] OVERFLOW!",
    ),
    # apex / DeepSpeed halving the loss scale is normal now and then; down to its minimum (DeepSpeed's default
    # min_loss_scale is 1) or a fraction it means every step overflows
    match=R(
        # a log_prob value outside a distribution's support is kinds/distributions.py's (NaN its other reading)
        r"^(?!.*(?:Gradient overflow|Attempted loss scale: |to be within the support \(|"
        # an inf that is not an infinite loss: a best/min loss a trainer starts at float("inf"), a word (info)
        r"(?i:\b(?:best|min|minimum|lowest|prev|previous)[_ .][^\n:=,]{0,30}?loss['\"]?\s{0,2}[:=]\s{0,2}inf\b)|"
        r"[Ll]oss['\"]?\s{0,2}(?:=|:|is)\s{0,2}inf(?!ini(?:ty|te))[a-z]))|"
        r"reducing loss scale to (?:0(?:\.\d+)?|\d(?:\.\d+)?e-\d+)\b|"
        r"Attempted loss scale: [^\n]{0,40}reducing to (?:1(?:\.0+)?|0(?:\.\d+)?|\d(?:\.\d+)?e-\d+)(?![\d.])|"
        # a step skipped while the scale is still high: the dynamic loss scale searching down from 2**32 (or
        # initial_scale_power), every fp16 run's first steps; the same line down to 1 is the branch above
        r"(?P<scale_search>OVERFLOW! Rank \d+ Skipping step\.)(?![^\n]{0,80}reducing to (?:1(?:\.0+)?|0(?:\.\d+)?|"
        r"\d(?:\.\d+)?e-\d+)(?![\d.]))"
    ),
    facts=(
        # the first alternative of `match` takes this line (it holds none of the words it keeps out)
        R(
            r"(?P<scale_search_lr>tried to get lr value before scheduler/optimizer started stepping, returning lr=0)"
        ),
        R(
            r"OVERFLOW! Rank \d+ Skipping step\. Attempted loss scale: [\d.e+]{1,24}, reducing to (?P<scale_to>[\d.e+]{1,24})"
        ),
        R(
            r"(?P<min_scale>loss scale already at minimum|reducing loss scale to (?:0(?:\.\d+)?|\d(?:\.\d+)?e-\d+)\b|"
            r"Attempted loss scale: [^\n]{0,40}reducing to (?:1(?:\.0+)?|0(?:\.\d+)?)(?![\d.]))"
        ),
        R(
            r"(?P<what>Function '\w+' returned nan values in its \w+ output|Loss became infinite or NaN at "
            r"iteration=?\s*\d+|Detected inf/nan during batch_number=\d+|"
            r"[Ll]oss['\"]?\s{0,2}(?:=|:|is)\s{0,2}(?:nan|NaN|inf(?:inity|inite)?)\b|"
            r"is non-finite|but found invalid values|input matrix contained non-finite values|"
            r"[Gg]rad norm is nan\. (?:Skipping updating the model|Do not update model)|'?grad_norm'?: nan\b|"
            r"Non-finite norm encountered in torch\.nn\.utils\.clip_grad_norm_|"
            r"The loss returned in `training_step` is [^\n]{1,80}?(?=\.(?: |$))|Detected nan and/or inf values in `[^`\n]{1,200}`)"
        ),
        R(r"Minimum loss scale reached \((?P<fairseq_min_scale>[\d.e-]{1,12})\)"),
        R(r"(?P<detector_abort>DebugUnderflowOverflow: inf/nan detected, aborting)"),
        R(r"(?P<sampling_nan>probability tensor contains either `?inf`?, `?nan`? or element < 0)"),
        R(r"(?P<half_constant>value cannot be converted to type at::Half without overflow)"),
        R(r"(?P<tensorboard_nan>NaN or Inf found in input tensor)"),
        # apex/amp/handle.py (scale_loss's skip_step; the loss id is missing in apex's first amp, opt.py):
        # "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 0.03125"; DeepSpeed's own
        # lines say "[deepspeed]" and "Attempted loss scale"
        R(
            r"(?P<apex_scaler>Gradient overflow\.\s+Skipping step, loss scaler (?:\d+ )?reducing loss scale to "
            r"(?P<apex_scale>[\d.e+-]{1,30}))"
        ),
        # torchdoctor's detector names the module in its error (numerics/detector.py); transformers' does not
        R(
            r"First inf/nan in (?P<overflow_pass>forward|backward) of (?P<overflow_module>\S*) "
            r"\((?P<overflow_class>\w+)\)"
        ),
    ),
    # every one of these checks looks for a non-finite value, not for where it came from: anomaly mode's
    # engine.cpp validate_outputs ("returned nan values in its Nth output") for any backward node, DeepSpeed's
    # loss_scaler.py _has_inf_or_nan and clip_grad_norm_'s error_if_nonfinite for any gradient. An op at the edge
    # of its domain (sqrt or a norm of 0, log of 0, 0/0) or NaN in the data prints the same lines in fp32 too;
    # only a model trained in float16 as a whole (the log says so) makes the overflow the log's own reading
    confirm=lambda hits, ctx: "pure_half" in ctx.facts,
    # a step skipped while the loss scale is still high, and the lr 0 reported meanwhile, are every fp16 run's
    # first steps: a finding only where the log shows no error
    fallback_facts=("scale_search", "scale_search_lr"),
    # a skipped step alone is every fp16 run's start (DeepSpeed's hysteresis lines too): a reading only beside the
    # symptom users bring, the Trainer's lr 0
    requires_beside=(("scale_search", ("lr_before_first_step",)),),
    also=(
        Alternative(
            "nan_at_zero",
            "an operation at the edge of its domain (sqrt or a norm of 0, log of 0, a division by 0), NaN in fp32 "
            "as well",
            "Keep each input inside its op's domain: x.clamp(min=eps) before sqrt, log or a division, "
            "torch.log(p + eps), (x.pow(2).sum(-1) + eps).sqrt() for a norm; with "
            "torch.autograd.set_detect_anomaly(True) the first backward that returns NaN is named "
            "(SqrtBackward0, LogBackward0, DivBackward0).",
            # a constant past float16's range is no NaN of an op's domain
            unless=("half_constant", "scale_search", "scale_search_lr"),
        ),
        Alternative(
            "bad_training_data",
            "NaN or inf already in the data (a sample, a label, a feature normalised by a zero std)",
            "Check each batch before the model: torch.isfinite(x).all() for inputs and targets (and the "
            "dataset's normalisation statistics); fix or drop the samples that fail.",
            # generation's probabilities and a constant written into a tensor are the model's, not the data's
            unless=("half_constant", "sampling_nan", "scale_search", "scale_search_lr"),
        ),
    ),
    describe=_nan,
)


# a model trained in float16 as a whole, not under autocast: a project's half-precision option on its command
# line, or a model cast to half in a traceback's source line
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("half", R(r"(?P<pure_half>--precision[= ]['\"]?half\b|\bmodel\.half\(\))")),
    # transformers' Trainer reporting lr=0 before any optimizer step: what users of a loss-scale search see
    (
        "tried to get lr value before",
        R(r"(?P<lr_before_first_step>tried to get lr value before scheduler/optimizer started stepping)"),
    ),
    # the overflow detector's first lines about the module it stopped at (numerics/detector.py's detect_overflow,
    # transformers' debug_utils): "input[0] has infs" says the value was already bad on the way in
    ("] has infs", R(r"^(?:\[\w+\]:\s?)?(?P<overflow_input>input\[\d+\]) has infs$")),
    ("] has nans", R(r"^(?:\[\w+\]:\s?)?(?P<overflow_input>input\[\d+\]) has nans$")),
    # gradient checkpointing in the run: torch's utils/checkpoint.py warnings (the reentrant variant with no input
    # that requires grad; the use_reentrant default it asks to be given), transformers' use_cache notice and its
    # printed TrainingArguments
    (
        "None of the inputs have requires_grad=True",
        R(r"(?P<grad_ckpt>None of the inputs have requires_grad=True)"),
    ),
    (
        "please pass in use_reentrant",
        R(r"(?P<grad_ckpt>torch\.utils\.checkpoint: please pass in use_reentrant)"),
    ),
    ("use_reentrant parameter should be", R(r"(?P<grad_ckpt>the use_reentrant parameter should be passed)")),
    (
        "incompatible with gradient checkpointing",
        R(r"(?P<grad_ckpt>is incompatible with gradient checkpointing)"),
    ),
    ("gradient_checkpointing=True", R(r"(?P<grad_ckpt>\bgradient_checkpointing=True\b)")),
)


def _unused(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("static_graph"):
        return (
            "DDP with static_graph=True: a parameter used in one iteration went unused in the next"
            + on_ranks(hits),
            "static_graph=True promises DDP the same used parameters every step, and this model changes them "
            "(a branch taken only sometimes, a frozen or skipped layer). Drop static_graph (DistributedDataParallel("
            "model, find_unused_parameters=True) for a graph that changes), or make every step use the same "
            "parameters.",
        )
    if facts.get("zero_unused"):
        return (
            "DeepSpeed ZeRO: some parameters got no gradient (not used in producing the loss)"
            + on_ranks(hits),
            "A trainable parameter did not take part in the loss this step (an unused layer or head, a branch "
            "not taken). Remove it or freeze it (requires_grad=False), or let ZeRO skip it: "
            '"zero_optimization": {"ignore_unused_parameters": true} in the DeepSpeed config (stage 2 refuses '
            "by default; a model whose used parameters change between steps needs it).",
        )
    summary = "DDP: some parameters got no gradient (not used in producing the loss)" + on_ranks(hits)
    if facts.get("names"):
        summary += f": {facts['names'].strip()[:300]}"
    elif facts.get("indices"):  # without TORCH_DISTRIBUTED_DEBUG torch prints positions, not names
        indices = facts["indices"].strip()[:300]
        summary += f": parameter indices {indices} (of those that require grad, in model.parameters() order)"
    fix = (
        "A parameter defined in the model (in __init__) was not used in forward, or its output did not reach "
        "the loss, so DDP waited for its gradient. Remove the unused layer or make every forward output take "
        "part in the loss; or, if some parameters are legitimately unused in some steps:\n"
        "DistributedDataParallel(model, find_unused_parameters=True)   # costs a graph traversal per step\n"
        "TORCH_DISTRIBUTED_DEBUG=DETAIL names the parameters that got no gradient."
    )
    if ctx.facts.get("grad_ckpt") and not facts.get("zero_unused"):
        summary = (
            summary + "; this run uses gradient checkpointing, whose reentrant variant gives a checkpointed "
            "block's parameters no gradient when none of its inputs requires grad"
        )
        fix = (
            "This run uses gradient checkpointing. Its reentrant variant (torch.utils.checkpoint with "
            "use_reentrant=True, what torch.utils.checkpoint and transformers' gradient_checkpointing use when it "
            "is not given) "
            "computes no gradient for a checkpointed block when none of the block's inputs requires grad (frozen "
            "embeddings under LoRA / PEFT, a frozen backbone), so DDP waits for those parameters. Use the "
            'non-reentrant variant: gradient_checkpointing_kwargs={"use_reentrant": False} (TrainingArguments or '
            "model.gradient_checkpointing_enable), or model.enable_input_require_grads(); find_unused_parameters=True "
            "does not fix this one (with reentrant checkpointing it fails as 'marked ready twice'). Otherwise: "
            + fix
        )
    plain = "DistributedDataParallel(model, find_unused_parameters=True)   # costs a graph traversal per step"
    if ctx.facts.get("saw_hf_trainer"):  # transformers' Trainer wraps the model: its argument
        fix = fix.replace(
            plain,
            "TrainingArguments(..., ddp_find_unused_parameters=True)   # --ddp_find_unused_parameters true on "
            "the command line; costs a graph traversal per step",
        )
    elif ctx.facts.get("saw_accelerate"):  # accelerate's prepare() wraps it
        fix = fix.replace(
            plain,
            "Accelerator(kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)])   # from "
            "accelerate.utils; costs a graph traversal per step",
        )
    # Lightning builds the DDP wrapper (its frames, or its own message): tell its Trainer
    if ctx.facts.get("framework") == "lightning" or facts.get("lightning_module"):
        fix = fix.replace(
            "DistributedDataParallel(model, find_unused_parameters=True)   # costs a graph traversal per step",
            'Trainer(strategy="ddp_find_unused_parameters_true")   # Lightning >= 2.0; 1.x: '
            "strategy=DDPStrategy(find_unused_parameters=True); costs a graph traversal per step",
        )
    return summary, fix


DDP_UNUSED_PARAMETERS = Recogniser(
    # torch/csrc/distributed/c10d/reducer.cpp ("Expected to have finished reduction in the prior iteration")
    kind="ddp_unused_parameters",
    templates=(
        "torch_cpp:expected-to-have-finished-reduction-in",
        # the same check under static_graph=True (the summary names it: a graph that changed, not a stray parameter)
        "torch_cpp:expected-to-have-finished-reduction-in-2",
        # Lightning's DDP strategy puts its own message in place of torch's (strategies/ddp.py on_exception)
        "lightning:it-looks-like-your-lightningmodule-has",
        # deepspeed/runtime/zero/stage_1_and_2.py: ZeRO's own check of parameters without a gradient
        "deepspeed:this-assert-indicates-that-your-module",
        # the same message's later lines (Reducer::ensure_prior_reduction_finished), read where a log
        # wrapped or cut it before its first line
        "torch_cpp:parameter-indices-which-did-not-receive",
        "torch_cpp:parameters-which-did-not-receive-grad",
        "torch_cpp:you-can-enable-unused-parameter-detection",
        "torch_cpp:since-find-unused-parameters-true-is",
        "torch_cpp:making-sure-all-forward-function-outputs",
        "torch_cpp:if-you-already-have-done-the",
        # Reducer::mark_variable_ready with static_graph=True: a parameter unused in the first iteration
        # that a later one uses (one line, REDUCER_CHECK joins its pieces)
        "torch_cpp:your-training-graph-has-changed-in",
        "torch_cpp:one-parameter-is-unused-in-first",
        "torch_cpp:then-got-used-in-the-second",
        "torch_cpp:compatible-with-static-graph-set-to",
    ),
    title="DDP unused parameters",
    anchors=(
        "Expected to have finished reduction in the prior iteration",
        "has parameters that were not used in producing the loss returned by training_step",
        "This assert indicates that your module has parameters that",
        "which did not receive grad for rank",
        "You can enable unused parameter detection by passing the keyword argument",
        "Since `find_unused_parameters=True` is enabled, this likely",
        "making sure all `forward` function outputs participate in calculating loss",
        "wasn't able to locate the output tensors in the return value",
        "Your training graph has changed in this iteration",
        "one parameter is unused in first iteration, but",
        "then got used in the second iteration. this is not",
        "compatible with static_graph set to True",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "then got used in the second iteration",
    ),
    span=6,
    facts=(
        R(r"(?P<zero_unused>This assert indicates that your module has parameters that)"),
        R(r"(?P<lightning_module>It looks like your LightningModule) has parameters that were not used"),
        R(
            r"(?P<static_graph>not compatible with static_graph set to True|Your training graph has changed in this iteration)"
        ),
        R(r"Parameters which did not receive grad for rank \d+: (?P<names>[^\n]{1,400})"),
        R(r"Parameter indices which did not receive grad for rank \d+: (?P<indices>[^\n]{1,400})"),
    ),
    # under gradient checkpointing the same message is its reentrant variant leaving frozen-input blocks without
    # gradients (huggingface/peft#951, huggingface/trl#835), whose fix is not find_unused_parameters: likely there
    confirm=lambda hits, ctx: (
        "grad_ckpt" not in ctx.facts
        or any("static_graph" in h.facts or "zero_unused" in h.facts for h in hits)
    ),
    describe=_unused,
)


def _twice(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    index = first(hits, "index")
    name = first(hits, "name")
    if first(hits, "zero_twice"):
        return (
            f"DeepSpeed ZeRO: the gradient of parameter {first(hits, 'zero_twice')} was computed twice in one "
            "backward" + on_ranks(hits),
            "ZeRO reduces each parameter's gradient once per backward; a second one comes from reentrant "
            "activation checkpointing around layers that run twice, a module (or tied weight) used twice in one "
            "forward, or two backward() calls per step. Use non-reentrant checkpointing "
            '(transformers: gradient_checkpointing_kwargs={"use_reentrant": False}; torch.utils.checkpoint.'
            "checkpoint(..., use_reentrant=False)), call engine.backward once per step, or turn off "
            'reduce_scatter/contiguous_gradients ("zero_optimization": {"stage": 2, "reduce_scatter": false}) '
            "for a parameter that is shared on purpose.",
        )
    summary = (
        "DDP: a parameter was marked ready twice in one iteration"
        + (f" (parameter {name or 'at index ' + index})" if (name or index) else "")
        + on_ranks(hits)
    )
    fix = (
        "Its gradient hook fired twice: usually reentrant activation (gradient) checkpointing around layers "
        "that run more than once per step, or a module used twice in one forward. Use non-reentrant "
        "checkpointing:\n"
        "torch.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)   # transformers: "
        'model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})\n'
        "(transformers 5.23 names these activation_checkpointing_enable and activation_checkpointing_kwargs, in "
        "TrainingArguments too; the old names still work there, as deprecated aliases until v6)\n"
        "or, when the graph is the same every step, DistributedDataParallel(..., static_graph=True) (older "
        "torch: model._set_static_graph()).\n"
        "With DistributedDataParallel(..., find_unused_parameters=True) reentrant checkpointing also trips it: "
        "the parameters its recomputation uses in backward were already marked by the unused-parameter search. "
        "If every parameter takes part in the loss, pass find_unused_parameters=False (as torch's longer "
        "message advises; trainers: ddp_find_unused_parameters=False)."
    )
    return summary, fix


DDP_READY_TWICE = Recogniser(
    # torch/csrc/distributed/c10d/reducer.cpp ("Expected to mark a variable ready only once")
    kind="ddp_ready_twice",
    templates=(
        "torch_cpp:expected-to-mark-variable-ready-only",
        # deepspeed/runtime/zero/stage_1_and_2.py: ZeRO's check of a gradient reduced twice
        "deepspeed:the-parameter-has-already-been-reduced",
        # the same message's later lines (Reducer::mark_variable_ready's REDUCER_CHECK), read where a log
        # wrapped or cut it before its first line
        "torch_cpp:parameters-been-used-by-different-reentrant",
        "torch_cpp:multiple-times-and-hence-marking-variable",
        "torch_cpp:please-make-sure-model-parameters-are",
        "torch_cpp:example-if-you-use-multiple-checkpoint",
        "torch_cpp:same-part-of-your-model-it",
        "torch_cpp:then-however-if-an-unused-parameter",
        "torch_cpp:using-checkpoint-the-gradient-will-show",
        "torch_cpp:disable-unused-parameter-detection-by-passing",
        "torch_cpp:ddp-does-not-support-such-use",
        "torch_cpp:wrapper-to-figure-out-if-any",
        "torch_cpp:unused-for-unused-parameters-ddp-would",
        "torch_cpp:graph-at-later-point-in-time",
        "torch_cpp:parameters-in-the-model-participate-in",
        "torch_cpp:in-the-model-do-not-change",
    ),
    title="DDP parameter marked ready twice",
    anchors=(
        "Expected to mark a variable ready only once",
        "parameters been used by different reentrant backward passes",
        "and hence marking a variable ready multiple times",
        "Please make sure model parameters are not shared across multiple",
        "if you use multiple `checkpoint` functions to wrap the",
        "same part of your model, it would result in the same set of",
        "if an unused parameter becomes part of the autograd",
        "the gradient will show up unexpectedly",
        "disable unused parameter detection by passing the keyword argument",
        "DDP does not support such use cases in default",
        "wrapper to figure out if any of the module's parameters went",
        "For unused parameters, DDP would not expect gradients from",
        "graph at a later point in time (e.g., in a reentrant backward when",
        "parameters in the model participate in the backward pass, you can",
        "in the model do not change over iterations, You can try to use",
        "has been marked as ready twice",
        # DeepSpeed's stage 1/2 prints it with runs of spaces before "Gradient" (a continued string): an anchor
        # across them would miss the line as printed
        "Gradient computed twice for this partition",
    ),
    span=2,
    facts=(
        R(r"The parameter (?P<zero_twice>\S{1,60}) has already been reduced"),
        R(
            r"Parameter at index (?P<index>\d+)(?: with name (?P<name>\S{1,200}))? has been marked as ready twice"
        ),
    ),
    describe=_twice,
)


def _single_sample(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    size = first(hits, "input_size")
    summary = "BatchNorm in training mode got a batch of one sample" + (
        f" (input size {size})" if size else ""
    )
    if "saw_dataparallel" in ctx.facts:
        summary += ": DataParallel split the batch so one replica got a single sample"
    return (
        summary + on_ranks(hits),
        "BatchNorm needs more than one value per channel to compute batch statistics in training. A last "
        "batch of one (the dataset size modulo the batch size), or DataParallel's split of a small batch over "
        "GPUs (a batch smaller than 2 x the number of GPUs), gives a replica one sample: use "
        "DataLoader(..., drop_last=True) and a batch size of at least 2 per GPU; at inference call "
        "model.eval() first; for batches of one by design, use GroupNorm/LayerNorm instead.",
    )


BATCHNORM_SINGLE_SAMPLE = Recogniser(
    # torch/nn/functional.py _verify_batch_size has two callers: batch_norm in training mode, passing
    # input.size() ("got input size torch.Size([1, 256, 1, 1])"), and group_norm in any mode, passing the list
    # [N * C // num_groups, num_groups, *spatial] ("got input size [1, 32, 1, 1]": a GroupNorm with one channel
    # per group on a 1x1 input of batch one, which model.eval() does not cure). The C++ frontend's BatchNorm
    # (torch/csrc/api/src/nn/modules/batchnorm.cpp) prints a list too. Certain on torch.Size only.
    kind="batchnorm_single_sample",
    title="BatchNorm given a single sample",
    anchors=("Expected more than 1 value per channel when training",),
    templates=("torch_cpp:expected-more-than-value-per-channel",),
    facts=(
        R(r"got input size (?P<input_size>torch\.Size\(\[[\d, ]{1,60}\]\)|\[[\d, ]{1,60}\])"),
        R(r"got input size (?P<batch_norm_size>torch\.Size\()"),
    ),
    confirm=lambda hits, ctx: any("batch_norm_size" in h.facts for h in hits),
    also=(
        Alternative(
            "input_too_small",
            "a GroupNorm with one value per group (batch one, one channel per group, a 1x1 input), in any mode",
            "GroupNorm checks its input in eval mode too: with num_groups equal to the channels, a 1x1 input and "
            "a batch of one, each group holds one value. Use fewer groups (channels // num_groups of 2 or more), "
            "a larger input, or a batch of two or more.",
            unless=("batch_norm_size",),
        ),
    ),
    describe=_single_sample,
)


def _shm(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    what = facts.get("what", "a DataLoader worker ran out of shared memory").strip()
    summary = f"DataLoader workers out of shared memory (/dev/shm): {what}" + on_ranks(hits)
    if facts.get("worker_exited") and len(hits) == 1:
        summary = (
            f"{what}: the worker's own report is not in this log; most often /dev/shm was full"
            + on_ranks(hits)
        )
    if facts.get("ancdata"):
        summary = f"DataLoader workers ran out of file descriptors passing tensors ({facts['ancdata']})"
        fix = (
            "Raise the open-file limit (ulimit -n 65536) or share tensors through files instead of descriptors:\n"
            "torch.multiprocessing.set_sharing_strategy('file_system')"
        )
        return summary, fix
    if facts.get("shm_mmap"):
        summary = f"mapping a tensor shared between processes failed: {facts['shm_mmap'].strip()}" + on_ranks(
            hits
        )
        fix = (
            "A tensor a DataLoader worker (or another process) shares lives in a file </torch_...> that each "
            "receiver maps: mmap refused it with ENOMEM, which Linux returns when the process would exceed its number "
            "of memory mappings (vm.max_map_count, 65530 by default: every shared tensor held is one) or the memory "
            "left. Hold fewer shared tensors at once: fewer num_workers or a smaller prefetch_factor, batches "
            "collated into a few large tensors rather than many small ones, and no list of batches kept across "
            "steps; raise the limit (sysctl -w vm.max_map_count=262144) and check the host's free memory and "
            "/dev/shm (df -h /dev/shm; Docker --shm-size)."
        )
        return summary, fix
    fix = (
        "DataLoader workers hand batches to the main process through shared memory (/dev/shm), and it is "
        "full or too small. Raise the shared memory limit: in Docker run with --shm-size=16g (or --ipc=host); "
        "on Kubernetes mount an emptyDir with medium: Memory at /dev/shm; check `df -h /dev/shm`.\n"
        "Or need less of it: fewer num_workers, a smaller batch or prefetch_factor."
    )
    return summary, fix


DATALOADER_SHM = Recogniser(
    # torch/utils/data/_utils/signal_handling.py and worker.py, torch/csrc/DataLoader.cpp,
    # torch/multiprocessing (MapAllocator "unable to write to file </torch_...>")
    kind="dataloader_shm",
    templates=(
        "torch:too-many-open-files-communication-with",
        "torch:dataloader-worker-pid-exited-unexpectedly",
        "torch_native:unable-to-mmap-bytes-from-file",
    ),
    title="DataLoader shared memory",
    anchors=(
        "out of shared memory",
        "insufficient shared memory",
        "unable to write to file </torch_",
        "unable to open shared memory object",
        # the same file's (aten MapAllocator.cpp) mmap of the shared file refused: ENOMEM, the process's mappings
        # or memory, not always /dev/shm; only a shared tensor's </torch_...> file (the match), not a checkpoint
        # torch.load(mmap=True) maps
        "bytes from file <",
        "received 0 items of ancdata",
        "Too many open files. Communication with the workers",
        "is killed by signal: Bus error",
        # torch/utils/data/dataloader.py: a worker gone without its own report in the paste (its bus error, a
        # SIGKILL, a crash): /dev/shm most often, not always. The closing parenthesis of its "(pid(s) ...)" is part
        # of the anchor: the same file's "Pin memory thread exited unexpectedly" is another thread, and the match
        # below never took it
        ") exited unexpectedly",
    ),
    absorbs=("worker_crash",),  # a DataLoader worker's bus error
    match=R(
        r"out of shared memory|insufficient shared memory|unable to write to file </torch_|unable to open shared "
        r"memory object|unable to mmap \d+ bytes from file </torch_|received 0 items of ancdata|Too many open files\. Communication with the workers|"
        r"is killed by signal: Bus error|(?P<worker_exited>DataLoader worker \(pid\(s\) [\d, ]{1,200}\) exited "
        r"unexpectedly)"
    ),
    # torch/csrc/DataLoader.cpp's SIGBUS handler ("This might be caused by insufficient shared memory") and the
    # main process's "killed by signal: Bus error. It is possible that dataloader's workers are out of shared
    # memory" follow any SIGBUS in a worker: a full /dev/shm most often, or a memory-mapped file (np.memmap,
    # Arrow, LMDB) truncated under the workers. Certain beside shared memory's own refusal (</torch_...>,
    # shm_open) or torch's descriptor-passing errors
    generic=(
        ") exited unexpectedly",
        "is killed by signal: Bus error",
        "bytes from file <",
        "insufficient shared memory",
        "out of shared memory",
    ),
    also=(
        Alternative(
            "worker_crash",
            "a bus error that is not shared memory: a memory-mapped dataset file (np.memmap, an Arrow or LMDB "
            "file) truncated or rewritten while the workers read it",
            "If /dev/shm has room (df -h /dev/shm during the run), check the dataset's memory-mapped files: none may "
            "be rewritten or truncated while training reads them (regenerate them before the run, copy them to "
            "local disk).",
            when=("bus_error",),
        ),
        Alternative(
            "worker_killed",
            "a worker killed by the out-of-memory killer (host RAM: each worker holds its own copy of the dataset)",
            "Check `dmesg -T | grep -i -E 'killed process|oom'`; use fewer num_workers, or keep the dataset out of "
            "the workers' memory (memory-mapped files, lazy loading in __getitem__).",
            when=("worker_exited",),
        ),
        Alternative(
            "worker_crash",
            "a crash in the dataset's own native code in a worker",
            "DataLoader(num_workers=0) runs the dataset in the main process, where the crash or error shows "
            "its stack.",
            when=("worker_exited",),
        ),
        # a faulty sample kills its worker the same way (a decoder that crashes on a truncated image, a
        # generated file in the wrong format), and a worker's own error can be missing from a cut paste
        Alternative(
            "bad_training_data",
            "a faulty sample of the training data (a corrupt or malformed file) that the worker dies loading",
            "Load every sample once outside the DataLoader (for i in range(len(dataset)): dataset[i], printing "
            "the index it stops at), or run with num_workers=0 to see the error and the file; fix, drop or "
            "regenerate that data.",
            when=("worker_exited",),
        ),
    ),
    facts=(
        R(
            r"(?P<what>DataLoader worker \(pid[^\n)]{0,40}\) is killed by signal: [\w ]{1,40}|"
            r"Unexpected bus error encountered in worker|unable to write to file </torch_[^>\n]{0,80}>[^\n]{0,80}|"
            r"unable to open shared memory object[^\n]{0,120}|DataLoader worker \(pid\(s\) [\d, ]{1,200}\) exited "
            r"unexpectedly)"
        ),
        R(r"(?P<ancdata>received 0 items of ancdata|Too many open files)"),
        R(r"(?P<shm_mmap>unable to mmap \d+ bytes from file </torch_[^>\n]{0,80}>[^\n]{0,80})"),
        R(r"(?P<bus_error>is killed by signal: Bus error|Unexpected bus error encountered in worker)"),
    ),
    describe=_shm,
)


_PIDS = re.compile(r"DataLoader worker \(pid(?:\(s\))? (?P<pids>[\d, ]{1,200})\)")


def _pids(hits: list[Hit]) -> set[str]:
    return {
        pid.strip()
        for h in hits
        for found in [_PIDS.search(h.facts.get("what", ""))]
        if found
        for pid in found["pids"].split(",")
    }


def exit_told_twice(by_kind: dict[str, list[Hit]]) -> bool:
    """Whether the DataLoader's "worker (pid(s) N) exited unexpectedly" is only the same worker's death that its
    "DataLoader worker (pid N) is killed by signal: Killed" (or ": Segmentation fault", a worker's crash) already
    says (torch's _try_get_data raises the first from the second): the /dev/shm reading of the bare exit, saying
    the worker's own report is not in the log, would be a second, wrong cause beside it."""
    exited = by_kind.get("dataloader_shm", [])
    killed = by_kind.get("worker_killed", []) + by_kind.get("worker_crash", [])
    if not exited or not killed or not all("worker_exited" in h.facts for h in exited):
        return False
    return bool(_pids(exited)) and _pids(exited) <= _pids(killed)


_OOM_SAID = re.compile(r"oom[-_]?kill|[Oo]ut of memory: Killed|Out Of Memory|memory limit \(", re.IGNORECASE)


def _killed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if "TIME LIMIT" in facts.get("what", ""):
        return (
            f"SLURM killed the job at its time limit: {quote(facts['what'])}" + on_ranks(hits),
            "The job ran past its --time (#SBATCH --time=HH:MM:SS): ask for more time (within the partition's "
            "limit, sinfo -o '%P %l'), or save checkpoints often and resubmit to resume (Lightning's "
            "SLURM auto-requeue, --signal=USR1@90). If the run should have ended earlier, it hung: see where "
            "with torchdoctor launch --watchdog.",
        )
    what = quote(facts.get("what", "a worker was killed with SIGKILL"))
    loader = what.startswith("DataLoader worker")
    summary = f"a {'DataLoader worker ' if loader else ''}process was killed (SIGKILL): {what}" + on_ranks(
        hits
    )
    # the kernel's or the scheduler's own words that memory ran out: the killer is named, not guessed
    said = " ".join(h.facts.get("what", "") for h in hits)
    if _OOM_SAID.search(said):
        summary += " — the out-of-memory killer ended it: host RAM (or the job's memory limit) ran out, not GPU memory"
    fix = (
        "A Python program does not stop itself with SIGKILL: the kernel's out-of-memory killer (host RAM, not GPU "
        "memory) or the scheduler (a memory or time limit) most often did, else something that sent it on purpose "
        "(a kill -9, a watchdog of the job's own: os.kill(pid, SIGKILL)). Check `dmesg -T | grep -i -E 'killed process|"
        "oom'` on that host and the job's memory limit (SLURM: sacct -j <job> -o MaxRSS,ReqMem,State).\n"
        "To need less host RAM: fewer DataLoader num_workers, load the model once (low_cpu_mem_usage=True, "
        "or on rank 0 then broadcast), memory-map the dataset instead of loading it per rank."
    )
    if loader:
        # torch/utils/data/_utils/signal_handling.py: the main process's SIGCHLD handler raises it wherever that
        # process is when a worker dies, a backward or an optimizer step as often as the loop's next batch
        fix += (
            "\nHere one of the DataLoader's worker processes was killed, not the rank itself: each worker holds "
            "what the dataset reads (a Python list of samples is copied page by page as workers touch it; numpy "
            "arrays or tensors are not), and persistent_workers=True keeps it from epoch to epoch. Give the "
            "DataLoader fewer workers, keep the data in arrays or memory-mapped files, or read it lazily in "
            "__getitem__. torch raises this in the main process wherever it was when the worker died: the line "
            "named below is not where the memory went."
        )
        made, cpus = ctx.facts.get("loader_workers"), ctx.facts.get("loader_workers_suggested")
        if made and cpus:
            # printed once per DataLoader at its first iteration, long before a worker dies: the evidence that
            # there were more workers than the machine suggested (found with pytorch/examples' mnist under DDP)
            summary += (
                f"; the DataLoader warned earlier that it makes {made} worker processes, {cpus} suggested"
            )
            fix += (
                f"\nThis log's DataLoader warned earlier that it makes {made} worker processes where {cpus} are "
                "suggested for this machine's CPUs: every rank starts its own, so lower num_workers to the CPUs "
                "divided by the ranks per machine first."
            )
    return summary, fix


WORKER_KILLED = Recogniser(
    # torchrun's failure summary (exitcode -9), the kernel's OOM killer, SLURM's cgroup OOM handler
    kind="worker_killed",
    title="a process killed with SIGKILL",
    # the deepspeed launcher's "[ERROR] [launch.py:434:sigkill_handler] [<cmd>] exits with return code = -9"
    # SLURM: slurmstepd's cgroup OOM report (v1: "oom-kill event(s)", v2: "oom_kill event"), srun's task state
    anchors=(
        "exitcode",
        "SIGKILL",
        "oom-kill",
        "oom_kill event",
        "Out Of Memory",
        "Killed process",
        "Killed",
        "exits with return code = -9",
        "DUE TO TIME LIMIT",
        # slurmstepd's accounting (jobacct_gather: JobAcctGatherParams=OverMemoryKill) over the job's --mem
        "exceeded memory limit (",
        "exceeded virtual memory limit (",
        "invoked oom-killer",
        "status 137",
        "code 137",
        "OOMKilled",
    ),
    match=R(
        r"(?P<what>exitcode\s*:?\s*-9\b[^\n]{0,80}|Signal 9 \(SIGKILL\)[^\n]{0,80}|Signals\.SIGKILL|"
        r"exits with return code = -9\b|"
        r"signal SIGKILL|(?:DataLoader worker \(pid\(?s?\)? [\d, ]{1,60}\) )?is killed by signal: Killed|Detected \d+ oom[-_]kill event|task [\d,\-]+: Out Of Memory|"
        # the kernel's OOM killer (mm/oom_kill.c): the machine's ("Out of memory") or a cgroup's limit ("Memory
        # cgroup out of memory": a container's, a job's), and the line it starts with ("python invoked oom-killer")
        r"(?:Memory cgroup out|Out) of memory: Killed process \d+[^\n]{0,60}|\S{1,40} invoked oom-killer|"
        r"^\s*Killed\s*$|"
        # a shell's 128+9 for a process killed with SIGKILL (CPython's CalledProcessError, docker's "exited with
        # code 137"), and Kubernetes' reason for a container over its memory limit
        r"(?:exit status|exit code|exited with code) 137\b[^\n]{0,40}|\bOOMKilled\b|"
        r"line \d+: +\d+ Killed\b[^\n]{0,80}|exited on signal 9 \(Killed\)|task [\d,\-]+: Killed|"
        r"CANCELLED AT [^\n]{0,40} DUE TO TIME LIMIT|exceeded (?:virtual )?memory limit \(\w{1,30} > \w{1,30}\), being killed)"
    ),
    templates=(
        "system:shell-killed",
        "system:oom-killer",
        "system:oom-killer-invoked",
        "system:oom-killer-memory-cgroup",
        "system:kubernetes-oomkilled",
        "system:docker-exited-with-code",
        "deepspeed:exits-with-return-code",
        "system:slurm-oom-kill-events",
        "system:slurm-oom-kill-event",
        "schedulers:slurmstepd-step-time-limit",  # slurmstepd/req.c: a step's --time ran out
        "schedulers:slurmstepd-exceeded-memory-limit",
        "schedulers:slurmstepd-exceeded-virtual-memory-limit",
        "system:srun-task-out-of-memory",
        "system:openmpi-exited-on-signal",
        "system:srun-task-killed",
        "system:slurm-time-limit",
    ),
    # a shell's bare "Killed" is any SIGKILL (a user's kill -9 too); exitcode -9 / the OOM killer confirm it
    # srun's "task N: Killed" is any SIGKILL too (a time limit, scancel): likely
    confirm=lambda hits, ctx: any(
        not h.facts.get("what", "").strip().startswith(("Killed", "line"))
        and not h.facts.get("what", "").strip().endswith(": Killed")
        for h in hits
    ),
    absorbs=("child_failed",),
    # torchrun's elastic agent killing its own workers that outlived its SIGTERM once another had failed
    # (elastic/multiprocessing/api.py _close): a consequence, kinds/exits.py reads it for child_failed
    reject=R(r"forcefully exiting via (?:Signals\.)?SIGKILL"),
    describe=_killed,
)


# what the lines around a native death say its cause was: the evidence names the kind of crash, the signal only
# that the process died. glibc's malloc_printerr (malloc/malloc.c) aborts on a heap it finds corrupted, and a
# SIGSEGV inside malloc or free is the same corruption found later; libstdc++'s verbose terminate handler
# (libsupc++/vterminate.cc) names the C++ exception nobody caught; the shell reports SIGXFSZ (a write past
# `ulimit -f`) as "File size limit exceeded"
_HEAP = (
    r"double free or corruption[^\n]{0,12}|free\(\): (?:invalid [\w ]{1,20}|double free detected in tcache 2)|"
    r"corrupted size vs\. prev_size|corrupted double-linked list|malloc\(\): (?:corrupted top size|memory "
    r"corruption|unaligned tcache chunk detected)|munmap_chunk\(\): invalid pointer"
)
_HEAP_FRAMES = r"__libc_malloc|_int_malloc|_int_free|malloc_consolidate|__libc_free|__libc_realloc|cfree"
# the innermost frame of faulthandler's "Current thread 0x... (most recent call first):" that is a package's
# (its frames read 'line 12 in f', a traceback's 'line 12, in f': a main process's traceback below a worker's
# crash is not the crash's stack),
# and the library of a backtrace frame (Open MPI's "[ 2] /usr/lib/libfoo.so(sym+0x1)[0x...]", gdb's "#0 ... from
# /usr/lib/libfoo.so") other than the C library's and the dynamic loader's own
_CRASH_FACTS = (
    R(rf"(?P<heap>{_HEAP})"),
    R(rf"\((?P<heap_frame>{_HEAP_FRAMES})\+0x"),
    # faulthandler's stack of the thread that crashed ("Current thread", or "Stack" where it dumps that one alone),
    # innermost first: not another thread's it lists before it (tqdm's monitor waiting in threading.py)
    R(
        r"(?:Current thread 0x[0-9a-fA-F]{1,16}|Stack) \(most recent call first\):\n(?:[^\n]{0,400}\n){0,10}?"
        r'\s*File "[^"\n]{0,300}?[/\\](?:site|dist)-packages[/\\](?P<package>[A-Za-z_]\w{0,60})[/\\."][^"\n]{0,200}", line \d+ in '
    ),
    R(
        r"(?:\]|\bfrom) +(?:/[^\s(/]{1,80})*/(?P<library>lib(?!c\.so|pthread\.so|c-|gcc_s|dl\.so)[\w+.-]{1,60}?\.so)"
    ),
    R(r"(?P<file_size_limit>File size limit exceeded)"),
    R(r"terminate called after throwing an instance of '(?P<cpp_exception>[^'\n]{1,120})'"),
    R(r"what\(\): +(?P<cpp_what>[^\n]{1,200})"),
)


def _crash_evidence(facts: dict) -> tuple[str, str]:
    """What the lines beside a crash name: (the cause in a few words, the fix's line), or ("", "")."""
    if facts.get("heap") or facts.get("heap_frame"):
        # glibc's own words are the crash's line already; a crash inside malloc is named
        said = "" if facts.get("heap") else f" (it crashed inside {facts['heap_frame']})"
        return (
            f"the process's heap was corrupted{said}",
            "glibc aborts (SIGABRT) when malloc or free finds the heap corrupted, and a crash inside malloc or "
            "free is the same corruption found later: a native bug that wrote past its memory or freed it "
            "twice (in torch, an extension, a library), or two builds of one library (two libstdc++ or OpenMP "
            "runtimes, an extension built against another torch) loaded into one process. The frame that "
            "corrupted it is not the one that crashed: run it under gdb (gdb --args python train.py, then bt) or "
            "with `ulimit -c unlimited` to keep a core, reinstall the extensions against the torch installed, and "
            "change one library at a time (an environment variable the job sets, a library's release) to find it.",
        )
    if facts.get("cpp_exception") == "std::bad_alloc":
        return (
            "a C++ allocation failed (std::bad_alloc): host memory ran out, or a size computed wrong asked for "
            "more than any machine has",
            "std::bad_alloc is C++'s out-of-memory error (host RAM, not GPU memory): check the process's memory "
            "as it grows (free -h, the job's memory limit: sacct -j <job> -o MaxRSS,ReqMem), and need less of it "
            "(fewer DataLoader workers, a dataset read lazily, low_cpu_mem_usage=True) or ask for more.",
        )
    if facts.get("cpp_exception"):
        said = facts.get("cpp_what", "")
        what = f" ({quote(said)})" if said and said != facts["cpp_exception"] else ""
        return (
            f"a C++ exception nobody caught: {facts['cpp_exception']}{what}",
            "libstdc++ aborts the process (SIGABRT) when a C++ exception leaves a thread uncaught: its what() "
            "above is the error; the library whose type it is (c10:: torch, gloo:: gloo, std:: any) raised it.",
        )
    named = facts.get("package") and f"{facts['package']}'s code (the crash's Python stack)"
    named = named or (facts.get("library") and f"{facts['library']} (the crash's native backtrace)")
    crashed_in = facts.get("package") or facts.get("library") or ""
    if named and (crashed_in == "torch" or crashed_in.startswith(("libtorch", "libc10"))):
        # torch's own frame is where most native crashes surface (a kernel handed a bad tensor, a driver, an
        # extension that corrupted memory earlier): the general advice, not "reinstall torch built for torch"
        return f"it crashed in {named}", ""
    if named:
        return (
            f"it crashed in {named}",
            f"Reinstall the library named ({facts.get('package') or facts.get('library')}) built for the torch "
            "and Python installed (an extension built against another torch crashes this way, as do two "
            "libraries that bundle different libstdc++ / OpenMP runtimes: import them in the other order to "
            "check), or update it to a release that fixes the crash.",
        )
    return "", ""


def _crash(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    what = quote(facts.get("what", "a worker crashed"))
    if facts.get("file_size_limit"):
        return (
            f"a process was ended by the file-size limit (SIGXFSZ): {what}" + on_ranks(hits),
            "A write went past the largest file this shell lets a process write (ulimit -f; a checkpoint or a "
            "log is the usual file). Check `ulimit -f` (and `ulimit -a`) in the job's shell and the scheduler's "
            "limits, and raise it: `ulimit -f unlimited` before the run (or the job's file-size limit), or write "
            "smaller files.",
        )
    cause, evidence_fix = _crash_evidence(facts)
    summary = f"a process crashed: {what}" + on_ranks(hits)
    if cause:
        summary += f" — {cause}"
    fix = (
        "A crash in native code (a CUDA extension, a library built for another torch, a driver problem) or, "
        "for a bus error, a full /dev/shm. Get the Python stack of the crash: run it with "
        "PYTHONFAULTHANDLER=1 (python -X faulthandler), and check `dmesg` for Xid errors; a bus error in "
        "DataLoader workers wants a larger /dev/shm (docker --shm-size)."
    )
    if evidence_fix:
        # what the log says replaces the list of every native crash's causes
        fix = evidence_fix + " For the Python stack of the crash, run it with PYTHONFAULTHANDLER=1."
    if "worker" in facts.get("what", ""):
        fix += (
            "\nHere a DataLoader worker crashed: the dataset's own native code (an image or video decoder, "
            "OpenCV, a tokenizer) ran in a forked worker. DataLoader(num_workers=0) runs it in the main process, "
            "where the crash shows its stack; multiprocessing_context='spawn' avoids state a fork inherits "
            "(OpenCV's threads: cv2.setNumThreads(0))."
        )
    return summary, fix


# every line a crash is seen by is also what makes it a symptom, not a cause: anchors and generic alike
_CRASH_LINES = (
    "exitcode",
    "SIGSEGV",
    "Segmentation fault",
    "Bus error",
    "SIGBUS",
    "exits with return code = -11",
    "exits with return code = -7",
    # torch/csrc/DataLoader.cpp: a DataLoader worker's own signal handlers and its parent's report (a bus
    # error there is dataloader_shm's, a SIGKILL worker_killed's)
    ") is killed by signal: Segmentation fault",
    ") is killed by signal: Aborted",
    ") is killed by signal: Floating point exception",
    "Unexpected segmentation fault encountered in worker",
    "Unexpected floating-point exception encountered in worker",
    # the evidence of a native death's cause beside its signal (_HEAP, _CRASH_FACTS): glibc's abort on a corrupted
    # heap, libstdc++'s uncaught C++ exception, the shell's SIGXFSZ
    "double free or corruption",
    "free(): invalid",
    "double free detected in tcache",
    "corrupted size vs. prev_size",
    "corrupted double-linked list",
    "malloc(): corrupted top size",
    "malloc(): memory corruption",
    "malloc(): unaligned tcache chunk",
    "munmap_chunk(): invalid pointer",
    "terminate called after throwing an instance of",
    "File size limit exceeded",
    # faulthandler (Modules/faulthandler.c) on the other fatal signals: its stack below names the code. Not its
    # "Aborted": what aborted (a C++ exception's what(), glibc's words) is above it, and that leads
    "Fatal Python error: Floating point exception",
    "Fatal Python error: Illegal instruction",
)

WORKER_CRASH = Recogniser(
    # torchrun's failure summary (exitcode -11 / -7), the shell's "Segmentation fault (core dumped)"
    kind="worker_crash",
    templates=(
        "torch:failed-exitcode-local-rank-pid-of",
        "system:segfault",
        "deepspeed:exits-with-return-code",
        "torch_native:dataloader-worker-killed-by-signal",
        "torch_native:dataloader-unexpected-segfault-in-worker",
        "torch_native:dataloader-unexpected-fpe-in-worker",
        "system:glibc-double-free-or-corruption",
        "system:glibc-free-invalid-pointer",
        "system:glibc-free-invalid-size",
        "system:glibc-tcache-double-free",
        "system:glibc-corrupted-size-vs-prev-size",
        "system:glibc-corrupted-double-linked-list",
        "system:glibc-malloc-corrupted-top-size",
        "system:glibc-malloc-memory-corruption",
        "system:glibc-malloc-unaligned-tcache-chunk",
        "system:glibc-munmap-chunk-invalid-pointer",
        "system:libstdcxx-terminate-uncaught",
        "system:openmpi-signal-handler",
        "system:shell-file-size-limit",
        "system:faulthandler-fatal-signal",
    ),
    title="process crashed",
    anchors=_CRASH_LINES,
    match=R(
        r"(?P<what>exitcode\s*:?\s*-(?:11|7)\b[^\n]{0,80}|exits with return code = -(?:11|7)\b|Signal (?:11|7) \((?:SIGSEGV|SIGBUS)\)[^\n]{0,60}|"
        r"Fatal Python error: (?:Segmentation fault|Bus error|Floating point exception|Illegal instruction)|"
        r"Segmentation fault \(core dumped\)|^\s*Segmentation fault\s*$|"
        r"Bus error \(core dumped\)|signal SIGSEGV|signal SIGBUS|"
        r"DataLoader worker \(pid \d+\) is killed by signal: (?:Segmentation fault|Aborted|Floating point exception)|"
        r"Unexpected (?:segmentation fault|floating-point exception) encountered in worker|"
        # Open MPI's signal handler (opal/util/stacktrace.c): "[host:pid] Signal: Segmentation fault (11)"
        r"Signal: (?:Segmentation fault|Bus error) \(\d+\)|"
        rf"(?:{_HEAP})|terminate called after throwing an instance of '[^'\n]{{1,120}}'|"
        r"File size limit exceeded(?: \(core dumped\))?)"
    ),
    # a crash is a symptom: a broken extension, a library's bug, a driver, a full /dev/shm all print it
    generic=_CRASH_LINES,
    absorbs=("child_failed",),
    # the frames and the what() below the line that names the crash (faulthandler's stack, a backtrace)
    span=12,
    facts=_CRASH_FACTS,
    # an uncaught C++ exception's what() is its cause: where another kind reads that message (a CUDA error, a
    # gloo or NCCL failure), that kind leads; the exception alone is read here
    fallback_facts=("cpp_exception",),
    fallback_fails=True,
    describe=_crash,
)


def _module_attribute(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    wrapper, attribute = facts.get("wrapper", "DistributedDataParallel"), facts.get("attribute", "...")
    summary = f"'{wrapper}' object has no attribute '{attribute}': the attribute is on the wrapped model"
    fix = (
        f"{wrapper} wraps the model; its own attributes and methods are on .module: "
        f"model.module.{attribute} (keep a reference to the bare model: raw = model.module, or "
        "accelerator.unwrap_model(model)). Only forward goes through the wrapper; save "
        "model.module.state_dict() so the checkpoint keys carry no 'module.' prefix."
    )
    return summary + on_ranks(hits), fix


DDP_MODULE_ATTRIBUTE = Recogniser(
    kind="ddp_module_attribute",
    title="attribute of the model asked of its DDP wrapper",
    anchors=("'DistributedDataParallel' object has no attribute", "'DataParallel' object has no attribute"),
    templates=("torch:object-has-no-attribute",),
    facts=(
        R(r"'(?P<wrapper>(?:Distributed)?DataParallel)' object has no attribute '(?P<attribute>\w{1,100})'"),
    ),
    # torch/nn/modules/module.py Module.__getattr__ raises it for whatever code reads the attribute: the
    # script's own (certain when its traceback shows so), or a library handed the wrapper where it reads the
    # bare model's attributes (model.config, model.generate)
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code reading the model's attribute on the wrapper it was handed",
            "hand it the bare model (model.module, accelerator.unwrap_model(model)) or let the library wrap it "
            "itself (a Trainer wraps in DDP on its own), or update the library if its own code wrapped it.",
        ),
    ),
    describe=_module_attribute,
)


def _unwrapped(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    name = facts.get("unwrapped", "the model")
    summary = (
        f"'{name}' object has no attribute 'module': the code reads .module, which only a DataParallel / "
        "DistributedDataParallel wrapper has, on a model that is not wrapped" + on_ranks(hits)
    )
    fix = (
        "The script was written for a wrapped model (model.module is the model inside DDP or DataParallel) but "
        "runs it unwrapped: on one GPU, without the launcher, or down a code path that skipped the wrapping. "
        "Run it the way it expects (torchrun --nproc_per_node=<GPUs> ..., or the multi-GPU option of its "
        "config), or make the access work both ways:\n"
        "net = model.module if hasattr(model, 'module') else model   # accelerate: accelerator.unwrap_model(model)"
    )
    return summary, fix


MODULE_ON_UNWRAPPED_MODEL = Recogniser(
    # torch/nn/modules/module.py (Module.__getattr__): "'{}' object has no attribute '{}'" with 'module', the
    # attribute DataParallel and DistributedDataParallel keep the wrapped model in
    kind="module_on_unwrapped_model",
    title=".module read on a model that is not wrapped",
    anchors=("object has no attribute 'module'",),
    templates=("torch:object-has-no-attribute", "system:object-has-no-attribute"),
    facts=(R(r"'(?P<unwrapped>[\w.]{1,100})' object has no attribute 'module'"),),
    # the wrappers themselves have .module; builtin objects are another mistake (a state dict, a path)
    reject=R(
        r"'(?:(?:Distributed)?DataParallel|\w*DistributedDataParallel|str|dict|list|tuple|NoneType|int|float|"
        r"OrderedDict|function|method|module)' object has no attribute 'module'"
    ),
    # certain when the log shows nn.Module's __getattr__ raising it (the object is a torch module)
    confirm=lambda hits, ctx: "nn_getattr" in ctx.facts,
    describe=_unwrapped,
)


def _spawn(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("bootstrapping"):
        return (
            "a process was started while the main module was still being imported (spawn start method "
            "without the main guard)" + on_ranks(hits),
            "With the spawn start method (Windows, macOS, mp.spawn, DataLoader workers, ddp_spawn) every child "
            "imports the main module again: put the entry point under the main guard:\n"
            "if __name__ == '__main__':\n    main()\n"
            "Or, when the child processes are only the DataLoader's workers, load in the main process: "
            "DataLoader(..., num_workers=0).\n"
            # multiprocessing/spawn.py _check_not_importing_main raises it in any child that starts a process
            # while it bootstraps: a frozen program (PyInstaller, cx_Freeze) without freeze_support() re-runs its
            # whole main in each child, guard or not
            "A program frozen into an executable (PyInstaller, cx_Freeze) needs more than the guard: call "
            "multiprocessing.freeze_support() as the first line under it, or every child runs the program again.",
        )
    if facts.get("worker_pickle") and not facts.get("what"):
        return (
            "the DataLoader's worker processes could not be started: what they are handed (the dataset, "
            "collate_fn, worker_init_fn) cannot be pickled" + on_ranks(hits),
            "With the spawn or forkserver start method (Windows, macOS, Python 3.14+ on Linux, "
            "multiprocessing_context='spawn') each DataLoader worker receives the dataset and its functions "
            "pickled: no lambdas, open files, database handles or locks as attributes (open them lazily in "
            "__getitem__ or worker_init_fn), functions at module level. Or start the workers by fork, "
            "DataLoader(..., multiprocessing_context='fork') on Linux, or load in the main process "
            "(num_workers=0).",
        )
    what = facts.get("what", "an object cannot be pickled").strip()
    if _own_process(ctx) and not facts.get("worker_pickle"):
        return _own_process_pickling(what, hits)
    summary = f"an object handed to the spawned processes cannot be pickled: {what[:160]}" + on_ranks(hits)
    fix = (
        "Spawned processes (mp.spawn, Lightning's ddp_spawn, DataLoader workers on Windows/macOS) receive the "
        "model, the data and the callbacks pickled. Use a launcher that starts the script itself instead: "
        "torchrun, or Lightning's strategy='ddp' instead of 'ddp_spawn'; or make the object picklable (no "
        "lambdas, open files, ctypes pointers or locks as attributes; build them inside the worker); or hand the "
        "processes a path instead of the object: save it first (torch.save(model.state_dict(), path), a "
        "dataset's files or its config) and let each process build and load its own copy from that path."
    )
    return summary, fix


def _own_process(ctx: Context) -> bool:
    """Whether the processes were the script's own multiprocessing Process started by spawn (mnist_hogwild's
    trainers), not mp.spawn's ranks, Lightning's ddp_spawn or a DataLoader's workers, for which a launcher or the
    DataLoader's options are the fix."""
    facts = ctx.facts
    return "process_spawned" in facts and not {"saw_spawn", "daemon_loader", "daemon_loader_worker"} & set(
        facts
    )


def _own_process_pickling(what: str, hits: list[Hit]) -> tuple[str, str]:
    # found with pytorch/examples' mnist_hogwild, a lambda in the dataset handed to its trainers: the fix led with
    # torchrun, which cannot share one model in memory between processes as Hogwild does
    return (
        "an object handed to a multiprocessing Process started by spawn cannot be pickled: "
        + what[:160]
        + on_ranks(hits),
        "Under the spawn start method (mp.set_start_method('spawn'), the default on Windows and macOS) "
        "Process(target=f, args=(...)).start() pickles f and every argument for the child: use functions defined "
        "with def at module level, not lambdas or functions local to another function (a lambda as a dataset's "
        "transform, a collate_fn), and objects without open files, locks or sockets as attributes (open them in "
        "the child). Classes must be importable by the child too: defined at module level, not inside the "
        "if __name__ == '__main__' block. On Linux the fork start method hands them over without pickling "
        "(mp.set_start_method('fork'); CPU tensors only, CUDA needs spawn); a model's share_memory() is shared "
        "either way. Or pass a path instead of the object: torch.save(obj.state_dict(), path) before start() and "
        "torch.load(path) in the child, which builds its own copy.",
    )


SPAWN_PICKLING = Recogniser(
    kind="spawn_pickling",
    title="object cannot be pickled for a spawned process",
    anchors=(
        "cannot be pickled",
        "Can't pickle",
        "can't pickle",
        "Got pickle error when attempting to start a worker Process",
    ),
    templates=(
        "system:pickle-cannot-pickle",
        "system:ctypes-cannot-be-pickled",
        # torch/utils/data/dataloader.py: the warning before it re-raises a worker Process's failed start
        # (spawn / forkserver pickle the dataset, collate_fn and worker_init_fn for each worker)
        "torch:got-pickle-error-when-attempting-to",
    ),
    facts=(
        R(r"(?P<worker_pickle>Got pickle error when attempting to start a worker Process)"),
        R(r"(?P<what>(?:[\w ]{0,60}cannot be pickled|[Cc]an't pickle [^\n]{1,160}))"),
        # what torch.save fails on as well: a lambda, a function or class local to another function
        R(
            r"[Cc]an't pickle (?P<local_object>local object|<function <lambda>|<type 'function'>|[^\n]{0,120}<locals>)"
        ),
    ),
    # pickling fails outside spawn too; a spawn in the log confirms it
    # (the DataLoader's own warning says its workers were being started by pickling)
    confirm=lambda hits, ctx: "saw_spawn" in ctx.facts or any("worker_pickle" in h.facts for h in hits),
    also=(
        Alternative(
            "unpicklable_checkpoint_object",
            "torch.save of a model or checkpoint that holds the lambda or local function",
            "If the traceback runs through torch.save (serialization.py), save model.state_dict() instead of the "
            "model, move the lambda or local function to module level, or pass pickle_module=dill.",
            when=("local_object",),
            # a traceback through multiprocessing's pickling of a new process: not torch.save's (found with
            # mp.spawn handed a lambda: the torch.save reading was offered beside it)
            unless_log=("pickled_for_process",),
        ),
    ),
    describe=_spawn,
)

SPAWN_MAIN_GUARD = Recogniser(
    kind="spawn_main_guard",
    title="no main guard for spawned processes",
    anchors=("An attempt has been made to start a new process before the",),
    templates=("system:multiprocessing-bootstrapping",),
    facts=(R(r"(?P<bootstrapping>An attempt has been made to start a new process)"),),
    describe=_spawn,
)


def _sampler_shuffle(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a DataLoader was given both a sampler and shuffle=True" + on_ranks(hits),
        "A sampler decides the order itself, so DataLoader refuses shuffle=True beside it. Under distributed "
        "training pass the shuffle to the sampler and leave the DataLoader's off:\n"
        "sampler = DistributedSampler(dataset, shuffle=True)\n"
        "loader = DataLoader(dataset, batch_size=..., sampler=sampler, shuffle=False)\n"
        "and call sampler.set_epoch(epoch) at the start of each epoch. Where a library builds the DataLoader, "
        "turn its shuffle option off for distributed runs, or update it (a release that hard-codes "
        "shuffle=True next to its own sampler has this bug).",
    )


DATALOADER_SAMPLER_SHUFFLE = Recogniser(
    # torch/utils/data/dataloader.py: DataLoader.__init__ checks its options before anything is loaded
    kind="dataloader_sampler_shuffle",
    title="DataLoader given both a sampler and shuffle",
    anchors=("sampler option is mutually exclusive with shuffle",),
    templates=("torch:sampler-option-is-mutually-exclusive-with",),
    reject=R(r"batch_sampler option is mutually exclusive"),
    # a library that built the DataLoader with both (flair's default shuffle beside a custom sampler,
    # flairNLP/flair#2737; MultiVae's hard-coded shuffle=True in distributed runs, AgatheSenellart/MultiVae#33; PyG's
    # loaders before pyg-team/pytorch_geometric#5457): a bug of its release, not the user's call (CERT9)
    confirm=unless_a_library_called("torch"),
    also=(
        library_call(
            "an installed package's code that built the DataLoader with its own sampler and shuffle=True",
            "update it (pip install -U <package>: the releases that hard-coded shuffle beside their sampler "
            "were fixed), or turn its shuffle option off where it has one.",
        ),
    ),
    describe=_sampler_shuffle,
)

RECOGNISERS = (
    DATALOADER_SAMPLER_SHUFFLE,
    DDP_MODULE_ATTRIBUTE,
    MODULE_ON_UNWRAPPED_MODEL,
    SPAWN_MAIN_GUARD,
    SPAWN_PICKLING,
    NAN_AT_ZERO,  # before NAN_OVERFLOW: on the same line, it leads where both are likely
    NAN_OVERFLOW,
    DDP_UNUSED_PARAMETERS,
    DDP_READY_TWICE,
    BATCHNORM_SINGLE_SAMPLE,
    DATALOADER_SHM,
    WORKER_KILLED,
    WORKER_CRASH,
)
