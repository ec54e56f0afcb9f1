"""Shapes the FP8 matrix multiplies cannot run, read by layer_shapes.py as an input size that does not divide.

FP8 GEMMs run on the tensor cores for dimensions that are multiples of 16 only, and both FP8 training stacks check
the shapes before they call cuBLAS. PyTorch's ``torch._scaled_mm`` (``aten/src/ATen/native/cuda/Blas.cpp``, the
matmul of torchao's and float8_experimental's float8 training) checks ``mat1.sizes()[1] % 16 == 0`` ("Expected
trailing dimension of mat1 to be divisible by 16 but got mat1 shape: ({rows}x{cols})." , the closing parenthesis
missing in its first releases) and ``mat2`` in both dimensions ("mat2 shape ({rows}x{cols}) must be divisible by
16"); mat1's inner dimension is a linear layer's in_features, or in the weight-gradient GEMM the tokens (batch x
sequence). Transformer Engine's ``transformer_engine/pytorch/utils.py`` ``assert_dim_for_fp8_exec`` asserts a 2D
input whose height (the tokens) divides by 8 and width (the features) by 16 ("FP8 execution requires 2D input
matrices with height divisible by 8 and width divisible by 16, but got tensor with dims=[{h}, {w}]"). The messages
name the cause, certain where seen: pad the dimension (torchao's ``Float8LinearConfig(pad_inner_dim=True)``,
float8_experimental's ``config.pad_inner_dim``, a sequence length padded to a multiple of 16), or keep the layer out
of FP8 (NVIDIA/TransformerEngine#1422, meta-pytorch/float8_experimental#279).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "numerics and precision"

ANCHORS = (
    "FP8 execution requires 2D input matrices",
    "Expected trailing dimension of mat1 to be divisible by 16",
    "mat2 shape (",
)
PATTERN = re.compile(
    r"(?P<fp8_te>FP8 execution requires 2D input matrices) with height divisible by 8 and width divisible by 16"
    r"(?:, but got tensor with dims=\[(?P<fp8_dims>\d{1,9}(?:, ?\d{1,9}){0,3})\])?"
    r"|(?P<fp8_mat1>Expected trailing dimension of mat1 to be divisible by 16) but got mat1 shape"
    r"(?::? \((?P<fp8_mat1_shape>\d{1,9}x\d{1,9}))?"
    r"|(?P<fp8_mat2>mat2 shape) \((?P<fp8_mat2_shape>\d{1,9}x\d{1,9})\)? must be divisible by 16"
)
TEMPLATES = (
    "third_party:transformer-engine-fp8-execution-requires-2d-dims",
    "aten:scaled-mm-mat1-trailing-dimension-divisible-by-16",
    "aten:scaled-mm-mat2-shape-divisible-by-16",
)
FACTS = ("fp8_te", "fp8_mat1", "fp8_mat2")

_FIX = (
    "FP8 GEMMs run only on dimensions that are multiples of 16 (Transformer Engine: an input's tokens a multiple of "
    "8, its features of 16). Pad what varies: the sequence length in the tokenizer or collator "
    "(pad_to_multiple_of=16, so batch x sequence divides), or let the matmul pad: torchao's "
    "Float8LinearConfig(pad_inner_dim=True) for convert_to_float8_training (float8_experimental: "
    "config.pad_inner_dim = True). Keep layers whose features are not multiples of 16 (a small head, an odd "
    "vocabulary, a single-row embedding) out of FP8: module_filter_fn in convert_to_float8_training, "
    "te.fp8_autocast(enabled=False) around them, or a plain nn.Linear in place of te.Linear."
)


def _not_multiples(dims: list[int], by: tuple[int, ...]) -> str:
    """``"712 % 16 != 0"`` for the dimensions the divisors do not divide, "" when the message gave none."""
    return ", ".join(f"{d} % {b} != 0" for d, b in zip(dims, by, strict=True) if d % b)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for an FP8 GEMM refusing a shape."""
    if first(hits, "fp8_te"):
        dims = [int(d) for d in re.findall(r"\d+", first(hits, "fp8_dims", ""))]
        off = _not_multiples(dims, (8, 16)) if len(dims) == 2 else ""
        shape = f" of dims {dims} ({off})" if off else (f" of dims {dims}" if dims else "")
        summary = (
            f"Transformer Engine refused an FP8 GEMM input{shape}: FP8 execution needs a 2D input whose height "
            "(the tokens) is a multiple of 8 and width (the features) a multiple of 16"
        )
    elif first(hits, "fp8_mat1"):
        shape = first(hits, "fp8_mat1_shape", "")
        summary = (
            "torch._scaled_mm (the FP8 matmul of torchao's and float8_experimental's float8 training) got mat1"
            + (f" of shape {shape}" if shape else "")
            + ", whose trailing (inner) dimension is not a multiple of 16"
        )
    else:
        summary = (
            f"torch._scaled_mm (the FP8 matmul) got mat2 of shape {first(hits, 'fp8_mat2_shape', '?')}: both of "
            "its dimensions (a linear layer's in and out features) must be multiples of 16"
        )
    return summary + on_ranks(hits), _FIX
