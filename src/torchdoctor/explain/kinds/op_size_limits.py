"""An op that refuses an input larger than it can handle, by the op's own check.

``torch.quantile`` and ``torch.nanquantile`` sort the reduced dimension and compute each quantile's rank in the
input's floating type, so ATen refuses a reduced dimension of more than 2**24 values, the largest count a float
holds exactly (``aten/src/ATen/native/Sorting.cpp``, ``quantile_compute``: ``TORCH_CHECK(sorted.size(-1) <=
std::pow(2, 24), "quantile() input tensor is too large")``; users report it from torch 1.9, and 2.13 still
prints it). The check names its cause, so the finding is certain: the tensor, or the dimension it reduces, holds
more than 16,777,216 values.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _quantile(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = (
        "torch.quantile refused its input: the dimension it reduces holds more than 2**24 (16,777,216) values"
        + on_ranks(hits)
    )
    fix = (
        "torch.quantile (and nanquantile) cannot take more than 16 million values per quantile. For one "
        "quantile of a large tensor use torch.kthvalue (k = int(q * (n - 1)) + 1) or sort it yourself "
        "(torch.sort(x.flatten()).values[k]); for an estimate, take the quantile of a random or strided sample "
        "(x.flatten()[::step]) or of chunks; or reduce a smaller dimension (pass dim=) instead of the whole "
        "flattened tensor."
    )
    return summary, fix


QUANTILE_INPUT_TOO_LARGE = Recogniser(
    kind="quantile_input_too_large",
    templates=("torch_native:quantile-input-too-large",),
    title="torch.quantile's input over 2**24 values",
    anchors=("quantile() input tensor is too large",),
    describe=_quantile,
)

RECOGNISERS = (QUANTILE_INPUT_TOO_LARGE,)
