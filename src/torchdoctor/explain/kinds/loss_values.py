"""What a loss or a metric is computed from: class weights against the classes, CTC's lengths, means of integers.

- ``aten/src/ATen/native/LossNLL.cpp`` nll_loss_forward (``CrossEntropyLoss(weight=...)`` runs it): "weight tensor
  should be defined either for all {n} classes or no classes but got weight tensor of shape: {shape}";
  ``LossNLL2d.cpp`` (an (N, C, H, W) output; THCUNN's SpatialClassNLLCriterion before): "weight tensor should be
  defined either for all or no classes". The weights' length is not the output's number of classes: weights
  counted from the classes one batch or split holds (``np.unique``, ``compute_class_weight``), or copied from
  another dataset's class list.
- ``aten/src/ATen/native/ReduceOps.cpp`` mean: "mean(): could not infer output dtype. Input dtype must be either a
  floating point or complex dtype. Got: Long" (1.12+), "mean(): input dtype should be either floating point or
  complex dtypes. Got Long instead." (1.10-1.11), "Can only calculate the mean of floating types. Got Long instead."
  (before): the mean of an integer or bool tensor, most often an accuracy counted as integers, or token ids.

- ``aten/src/ATen/native/LossCTC.cpp`` (and ``cuda/LossCTC.cu``): "Expected tensor to have size at least 12 at
  dimension 1, but got size 8 for argument #2 'targets' (while checking arguments for ctc_loss_gpu)": the longest of
  target_lengths exceeds the padded targets' width; "Expected input_lengths to have value at most 50, but got value
  60": an input length beyond the log-probs' time steps. The lengths and the tensors were built apart.

All are refusals of what the caller passed, which a library's own code can pass too: likely, that named after.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _class_weights(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    classes, shape = first(hits, "classes"), first(hits, "weight_shape")
    if classes and shape:
        what = f"the loss's class weights have shape {shape} where the output has {classes} classes"
    else:
        what = "the loss's class weights do not have one entry per class of the output"
    return (
        what + on_ranks(hits),
        "CrossEntropyLoss/NLLLoss(weight=w) need w of shape (C,), C being the output's class dimension. Compute "
        "the weights over every class of the dataset, not the classes one batch or split happens to hold "
        "(np.unique or compute_class_weight on a batch drops absent classes: pass classes=np.arange(C) and give "
        "an absent class weight 1.0), and recount them for your dataset when the list came with another one "
        "(a data_dist or class_weight list of the original classes); a (1, C) weight needs .view(-1).",
    )


CLASS_WEIGHT_COUNT = Recogniser(
    kind="class_weight_count",
    templates=("aten:nll-loss-weight-for-all-classes", "aten:nll-loss2d-weight-for-all-classes"),
    title="class weights of another count than the classes",
    anchors=("weight tensor should be defined either for all",),
    match=R(
        r"weight tensor should be defined either for all (?:(?P<classes>\d+) classes|or no classes)"
        r"(?: or no classes but got (?:incorrect )?weight tensor of shape:? ?(?P<weight_shape>\[[\d, ]*\]))?"
    ),
    describe=_class_weights,
    **OPERATOR_REFUSAL,
)


def _ctc_lengths(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "input_max"):
        return (
            f"CTC loss got an input length of {first(hits, 'input_got')} where the log-probs have "
            f"{first(hits, 'input_max')} time steps" + on_ranks(hits),
            "input_lengths must count the model's output frames (after its down-sampling), not the raw input's: "
            "compute them from the output, e.g. torch.full((N,), log_probs.size(0)), or divide the raw lengths by "
            "the model's stride.",
        )
    return (
        f"CTC loss was told a target is {first(hits, 'longest')} labels long, but the padded targets are only "
        f"{first(hits, 'width')} wide" + on_ranks(hits),
        "target_lengths must be the lengths of the label sequences actually in targets: build both from the same "
        "encoded labels (the encode function that turns text into indices: a label read from a file name with "
        "its extension, or characters missing from the alphabet, change one and not the other), and pad targets "
        "to the longest length of the batch.",
    )


CTC_LENGTHS_MISMATCH = Recogniser(
    kind="ctc_lengths_mismatch",
    templates=("aten:ctc-targets-size-at-least", "aten:ctc-input-lengths-at-most"),
    title="CTC lengths that do not fit its tensors",
    anchors=(
        "Expected tensor to have size at least ",
        "Expected input_lengths to have value at most",
    ),
    match=R(
        r"Expected tensor to have size at least (?P<longest>\d+) at dimension 1, but got size (?P<width>\d+) ?for "
        r"argument #\d 'targets'|Expected input_lengths to have value at most (?P<input_max>\d+), but got value "
        r"(?P<input_got>\d+)"
    ),
    describe=_ctc_lengths,
    **OPERATOR_REFUSAL,
)


def _integer_mean(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    dtype = first(hits, "mean_dtype") or "an integer dtype"
    return (
        f"mean() was called on a tensor of {dtype}: it averages floating (or complex) tensors only"
        + on_ranks(hits),
        "Cast before averaging: x.float().mean(), or x.mean(dtype=torch.float32). Accuracies counted as "
        "integers ((pred == y).sum(), a Long tensor of correct answers) and token ids are Long: cast them where "
        "they are averaged (an example or metric's mean over such a tensor is its code's bug).",
    )


MEAN_INTEGER_TENSOR = Recogniser(
    kind="mean_integer_tensor",
    templates=(
        "aten:mean-could-not-infer-output-dtype",
        "aten:mean-input-dtype-floating-or-complex",
        "aten:mean-of-floating-types-only",
    ),
    title="the mean of an integer tensor",
    anchors=(
        "mean(): could not infer output dtype",
        "mean(): input dtype should be either floating point or complex",
        "Can only calculate the mean of floating types",
    ),
    match=R(
        r"(?:could not infer output dtype\. Input dtype must be either a floating point or complex dtype\. Got: "
        r"|input dtype should be either floating point or complex dtypes\. Got "
        r"|Can only calculate the mean of floating types\. Got )(?P<mean_dtype>\w+)"
    ),
    describe=_integer_mean,
    **OPERATOR_REFUSAL,
)

RECOGNISERS = (CLASS_WEIGHT_COUNT, CTC_LENGTHS_MISMATCH, MEAN_INTEGER_TENSOR)
