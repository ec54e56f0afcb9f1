"""A parameter put in two of an optimizer's parameter groups, refused when the optimizer or DeepSpeed is built.

DeepSpeed's engine (``deepspeed/runtime/engine.py`` ``_check_for_duplicates``, 0.9.5 and later) asserts "Parameter
with name: <name> occurs multiple times in optimizer.param_groups. Make sure it only appears once to prevent
undefined behavior." and torch's ``Optimizer.add_param_group`` (``torch/optim/optimizer.py``) raises "some parameters
appear in more than one parameter group" for the same mistake in any optimizer. The groups are the script's (or its
framework's): a weight-decay / no-decay split whose name filters overlap, a tied weight (a shared embedding) listed
from both modules that hold it, a per-layer learning-rate rule matching a parameter twice (volcengine/veGiantModel#6:
the decay and no-decay groups both held the shared embedding; open-mmlab/mmpretrain#1819: ``custom_keys`` matching
one parameter twice; fastai/fastai#32, jiaweizzhao/GaLore#41). The message names its cause: certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _two_groups(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = merged(hits).get("param_name")
    which = f"the parameter {name}" if name else "a parameter"
    return (
        f"{which} is in more than one of the optimizer's parameter groups" + on_ranks(hits),
        "Build the groups so that each parameter is in exactly one: collect them by identity, e.g. seen = set(); "
        "for each group keep [p for p in params if id(p) not in seen and not seen.add(id(p))]; take them from "
        "model.named_parameters() (it lists a tied weight once) rather than from each module's parameters(); "
        "make the decay / no-decay (or per-layer learning-rate) name filters exclusive, so no name matches two "
        "rules.",
    )


PARAM_IN_TWO_GROUPS = Recogniser(
    kind="param_in_two_groups",
    title="a parameter in two optimizer parameter groups",
    anchors=(
        "occurs multiple times in optimizer.param_groups",
        "some parameters appear in more than one parameter group",
    ),
    templates=("deepspeed:parameter-with-name-occurs-multiple-times",),
    facts=(R(r"Parameter with name: (?P<param_name>[\w.\-]{1,200}) occurs multiple times"),),
    describe=_two_groups,
)

RECOGNISERS = (PARAM_IN_TWO_GROUPS,)
