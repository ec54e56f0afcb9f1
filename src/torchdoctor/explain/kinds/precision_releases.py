"""Low-precision training code whose release mixed up a dtype, read by versions.py as a release's bug.

Transformer Engine's GEMM (``transformer_engine/pytorch/csrc/extensions/gemm.cpp``, ``NVTE_CHECK(*out_dtype ==
D_tensor.dtype(), "GEMM output has invalid dtype (expected ", out_dtype, ", found ", D_tensor.dtype(), ")")``; the
Python wrapper of TE 1.x, ``cpp_extensions/gemm.py``: "Gemm output has invalid dtype(expected {}, found {})")
refuses an output buffer of another dtype than the one it was asked to write, the numbers being TE's DType enum.
With ``fuse_wgrad_accumulation`` the weight gradient is written into ``param.main_grad``, and LayerNormMLP's
backward did not ask for main_grad's dtype there (Linear and LayerNormLinear did) until
NVIDIA/TransformerEngine#1618: a release's bug, likely (a caller's buffer of the wrong dtype prints it too).

torch's ``Tensor.grad`` setter (``torch/csrc/autograd/python_variable.cpp`` THPVariable_set_grad: "attempting to
assign a gradient with dtype '{}' to a tensor with dtype '{}'. Please ensure that the gradient and the tensor have
the same dtype"; with a tensor's ``grad_dtype`` set, "... to a tensor with grad_dtype '{}'. The gradient must
match the tensor's grad_dtype ...", which FSDP2 sets from the parameters trainable at its lazy init, so a first
forward with every parameter frozen leaves it wrong for later training: pytorch/pytorch#186998) refuses a gradient
of another dtype than its parameter. Autograd computes
gradients in the dtype the graph saw, so it meets a parameter whose dtype changed behind a graph or wrapper that
captured it: submodules cast with ``.half()`` after ``torch.compile`` traced them (mosaicml/diffusion#75),
torch.compile with FSDP's mixed precision (pytorch/pytorch#111317), FSDP2's gradient dtype cached before
``requires_grad`` changed; or code that sets ``p.grad`` itself. Likely: the line names no caller.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = (
    "GEMM output has invalid dtype",
    "Gemm output has invalid dtype",
    "attempting to assign a gradient with dtype",
)
REFUSED = re.compile(
    r"(?P<te_gemm_dtype>G(?:EMM|emm) output has invalid dtype) ?\(expected (?P<te_expected>[\w.]{1,30}), "
    r"found (?P<te_found>[\w.]{1,30})\)"
    r"|(?P<grad_assign>attempting to assign a gradient) with dtype '?(?P<grad_dtype>[\w:]{1,30})'? to a tensor "
    r"with (?P<grad_dtype_set>grad_)?dtype '?(?P<param_dtype>[\w:]{1,30})'?"
)
TEMPLATES = (
    "third_party:transformer-engine-gemm-output-invalid-dtype",
    "third_party:transformer-engine-gemm-output-invalid-dtype-python",
    "torch_native:assign-gradient-of-another-dtype",
    "torch_native:assign-gradient-of-another-grad-dtype",
)
FACTS = ("te_gemm_dtype", "grad_assign")


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for a GEMM output or a gradient of another dtype than the tensor it goes into."""
    if first(hits, "te_gemm_dtype"):
        return (
            "a Transformer Engine GEMM was handed an output buffer of another dtype than it was asked to write "
            f"(expected {first(hits, 'te_expected', '?')}, found {first(hits, 'te_found', '?')}): with "
            "fuse_wgrad_accumulation the weight gradient is written into param.main_grad, and a TE module that does "
            "not ask for main_grad's dtype there (LayerNormMLP before NVIDIA/TransformerEngine#1618) fails this "
            "check" + on_ranks(hits),
            "Upgrade Transformer Engine (pip install -U 'transformer-engine[pytorch]'; TransformerEngine#1618 fixed "
            "LayerNormMLP's weight-gradient dtype under fuse_wgrad_accumulation), or turn fuse_wgrad_accumulation "
            "off until then (Megatron: --no-gradient-accumulation-fusion). A buffer of your own passed as out= must "
            "have the dtype the GEMM writes.",
        )
    grad, param = first(hits, "grad_dtype", "?"), first(hits, "param_dtype", "?")
    if first(hits, "grad_dtype_set"):
        return (
            f"a gradient of dtype {grad} was assigned to a parameter whose grad_dtype is {param}: FSDP2 fixes its "
            "mixed-precision gradient dtypes at its lazy init, from the parameters trainable at the first forward, "
            "so a run whose first forward had every parameter frozen (requires_grad_(False)) and unfroze them later "
            "reduces gradients in another dtype (pytorch/pytorch#186998)" + on_ranks(hits),
            "Keep the parameters trainable through FSDP2's first forward: run an evaluation or warm-up pass under "
            "torch.no_grad() instead of toggling requires_grad_(False) on the whole model, or make the first forward "
            "a training one; and upgrade torch. A grad_dtype set by hand must be the dtype the gradients are "
            "reduced in (or None).",
        )
    return (
        f"a gradient of dtype {grad} was assigned to a parameter of dtype {param}: the parameter's dtype changed "
        "behind a graph or wrapper that had captured it (submodules cast with .half() or .to(dtype) after "
        "torch.compile traced the model, torch.compile with FSDP mixed precision), or code set p.grad itself "
        "without casting" + on_ranks(hits),
        "Give the model its dtypes before compiling or wrapping it, not after: cast it (or load it with "
        "torch_dtype) before torch.compile / FSDP / DDP, and do not call .half() or .to(dtype) on submodules of a "
        "compiled model (mosaicml/diffusion#75 built them in their dtype instead); with FSDP keep requires_grad "
        "as it was at wrapping, and upgrade torch (torch.compile with FSDP mixed precision, "
        "pytorch/pytorch#111317). Code that assigns p.grad must give it p.dtype (grad.to(p.dtype)).",
    )
