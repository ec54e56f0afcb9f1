"""A value outside a ``torch.distributions`` distribution's support.

``torch/distributions/distribution.py`` ``_validate_sample`` (argument validation, on by default since 1.8)
checks ``log_prob``'s value against ``self.support`` and raises "Expected value argument (<type> of shape
<shape>) to be within the support (<constraint>) of the distribution <repr>, but found invalid values:" (1.8+;
"The value argument must be within the support" before). The check is ``support.check(value)``, which is False
for a NaN as much as for a value out of range, so the finding is likely and names the NaN reading.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, first, on_ranks

FAMILY = "numerics and precision"


def _outside(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    support = first(hits, "support", "")
    dist = first(hits, "dist", "")
    what = (
        f"log_prob was given a value outside the support {support} of {dist}"
        if support and dist
        else "a distribution's log_prob was given a value outside its support"
    )
    fix = (
        "Pass log_prob values the distribution can produce: in range for a bounded one (probabilities in [0, 1] "
        "for Bernoulli/Beta, non-negative integers for Poisson/Categorical, positive values for a LogNormal, "
        "Gamma, Exponential or a TransformedDistribution through ExpTransform), in the dtype it expects (integer "
        "class indices, not one-hot floats). Transform the value the same way as the distribution (exp of a "
        "normal sample for its log-normal) or clamp it into the support. Validation only reports it: "
        "validate_args=False hides the error and returns nan or -inf instead."
    )
    return what + on_ranks(hits), fix


DISTRIBUTION_VALUE_OUTSIDE_SUPPORT = Recogniser(
    kind="distribution_value_outside_support",
    templates=(
        "torch_native:distribution-value-outside-support",
        "torch_native:distribution-value-outside-support-old",
    ),
    title="a log_prob value outside the distribution's support",
    anchors=("to be within the support (", "The value argument must be within the support"),
    match=re.compile(
        r"Expected value argument \([^\n]{1,120}?\) to be within the support \(|"
        r"The value argument must be within the support"
    ),
    facts=(
        re.compile(
            r"within the support \((?P<support>[^\n]{1,120}?)\) of the distribution (?P<dist>\w{1,60})"
        ),
    ),
    # support.check() is False for a NaN too: a diverged model's output fails it the same way
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "nan_overflow",
            "NaN in the value (a diverged model or loss upstream), which fails the support check the same way",
            "Check the value with torch.isnan(value).any() before log_prob; if it holds NaN, find where it starts "
            "(torch.autograd.detect_anomaly(), a lower learning rate, gradient clipping) instead of clamping.",
        ),
    ),
    describe=_outside,
)

RECOGNISERS = (DISTRIBUTION_VALUE_OUTSIDE_SUPPORT,)
