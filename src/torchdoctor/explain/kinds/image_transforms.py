"""An image transform handed a tensor or an array where it takes a PIL image: the pipeline's steps out of order.

The messages are torchvision's type checks and PyTorch's argument parser:

- ``ToTensor`` given something that is neither a PIL image nor an ndarray (``torchvision/transforms/functional.py``
  to_tensor: "pic should be PIL Image or ndarray. Got {type(pic)}"): a tensor that ``ToTensor`` already made (it
  comes twice, or before a transform that should precede it) or one the dataset returns (``torchvision.io.
  read_image``). Certain where it names a tensor;
- a PIL-only transform given another type (``torchvision/transforms/functional_pil.py``, ``_functional_pil.py``
  from 0.15, each function's first line: "img should be PIL Image. Got {type(img)}"): an ndarray from OpenCV, or,
  before 0.8 made the transforms take tensors, a tensor. Certain where it names one of those;
- either check naming ``<class 'NoneType'>``: no image reached the transform at all, most often ``cv2.imread``,
  which returns None (and raises nothing) for a path that does not exist or a file it cannot decode. The order of
  the transforms is not the matter: likely, that reading named first. Another type (a str path never opened, a
  dict or a list of the dataset's sample) is the dataset's code handing the wrong object: likely;
- PIL's ``Image.transpose(method)`` (a flip or a 90-degree rotation, as torchvision's own ``hflip`` calls it) on a
  tensor: ``Tensor.transpose`` takes two dimensions, so the parser (``torch/csrc/utils/python_arg_parser.cpp``)
  prints "transpose() received an invalid combination of arguments - got (int), but expected one of:" (``got
  (Transpose)`` for Pillow 9.1+'s enum). A tensor's transpose called with one dimension by mistake prints the
  same: likely, that reading named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_TRANSPOSE = "transpose() received an invalid combination of arguments - got ("
_GOT = R(
    r"pic should be PIL Image or ndarray\. Got <class '(?P<to_tensor_got>[\w.]{1,60})'>|"
    r"img should be PIL Image\. Got <class '(?P<pil_got>[\w.]{1,60})'>|"
    r"transpose\(\) received an invalid combination of arguments - got \((?P<transpose_got>int|Transpose)\), "
    r"but expected one of"
)


# what the type checks may name for the readings above: a tensor (ToTensor's), an ndarray or a tensor (a PIL-only
# transform's)
_ORDER_TYPES = ("torch.Tensor", "numpy.ndarray")


def _certain(hits: list[Hit], ctx: Context) -> bool:
    return any(
        h.facts.get("to_tensor_got") == "torch.Tensor" or h.facts.get("pil_got") in _ORDER_TYPES for h in hits
    )


def _no_image(hits: list[Hit]) -> tuple[str, str]:
    which = "transforms.ToTensor()" if first(hits, "to_tensor_got") else "a transform that takes PIL images"
    return (
        f"{which} was given None, not an image: the image was never read (cv2.imread returns None for a path "
        "that does not exist or a file it cannot decode)" + on_ranks(hits),
        "Print the path the Dataset's __getitem__ reads just before the failing transform and check that the file "
        "exists and opens: cv2.imread gives None without an error for a wrong path (a data root from another "
        "machine, a relative path run from another folder, another extension than the files have) and for a "
        "file that is not an image or is damaged; assert img is not None, path after reading it. A "
        "__getitem__ branch that returns nothing gives None too.",
    )


def _explain(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if "NoneType" in (first(hits, "to_tensor_got"), first(hits, "pil_got")):
        return _no_image(hits)
    order = (
        "Put the transforms that work on PIL images (flips, rotations, crops, colour changes, your own ones that "
        "call PIL methods) before transforms.ToTensor(), and ToTensor once, after them; "
    )
    got = first(hits, "to_tensor_got")
    if got and got != "torch.Tensor":
        return (
            f"transforms.ToTensor() was given a {got}, not a PIL image or an ndarray: the dataset hands the "
            "transforms another object than the image" + on_ranks(hits),
            "Print type(img) in the Dataset's __getitem__ before the transforms: a str is the path, not the image "
            "(open it: Image.open(path).convert('RGB')); a dict, a list or a tuple is the whole sample (give the "
            "transform its image field). " + order,
        )
    if got:
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
    facts=(R(r"Got <class '(?P<no_image>NoneType)'>"),),
    # a tensor's own transpose called with one dimension prints the same words: never certain
    generic=(_TRANSPOSE,),
    # torchvision's checks are certain only where they name a tensor or an array (None: no image was read)
    confirm=_certain,
    also=(
        Alternative(
            "data_path_missing",
            "an image path that does not exist or a file that is not a readable image (cv2.imread returns None)",
            "Check the path __getitem__ reads and that its file opens (assert img is not None, path).",
            when=("no_image",),
        ),
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
