"""An image transform handed a tensor or an array where it takes a PIL image: the pipeline's steps out of order.

The messages are torchvision's type checks and PyTorch's argument parser:

- ``ToTensor`` given something that is neither a PIL image nor an ndarray (``torchvision/transforms/functional.py``
  to_tensor: "pic should be PIL Image or ndarray. Got {type(pic)}"): a tensor that ``ToTensor`` already made (it
  comes twice, or before a transform that should precede it) or one the dataset returns (``torchvision.io.
  read_image``). Nothing else prints it: certain;
- a PIL-only transform given another type (``torchvision/transforms/functional_pil.py``, ``_functional_pil.py``
  from 0.15, each function's first line: "img should be PIL Image. Got {type(img)}"): an ndarray from OpenCV, or,
  before 0.8 made the transforms take tensors, a tensor. Certain too;
- PIL's ``Image.transpose(method)`` (a flip or a 90-degree rotation, as torchvision's own ``hflip`` calls it) on a
  tensor: ``Tensor.transpose`` takes two dimensions, so the parser (``torch/csrc/utils/python_arg_parser.cpp``)
  prints "transpose() received an invalid combination of arguments - got (int), but expected one of:" (``got
  (Transpose)`` for Pillow 9.1+'s enum). A tensor's transpose called with one dimension by mistake prints the
  same: likely, that reading named.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, first, on_ranks

FAMILY = "data loading"

R = re.compile

_TRANSPOSE = "transpose() received an invalid combination of arguments - got ("
_GOT = R(
    r"pic should be PIL Image or ndarray\. Got <class '(?P<to_tensor_got>[\w.]{1,60})'>|"
    r"img should be PIL Image\. Got <class '(?P<pil_got>[\w.]{1,60})'>|"
    r"transpose\(\) received an invalid combination of arguments - got \((?P<transpose_got>int|Transpose)\), "
    r"but expected one of"
)


def _explain(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    order = (
        "Put the transforms that work on PIL images (flips, rotations, crops, colour changes, your own ones that "
        "call PIL methods) before transforms.ToTensor(), and ToTensor once, after them; "
    )
    if first(hits, "to_tensor_got"):
        return (
            f"transforms.ToTensor() was given a {first(hits, 'to_tensor_got')}, not a PIL image or an ndarray: "
            "the image is already a tensor (ToTensor comes twice, or the dataset returns tensors)"
            + on_ranks(hits),
            order
            + "a dataset that already returns tensors (torchvision.io.read_image) needs no ToTensor: use "
            "transforms.ConvertImageDtype(torch.float) instead.",
        )
    if first(hits, "pil_got"):
        return (
            f"a transform that takes PIL images was given a {first(hits, 'pil_got')}" + on_ranks(hits),
            order
            + "an image read with OpenCV or NumPy needs Image.fromarray(img) (or transforms.ToPILImage()) "
            "first; a tensor before it means ToTensor runs too early.",
        )
    return (
        "transpose(<one int>) was called on a tensor: PIL's Image.transpose(method) (a flip or a 90-degree "
        "rotation) written for a PIL image, reached by an image that is already a tensor" + on_ranks(hits),
        order
        + "or make the custom transform work on tensors (torch.flip(img, dims=[-1]), torch.rot90(img, k, "
        "dims=[-2, -1])).",
    )


TRANSFORM_ORDER = Recogniser(
    kind="transform_order",
    templates=(
        "third_party:torchvision-pic-should-be-pil-or-ndarray",
        "third_party:torchvision-img-should-be-pil",
        "torch_native:transpose-invalid-combination-of-arguments",
    ),
    title="an image transform given a tensor or an array instead of a PIL image",
    anchors=("pic should be PIL Image or ndarray. Got", "img should be PIL Image. Got", _TRANSPOSE),
    match=_GOT,
    # a tensor's own transpose called with one dimension prints the same words
    generic=(_TRANSPOSE,),
    also=(
        Alternative(
            "input_shape_mismatch",
            "a tensor's own transpose called with one dimension where it takes two",
            "Give Tensor.transpose both dimensions it swaps: x.transpose(1, 2) (or x.permute(...) for more).",
            when=("transpose_got",),
        ),
    ),
    describe=_explain,
)

RECOGNISERS = (TRANSFORM_ORDER,)
