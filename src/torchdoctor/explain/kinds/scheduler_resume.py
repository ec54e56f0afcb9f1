"""An LR scheduler built as if resumed (last_epoch >= 0) over param groups that hold no initial_lr.

``torch/optim/lr_scheduler.py``: a scheduler built with ``last_epoch=-1`` writes each param group's
``initial_lr``; built with any other ``last_epoch`` it reads them and refuses groups without one: "param
'initial_lr' is not specified in param_groups[0] when resuming an optimizer" (0.3-2.x), "... when resuming
scheduler with last_epoch >= 0." (newer, naming its two causes: the optimizer's state not loaded before resuming,
and last_epoch >= 0 given to a fresh run). The optimizer's own state_dict carries initial_lr once a scheduler set
it, so a resume that loads it first passes. A library's resume code builds the scheduler too (a trainer's resume
path): likely, that release named after it.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "checkpoints and pretrained models"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _initial_lr(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    group = first(hits, "group") or "0"
    return (
        f"an LR scheduler was built with last_epoch >= 0 (as if resuming) but param_groups[{group}] of its "
        "optimizer has no initial_lr" + on_ranks(hits),
        "A fresh run must build the scheduler with last_epoch=-1 (the default; a start step or epoch of 0 passed "
        "as last_epoch is wrong, it counts from -1). To resume, load the optimizer's state_dict before building "
        "the scheduler (it holds initial_lr), or build the scheduler with last_epoch=-1 and restore its position "
        "with scheduler.load_state_dict(checkpoint['scheduler']); with a new optimizer, give each param group "
        "its start value first: group.setdefault('initial_lr', group['lr']).",
    )


SCHEDULER_RESUME_INITIAL_LR = Recogniser(
    kind="scheduler_resume_initial_lr",
    templates=(
        "aten:lr-scheduler-initial-lr-when-resuming-optimizer",
        "aten:lr-scheduler-initial-lr-last-epoch",
    ),
    title="a scheduler resumed without initial_lr",
    anchors=("'initial_lr' is not specified in param_groups[",),
    match=R(r"'initial_lr' is not specified in param_groups\[(?P<group>\d+)\] when resuming"),
    describe=_initial_lr,
    **OPERATOR_REFUSAL,
)

RECOGNISERS = (SCHEDULER_RESUME_INITIAL_LR,)
