"""An image tensor still of integers (uint8) where torchvision's Normalize takes floats.

``torchvision/transforms/_functional_tensor.py`` (``functional_tensor.py`` before 0.15) ``normalize``, which
``transforms.Normalize`` and ``transforms.v2.Normalize`` call on a tensor, first checks ``tensor.is_floating_point()``
and raises TypeError "Input tensor should be a float tensor. Got torch.uint8." (0.8 on): the image reached
Normalize as read from disk, 0 to 255 in uint8 (``torchvision.io.read_image`` / ``decode_image``,
``PILToTensor``, v2's ``ToImage``), without the step that converts it to floats in [0, 1] (``ToTensor`` does it
from a PIL image; ``ConvertImageDtype``, v2's ``ToDtype(torch.float32, scale=True)``). Certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _not_float(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    dtype = first(hits, "image_dtype", "an integer dtype")
    return (
        f"torchvision's Normalize was given an image tensor of {dtype}: the image was not converted to floats "
        "before it" + on_ranks(hits),
        "Convert the image to floats in [0, 1] before Normalize: with read_image / decode_image or PILToTensor "
        "add transforms.ConvertImageDtype(torch.float) (v2: v2.ToDtype(torch.float32, scale=True), after "
        "v2.ToImage()) just before Normalize; from a PIL image ToTensor() does it. Do not just .float(): the "
        "mean and std Normalize is given are for [0, 1] values, not 0-255.",
    )


IMAGE_NOT_FLOAT = Recogniser(
    kind="image_not_float",
    templates=("torchvision:input-tensor-should-be-a-float",),
    title="an integer image tensor given to Normalize",
    anchors=("Input tensor should be a float tensor. Got ",),
    match=R(r"Input tensor should be a float tensor\. Got (?P<image_dtype>torch\.\w{1,20})"),
    describe=_not_float,
)

RECOGNISERS = (IMAGE_NOT_FLOAT,)
