"""A NumPy array of an unsigned type wider than a byte handed to torch, which older releases cannot hold.

``torch.from_numpy`` / ``torch.tensor`` / ``torch.as_tensor`` map the array's dtype in
``torch/csrc/utils/tensor_numpy.cpp`` (``numpy_dtype_to_aten``) and raise "can't convert np.ndarray of type {}. The
only supported types are: {}." for a dtype torch has no type for. Before torch 2.3 that list ends at uint8: a
``numpy.uint16`` array (16-bit PNG or TIFF images, depth maps, token ids stored compactly), ``uint32`` or ``uint64``
cannot be converted; torch 2.3 added those types (the message's list then names them). The message names its cause;
the reading is certain. Object and string arrays (``numpy.object_``, ``numpy.str_``) print the same message for
another cause, ragged or non-numeric data, and are not read here.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

FAMILY = "library releases that disagree with the code"


def _unsigned(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    dtype = first(hits, "np_dtype", "uint16")
    wider = "np.int32" if dtype == "uint16" else "np.int64"
    return (
        f"a numpy.{dtype} array reached torch.from_numpy / torch.tensor, a type the installed torch cannot hold "
        "(unsigned integers wider than 8 bits came in torch 2.3)" + on_ranks(hits),
        f"Cast the array to another dtype before it becomes a tensor, where the dataset or collate function builds it: "
        f"torch.from_numpy(arr.astype({wider})) (or .astype(np.float32) / 65535 for 16-bit images and depth maps "
        f"read with PIL, cv2 or imageio). Upgrading torch to 2.3 or newer makes a torch.{dtype} tensor instead, "
        "but few operations accept it, so the cast is the fix either way.",
    )


NUMPY_DTYPE_UNSUPPORTED = Recogniser(
    kind="numpy_dtype_unsupported",
    templates=("aten:numpy-dtype-not-supported",),
    title="a NumPy array of a type torch cannot hold",
    anchors=("can't convert np.ndarray of type",),  # read only for the unsigned types (match)
    match=re.compile(r"can't convert np\.ndarray of type numpy\.(?P<np_dtype>uint16|uint32|uint64)\b"),
    describe=_unsigned,
)

RECOGNISERS = (NUMPY_DTYPE_UNSUPPORTED,)
