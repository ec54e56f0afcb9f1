"""A float64 tensor sent to Apple's MPS device, which has no 64-bit floating type.

Metal's shading language has no ``double``, so ATen refuses to make or copy a float64 tensor on the MPS device
(``aten/src/ATen/mps/EmptyTensor.cpp``, ``MPS_ERROR_DOUBLE_NOT_SUPPORTED`` through ``TORCH_CHECK_TYPE``, a
``TypeError``: "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please
use float32 instead."). The float64 comes from NumPy (``torch.from_numpy`` of a float64 array), from ``.double()``
or ``dtype=torch.float64`` in the script or a library, or from a ``set_default_dtype(torch.float64)``. Raised from
the user's code (or with no traceback) the reading is certain: the script's tensor, the script's cast. Raised with an
installed package's frames below the user's (Lightning moving a model built from float64 data, darts' and chemprop's
models, a pipeline's float64 buffer: the threads users post with this message are mostly those), that package made
or moved the float64 tensor: likely, its reading named (cast what it is given, or update it).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import (
    Context,
    Hit,
    Recogniser,
    library_call,
    on_ranks,
    unless_a_library_called,
)

FAMILY = "drivers and GPUs"


def _float64(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a float64 (double) tensor was moved to or made on Apple's MPS device, which has no float64"
        + on_ranks(hits),
        "Cast to float32 before the tensor reaches the MPS device: x.float().to('mps') (not x.to('mps').float()), "
        "torch.from_numpy(a.astype(np.float32)) for NumPy data (NumPy's default is float64), model.float() for a "
        "model built or loaded in double, and no .double() / dtype=torch.float64 on that path (a metric such as "
        "running_corrects.double() / n: use .float()). Code that needs float64 must run on the CPU.",
    )


MPS_FLOAT64 = Recogniser(
    kind="mps_float64",
    templates=("torch_native:mps-float64-not-supported",),
    title="float64 on the MPS device",
    anchors=("Cannot convert a MPS Tensor to float64 dtype",),
    confirm=unless_a_library_called("torch"),
    also=(
        library_call(
            "an installed package's code that made the float64 tensor or moved it to the MPS device (a model it "
            "built from float64 data, a buffer it keeps in float64)",
            "cast the data you hand it to float32 first (a NumPy array: .astype(np.float32)), or update it (pip "
            "install -U <package>); a package that computes in float64 must run on the CPU (accelerator='cpu').",
        ),
    ),
    describe=_float64,
)

RECOGNISERS = (MPS_FLOAT64,)
