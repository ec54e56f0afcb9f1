"""Code that extends autograd (a custom Function, a gradient hook) or detaches in place, refused by autograd.

- A custom ``torch.autograd.Function`` whose ``backward`` returns another number of gradients than ``forward``
  took inputs: ``torch/csrc/autograd/python_function.cpp`` (PyNode::apply: "function {name} returned an incorrect
  number of gradients (expected {n}, got {m})"; ``custom_function.h`` for C++ Functions, 0.4 to 2.x). The name is
  the Function's class with ``Backward`` added (a ``Sign`` Function's is ``SignBackward``): backward must return
  one value per forward input, ``None`` for an input that needs no gradient. The Function may be the script's or
  a library's (the message does not say whose): likely. ``CompiledFunctionBackward`` is torch.compile's own node,
  a compiler's or backend's fault, not read so.
- ``detach_()`` on a view: ``torch/csrc/autograd/VariableTypeManual.cpp`` detach_ ("Can't detach views in-place.
  Use detach() instead", 1.9 on adding the DDP sentence: gradients are views of DDP's buckets with
  ``gradient_as_bucket_view=True``; ``variable.cpp`` before 1.0). The message says the cause: certain.
- A backward hook returning a gradient of another shape than the one it replaces:
  ``torch/csrc/autograd/python_hook.cpp`` check_single_result ("hook '{name}' has changed the size of value";
  ``custom_function.cpp`` alike). A tensor hook must return None or a tensor of the gradient's shape; a module's
  backward hook a tuple like ``grad_input``, whose layout the old ``register_backward_hook`` takes from the
  module's last operation (a layer without bias has one entry fewer). Whose hook it is the message does not say:
  likely. The feedback-alignment layers' own hook is a release bug of theirs (research_code.py, versions.py).
"""

from __future__ import annotations

from torchdoctor.explain.kinds import research_code
from torchdoctor.explain.recognisers import (
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    library_call,
    on_ranks,
    unless_a_library_called,
)

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

GRADIENT_COUNT = R(
    r"function (?P<grad_function>\w{1,120}) returned an incorrect number of gradients \(expected "
    r"(?P<grad_expected>\d{1,4}), got (?P<grad_got>\d{1,4})\)"
)
HOOK_SIZE = R(r"hook '(?P<grad_hook>[^'\n]{1,120})' has changed the size of value")


def _gradient_count(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    function = first(hits, "grad_function", "the Function")
    expected, got = first(hits, "grad_expected", "?"), first(hits, "grad_got", "?")
    name = function[: -len("Backward")] if function.endswith("Backward") else function
    return (
        f"the backward of the custom autograd Function {name} returned {got} gradient(s) where its forward took "
        f"{expected} input(s)" + on_ranks(hits),
        f"Make {name}.backward return one value per input of forward (ctx excluded), in order: a gradient for "
        "each tensor that needs one and None for the others (an integer, a flag, a mask), e.g. return grad_output, "
        "None for forward(ctx, x, mask). Code written for old PyTorch releases that tolerated fewer values needs "
        "the None added.",
    )


def _detach_view(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "detach_() was called on a tensor that is a view of another (a slice, a reshape, a transpose, or a "
        "gradient that is a view of DDP's buckets), which autograd refuses in place" + on_ranks(hits),
        "Detach out of place and keep the result: x = x.detach() (the traceback's last frame names the call). If "
        "the view is a gradient of a model under DistributedDataParallel(..., gradient_as_bucket_view=True), zero "
        "the gradients with optimizer.zero_grad(set_to_none=True) (or p.grad = None) instead of "
        "p.grad.detach_(); p.grad.zero_(). In an installed library's code, update it.",
    )


def _hook_size(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    hook = first(hits, "grad_hook", "a hook")
    return (
        f"the backward hook {hook} returned a gradient whose shape differs from the gradient it replaces"
        + on_ranks(hits),
        f"Make {hook} return None (keep the gradient) or a tensor of the same shape as the one it received. For a "
        "module hook, return a tuple laid out like grad_input, one entry per input and None where there is no "
        "gradient; the old register_backward_hook gives the grad_input of the module's last operation, whose "
        "layout changes with the layer (with or without bias): use register_full_backward_hook, or a hook on the "
        "tensor (Tensor.register_hook).",
    )


CUSTOM_FUNCTION_BACKWARD = Recogniser(
    kind="custom_function_backward",
    title="a custom Function's backward returning the wrong number of gradients",
    templates=("torch_native:function-returned-incorrect-number-of-gradients",),
    anchors=(" returned an incorrect number of gradients (expected ",),
    match=GRADIENT_COUNT,
    facts=(GRADIENT_COUNT,),
    # torch.compile's AOTAutograd node: the compiler's or a backend's graphs, not a Function of the script
    reject=R(r"function CompiledFunctionBackward returned"),
    confirm=lambda hits, ctx: False,  # the Function may be a library's: the message does not say whose
    also=(
        library_call(
            "a library's custom Function (its release's backward returning too few or too many values)",
            "update it (or pin the torch its release was written for), and search its issues for the message.",
        ),
    ),
    describe=_gradient_count,
)

INPLACE_DETACH_VIEW = Recogniser(
    kind="inplace_detach_view",
    title="detach_() on a view",
    templates=("torch_native:cant-detach-views-in-place",),
    anchors=("Can't detach views in-place",),
    # a library's forward calling detach_() on a view it made (lucidrains/invariant-point-attention#9, fixed in the
    # library): its release's bug where the frames below the user's code are an installed package's (CERT9)
    confirm=unless_a_library_called("torch"),
    also=(
        library_call(
            "an installed package's code calling detach_() on a view (a release written for an older torch)",
            "update it (pip install -U <package>), or pin the torch its release was written for.",
        ),
    ),
    describe=_detach_view,
)

HOOK_GRADIENT_SIZE = Recogniser(
    kind="hook_gradient_size",
    title="a backward hook returning a gradient of another shape",
    templates=("torch_native:hook-changed-size-of-value",),
    anchors=("' has changed the size of value",),
    match=HOOK_SIZE,
    facts=(HOOK_SIZE,),
    # the feedback-alignment layers' own hook: their release's bug (research_code.py, read by versions.py)
    reject=research_code.FA_HOOK,
    confirm=lambda hits, ctx: False,  # whose hook it is the message does not say
    also=(
        library_call(
            "a library's hook (a layer or tool registering backward hooks that returns grad_input of another "
            "layout)",
            "update it, or search its issues for the message with the layer settings you use (bias=False...).",
        ),
    ),
    describe=_hook_size,
)

RECOGNISERS = (CUSTOM_FUNCTION_BACKWARD, INPLACE_DETACH_VIEW, HOOK_GRADIENT_SIZE)
