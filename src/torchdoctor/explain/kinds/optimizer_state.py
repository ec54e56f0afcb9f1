"""An optimizer whose parameters, gradients and state are not on one device and in one dtype.

torch's optimizers (Adam, AdamW, SGD with momentum, ...) take the foreach path by default on CUDA: before each
step they group the tensors of every parameter (the parameter, its gradient, its state: ``exp_avg``,
``exp_avg_sq``, ``momentum_buffer``, ``step``) by device and dtype, and ATen refuses a parameter whose tensors are
apart (``aten/src/ATen/native/ForeachUtils.h``, ``_group_tensors_by_first_tensors_device_and_dtype``, torch 2.x:
"Tensors of the same index must be on the same device and the same dtype except `step` tensors that can be CPU
and float32 notwithstanding"; ``float32/64`` once float64 steps were allowed; torch 2.13 also lets a state be
bfloat16, "..., and optimizer states that can be bfloat16 for mixed-precision training"). ``AveragedModel``'s
``update_parameters`` (``torch/optim/swa_utils.py``) groups its averaged copy with the model the same way.

What puts them apart: the model moved or cast (``.to(device)``, ``.cuda()``, ``.half()``) after the optimizer
already holds state; an optimizer state restored by hand on another device (``torch.load(map_location="cpu")``
assigned into ``optimizer.state``, not through ``load_state_dict``, which casts each state to its parameter's
device and dtype); parameters and gradients of mixed dtypes (a layer kept in float32 beside bfloat16 weights, a
gradient cast by a mixed-precision wrapper). A library's code does the same (a trainer resuming a checkpoint, FSDP
or DeepSpeed restoring state, an EMA helper): where the traceback runs through one, its release is named. The
message names no tensor, so the reading stays likely until a labelled log shows it.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import (
    Context,
    Hit,
    Pattern,
    Recogniser,
    called_from_own_code,
    library_call,
    on_ranks,
)

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the three wordings share their start; the last says bfloat16 states are allowed
SAME_INDEX = "Tensors of the same index must be on the same device and the same dtype"
BF16_STATES = R(r"(?P<bf16_states_allowed>optimizer states that can be bfloat16)")


def _apart(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = (
        "the optimizer's foreach step found a parameter whose gradient or state (exp_avg, exp_avg_sq, "
        "momentum_buffer) is on another device or in another dtype than the parameter" + on_ranks(hits)
    )
    fix = (
        "Keep each parameter, its gradient and its optimizer state on one device and in one dtype:\n"
        "- move and cast the model before building the optimizer, and load the optimizer's state after that: "
        "model.to(device); optimizer = AdamW(model.parameters()); optimizer.load_state_dict(ckpt['optimizer']) "
        "(load_state_dict casts each state to its parameter's device and dtype; a model moved or cast with "
        ".to()/.cuda()/.half() after the first step leaves the state behind);\n"
        "- a state assigned by hand (torch.load(..., map_location='cpu') into optimizer.state) is not moved: "
        "move each state tensor but 'step' to its parameter's device and dtype, or go through load_state_dict;\n"
        "- parameters or gradients of mixed dtypes (a layer kept in float32 beside bfloat16 weights, a gradient "
        "cast by a mixed-precision wrapper): cast them to one dtype, or build the optimizer with foreach=False "
        "(each parameter stepped on its own, not grouped)."
    )
    if any("bf16_states_allowed" in h.facts for h in hits):
        fix += " This torch already allows bfloat16 states beside float32 parameters: another dtype or a device differs."
    return summary, fix


OPTIMIZER_STATE_MISMATCH = Recogniser(
    kind="optimizer_state_mismatch",
    templates=(
        "aten:foreach-same-index-same-device-dtype-float32",
        "aten:foreach-same-index-same-device-dtype-float32-64",
        "aten:foreach-same-index-same-device-dtype-bfloat16-states",
    ),
    title="an optimizer's state on another device or dtype than its parameter",
    anchors=(SAME_INDEX,),
    facts=(BF16_STATES,),
    span=2,
    # ForeachUtils.h checks the tensors whoever built them handed the optimizer: the script's own model and
    # optimizer (certain only where its traceback runs through torch alone), or a library's code that moved,
    # cast or restored them
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code that moved, cast or restored the parameters or the optimizer's state (a trainer "
            "resuming a checkpoint, FSDP's or DeepSpeed's state loading, an EMA helper)",
            "search that library's issues for the message and update it, or pin the release its examples use; "
            "where only the dtypes differ, foreach=False on the optimizer avoids the grouping meanwhile.",
        ),
    ),
    describe=_apart,
)

RECOGNISERS = (OPTIMIZER_STATE_MISMATCH,)
