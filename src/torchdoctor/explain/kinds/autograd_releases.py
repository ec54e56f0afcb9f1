"""A derivative the installed torch does not have: autograd's refusal, read as a torch release behind the code.

torch prints "the derivative for '{}' is not implemented." (``torch/csrc/autograd/FunctionsManual.cpp``
``not_implemented_base``, the backward formula ``derivatives.yaml`` gives an operator it has none for; some add a
reason after it), and "derivative for {} is not implemented" (``autograd_not_implemented_fallback.cpp``, an
operator registered without autograd support). torch adds derivatives release by release (linalg_lstsq's backward,
for one, came in 1.12), so code written against a newer torch meets this line on an older one; an operator no
release differentiates prints the same words: likely, never certain.

Read by versions.py's ``dependency_version`` beside stack_releases.py, with the same interface.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ANCHORS = ("derivative for ",)
# an operator no torch release differentiates prints the same words
GENERIC = ANCHORS
TEMPLATES = ("torch_native:derivative-not-implemented",)
CHANGE = R(
    r"(?:the )?derivative for ['‘`]?(?P<no_derivative>[\w.:]{1,100}?)['’`]?(?:\.default)? (?:is )?not implemented"
)
CONTEXT: tuple = ()


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Never: nothing in the line tells a derivative a newer torch has from one none has."""
    return False


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for autograd's missing derivative among ``facts`` (`CHANGE`'s groups), else None."""
    op = facts.get("no_derivative")
    if not op:
        return None
    return (
        f"autograd has no derivative for {op} in the installed torch: the backward reached an operator this "
        "release cannot differentiate, and torch adds derivatives release by release, so the code was likely "
        "written for a newer torch",
        f"Check which torch the project was written for (its requirements or README) and the installed one "
        f"(python -c 'import torch; print(torch.__version__)'); upgrade to a newer torch whose backward covers "
        f"{op} (pip install -U torch with the --index-url of your CUDA; the release notes name the derivatives "
        "each release added). If no release differentiates it, keep it out of the graph: compute it under "
        "torch.no_grad() or on .detach()ed inputs, or use an operator with a derivative (torch.linalg.pinv "
        "for a least-squares solve).",
    )
