"""An optimizer class written for the torch before step hooks, its ``__init__`` never running Optimizer's.

From torch 2.0 ``Optimizer.__init__`` sets ``self._optimizer_step_pre_hooks`` and ``_optimizer_step_post_hooks``
(``torch/optim/optimizer.py``), and the wrapper every optimizer's ``step`` runs through reads them before the
step (api_members.tsv: Optimizer.register_step_pre_hook and profile_hook_step from the 2.0 release). A class
that subclasses ``torch.optim.Optimizer`` without calling ``super().__init__(params, defaults)`` — the usual
Lookahead or Ranger wrapper, which copies its inner optimizer's ``param_groups`` instead — worked before and
stops at its first ``step`` with CPython's "'{}' object has no attribute '_optimizer_step_pre_hooks'"
(system:object-has-no-attribute). The class is most often a library's (pytorch_optimizer's Lookahead until
v2.5.2, kozistr/pytorch_optimizer#122), or the script's own copy of one: the line names the class, never whose
it is, so both readings are said and neither is certain: versions.py's release-bug recogniser reads the line
with `NO_STEP_HOOKS` and says it with `no_step_hooks`, the script's own class (`OWN_SUBCLASS`) named beside it.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import api_members
from torchdoctor.explain.recognisers import Alternative, Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

# the line never says whose the class is (versions.py's release-bug reading is only ever likely)
ANCHORS = (
    "object has no attribute '_optimizer_step_pre_hooks'",
    "object has no attribute '_optimizer_step_post_hooks'",
)
NO_STEP_HOOKS = re.compile(
    r"'(?P<optimizer_class>[A-Za-z_]\w{0,60})' object has no attribute '_optimizer_step_(?:pre|post)_hooks'"
)
OWN_SUBCLASS = Alternative(
    "dependency_version",
    "the script's own Optimizer subclass, written for the torch before the step hooks",
    "Call super().__init__(params, defaults) in the class's __init__, or keep the torch it was written for.",
    when=("optimizer_class",),
)


def _hooks_release() -> str:
    """The first torch release read with the optimizer step hooks (api_members.tsv), as 'M.m'."""
    found = api_members.rows("torch", "Optimizer", "register_step_pre_hook")
    added = found[0].added if found else ""
    return ".".join(added.split(".")[:2]) if added else "2.0"


def no_step_hooks(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for an optimizer class whose __init__ never ran Optimizer's."""
    cls = first(hits, "optimizer_class", "the optimizer")
    release = _hooks_release()
    return (
        f"{cls} subclasses torch.optim.Optimizer without running Optimizer.__init__, so it lacks the step hooks "
        f"torch {release} and later read in every step(): a class written for the torch before {release}"
        + on_ranks(hits),
        f"If {cls} comes from a library (pytorch_optimizer, torch-optimizer, timm, a repository's Lookahead or "
        f"Ranger), upgrade it to a release written for torch {release} (pytorch_optimizer 2.5.2 and later), or "
        f"pin the torch before {release} it was written for. If the class is your own, call "
        "super().__init__(params, defaults) in its __init__ (or stop subclassing Optimizer for a wrapper that "
        "only forwards step(), zero_grad() and state_dict() to the optimizer it wraps).",
    )
