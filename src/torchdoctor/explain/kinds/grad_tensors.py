"""Tensors autograd refuses to record: inference tensors saved for backward, integer tensors made to require grad.

- ``torch/csrc/autograd/saved_variable.cpp`` SavedVariable (1.9+): "Inference tensors cannot be saved for backward.
  To work around you can make a clone to get a normal tensor and use it in autograd." A tensor created under
  ``torch.inference_mode()`` (a decorated ``forward`` or ``evaluate``, a cached buffer, a library's generation step)
  reached an op autograd records. ``torch.no_grad()`` makes ordinary tensors; inference mode's do not take a graph.
- ``torch/csrc/autograd/variable.h`` AutogradMeta::set_requires_grad: "Only Tensors of floating point dtype can
  require gradients" (0.4-1.x), "only Tensors of floating point and complex dtype can require gradients" (1.6+):
  ``requires_grad=True`` on an integer or bool tensor, which ``nn.Parameter(t)`` asks by default.

Both say what the tensor is, not whose code made it (the script's, or a library's own model code), so they are
likely, the library's release named after them.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _inference(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a tensor created under torch.inference_mode() reached an operation autograd records for backward"
        + on_ranks(hits),
        "Inference tensors never join a graph. Where the training step or a module's forward uses tensors made "
        "under torch.inference_mode() (an evaluate() or forward decorated with @torch.inference_mode(), a cache "
        "filled there, a model loaded inside it), use torch.no_grad() there instead, or remove the decorator from "
        "the forward you train; a tensor that must stay cached can be cloned outside inference mode "
        "(x = x.clone() under torch.inference_mode(False)).",
    )


INFERENCE_TENSOR_BACKWARD = Recogniser(
    kind="inference_tensor_backward",
    templates=("aten:inference-tensors-cannot-be-saved-for-backward",),
    title="an inference-mode tensor used in training",
    anchors=("Inference tensors cannot be saved for backward",),
    describe=_inference,
    **OPERATOR_REFUSAL,
)


def _integer_grad(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "an integer (or bool) tensor was asked to require gradients: only floating tensors take them"
        + on_ranks(hits),
        "A mask, an index or a count is not trained: keep it out of the gradient, nn.Parameter(t, "
        "requires_grad=False) or self.register_buffer('name', t) instead of nn.Parameter(t) (which requires "
        "gradients by default), and torch.tensor(..., requires_grad=True) only on float data; if it is meant to "
        "be learned, make it float first (t.float()).",
    )


INTEGER_REQUIRES_GRAD = Recogniser(
    kind="integer_requires_grad",
    templates=(
        "aten:only-floating-tensors-can-require-gradients",
        "aten:only-floating-complex-tensors-can-require-gradients",
    ),
    title="an integer tensor made to require gradients",
    anchors=(
        "Tensors of floating point dtype can require gradients",
        "Tensors of floating point and complex dtype",
    ),
    match=R(r"[Oo]nly Tensors of floating point (?:and complex )?dtype can require gradients"),
    describe=_integer_grad,
    **OPERATOR_REFUSAL,
)

RECOGNISERS = (INFERENCE_TENSOR_BACKWARD, INTEGER_REQUIRES_GRAD)
