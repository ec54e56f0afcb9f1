"""Per-channel values for more channels than the images have: a three-channel Normalize on grayscale images.

torchvision's ``transforms.Normalize`` works in place (``functional.py``/``_functional_tensor.py``:
``tensor.sub_(mean).div_(std)`` with ``mean`` and ``std`` shaped ``(C, 1, 1)``). ATen's TensorIterator refuses an
in-place result that the operands broadcast larger than the tensor written (``TensorIterator.cpp``: "output with
shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]"), so a one-channel image (MNIST, a grayscale
PIL image, ``transforms.Grayscale()``) given three means fails there. Any in-place op between a one-channel tensor
and three-channel values prints the same line, so the reading is certain only beside torchvision's normalize (its
frame or ``Normalize(``); elsewhere it is likely, that reading named. Shapes that are not one channel against three
or four (a batch against a single sample, a reduction) are not this kind.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    merged,
    on_ranks,
)

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

SHAPES = R(
    r"output with shape \[1, (?P<image_hw>\d+, \d+)\] doesn't match the broadcast shape "
    r"\[(?P<wanted_channels>[34]), (?P=image_hw)\]"
)
NORMALIZE = R(
    r"(?P<saw_normalize>\bF\.normalize\b|\bNormalize\(|_?functional(?:_tensor)?\.py\S{0,10}, line \d+, in normalize)"
)


def _beside_normalize(hits: list[Hit], ctx: Context) -> bool:
    return "saw_normalize" in merged(hits) or "saw_normalize" in ctx.facts


def _channels(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    wanted = first(hits, "wanted_channels", "3")
    return (
        f"one-channel images met {wanted}-channel values in an in-place op: a transforms.Normalize given {wanted} "
        "means and standard deviations for grayscale images" + on_ranks(hits),
        "Give Normalize one value per channel the images have: transforms.Normalize((0.5,), (0.5,)) for "
        "grayscale (MNIST's mean/std are (0.1307,), (0.3081,)); or make the images three-channel first "
        "(Image.open(p).convert('RGB'), or transforms.Grayscale(num_output_channels=3) before ToTensor) when the "
        "model expects RGB.",
    )


NORMALIZE_CHANNELS = Recogniser(
    kind="normalize_channels",
    templates=("third_party:tensoriterator-output-broadcast-shape",),
    title="a three-channel Normalize on one-channel images",
    anchors=("doesn't match the broadcast shape ",),
    generic=("doesn't match the broadcast shape ",),
    match=SHAPES,
    facts=(NORMALIZE,),
    confirm=_beside_normalize,
    also=(
        Alternative(
            "broadcast_size_mismatch",
            "another in-place op between a one-channel tensor and three-channel values",
            "Find the in-place op (x.sub_(...), +=, out=) in the traceback and make both sides the same number of "
            "channels, or use the out-of-place form (x = x - y).",
        ),
    ),
    describe=_channels,
)

RECOGNISERS = (NORMALIZE_CHANNELS,)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (("ormalize", NORMALIZE),)
