"""Inputs a layer's window, padding or grouping cannot take: too small to pool or reflect, channels not divisible.

- ``aten/src/ATen/native/Pool.h`` pool2d_shape_check: "Given input size: (512x4x1). Calculated output size:
  (512x2x0). Output size is too small": a max/avg pooling whose kernel and stride leave no output, the input smaller
  than the network's down-sampling was built for (images smaller than its design size, or a pooling kernel sized
  for another input).
- ``aten/src/ATen/native/ReflectionPad.cpp``: "Argument #4: Padding size should be less than the corresponding input
  dimension, but got: padding (46, 46) at dimension 3 of input [1, 3, 128, 36]": reflect padding cannot be as wide
  as the input.
- ``torch/nn/modules/conv.py`` (_ConvNd): "in_channels must be divisible by groups", "out_channels must be divisible
  by groups"; ``torch/nn/modules/normalization.py`` (GroupNorm): "num_channels must be divisible by num_groups";
  ``aten/src/ATen/native/group_norm.cpp``: "Expected number of channels in input to be divisible by num_groups, but
  got input of shape [...] and num_groups=5": a width that the groups do not divide.

The messages give sizes, not whose configuration made them (the script's input and widths, or a library's model
definition): likely, the library's release named after them.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _too_small(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "pad"):
        return (
            f"a reflect padding of ({first(hits, 'pad')}) is not smaller than dimension {first(hits, 'pad_dim')} of "
            f"its input {first(hits, 'pad_input')}" + on_ranks(hits),
            "Reflect padding mirrors the input, so each pad must be smaller than the padded dimension: the input is "
            "too small (or too narrow) for this padding. Resize or crop the inputs to the size the model was "
            "designed for (images far wider than high, or tiny ones, fail here), or use padding_mode='zeros' / "
            "F.pad(mode='constant') or 'replicate' where a smaller input is expected.",
        )
    return (
        f"a pooling layer's input {first(hits, 'pool_in')} leaves an output of {first(hits, 'pool_out')}: it is "
        "smaller than the network's down-sampling takes" + on_ranks(hits),
        "The input reaching this pooling is too small for its kernel and stride: the images are smaller (in width "
        "or height) than the size the network was designed for. Resize them to that size (or at least its "
        "minimum), or, for a model of your own, replace a fixed AvgPool2d(k) before the classifier with "
        "nn.AdaptiveAvgPool2d(1) and size the kernels for your input.",
    )


INPUT_TOO_SMALL = Recogniser(
    kind="input_too_small",
    templates=("aten:pool-output-size-too-small", "aten:reflection-pad-size-less-than-input"),
    title="an input too small for a pooling or a padding",
    anchors=(
        "Output size is too small",
        "Padding size should be less than the corresponding input dimension",
    ),
    match=R(
        r"Given input size: \((?P<pool_in>[\dx-]+)\)\. Calculated output size: \((?P<pool_out>[\dx-]+)\)\. Output "
        r"size is too small|Padding size should be less than the corresponding input dimension, but got: padding "
        r"\((?P<pad>\d+, \d+)\) at dimension (?P<pad_dim>\d+) of input (?P<pad_input>\[[\d, ]*\])|"
        r"Padding size should be less than the corresponding input dimension"
    ),
    describe=_too_small,
    **OPERATOR_REFUSAL,
)


def _groups(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    what = first(hits, "grouped") or "the channels"
    return (
        f"{what} must be divisible by the number of groups, and is not" + on_ranks(hits),
        "A grouped convolution (groups=g) needs in_channels and out_channels divisible by g, and GroupNorm(g, C) "
        "needs C divisible by g: choose widths that g divides (a width multiplier or a config's channel list "
        "changed without the groups: fix one or the other), or compute the groups from the width, e.g. "
        "math.gcd(32, C) for GroupNorm. If the model's code builds these from its own config, it is that "
        "code's bug for your setting: its issues may name the fixed release.",
    )


GROUPS_NOT_DIVISIBLE = Recogniser(
    kind="groups_not_divisible",
    templates=(
        "aten:conv-in-channels-divisible-by-groups",
        "aten:conv-out-channels-divisible-by-groups",
        "aten:group-norm-num-channels-divisible",
        "aten:group-norm-input-channels-divisible",
    ),
    title="channels the groups do not divide",
    anchors=(
        "in_channels must be divisible by groups",
        "out_channels must be divisible by groups",
        "num_channels must be divisible by num_groups",
        "Expected number of channels in input to be divisible by num_groups",
    ),
    match=R(
        r"(?P<grouped>in_channels|out_channels|num_channels) must be divisible by (?:groups|num_groups)|"
        r"Expected number of channels in input to be divisible by num_groups"
    ),
    describe=_groups,
    **OPERATOR_REFUSAL,
)

RECOGNISERS = (INPUT_TOO_SMALL, GROUPS_NOT_DIVISIBLE)
