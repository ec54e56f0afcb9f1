"""A library built on PyTorch refusing two of its own training options set together, the message naming both.

RecBole's configurator (``recbole/config/configurator.py`` ``_set_default_parameters``) checks a sequential model's
loss against its negative sampling before training: a cross-entropy loss (``loss_type: CE``) scores every item, so
the negatives it would sample are refused. Its releases word the check after the option of their time:
"train_neg_sample_args [{...}] should be None when the loss_type is CE." (1.1+), "neg_sampling [{...}] should be
None when the loss_type is CE." (1.0), "training_neg_sample_num should be 0 when the loss_type is CE" (0.2). The
message names its cause; the reading is certain.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = re.compile

# the option each release's check names, and what turns the sampling off in it
_SAMPLING_OFF = {
    "train_neg_sample_args": "None",
    "neg_sampling": "None",
    "training_neg_sample_num": "0",
}


def _recbole_ce(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    option = first(hits, "sampling_option", "train_neg_sample_args")
    return (
        f"RecBole refuses negative sampling ({option}) with loss_type CE: a cross-entropy loss scores every item, "
        "so the sequential model takes no sampled negatives" + on_ranks(hits),
        f"To keep loss_type CE turn the sampling off: {option}={_SAMPLING_OFF[option]} on the command line or in "
        f"config_dict ({option}: {_SAMPLING_OFF[option]} in the YAML). Or set loss_type: BPR to train on sampled "
        "negatives instead (pairwise).",
    )


LIBRARY_OPTION_CONFLICT = Recogniser(
    kind="library_option_conflict",
    templates=(
        "third_party:recbole-neg-sample-args-loss-type-ce",
        "third_party:recbole-neg-sampling-loss-type-ce",
        "third_party:recbole-training-neg-sample-num-loss-type-ce",
    ),
    title="two of a library's options that cannot go together",
    anchors=("when the loss_type is CE",),
    match=R(
        r"(?P<sampling_option>train_neg_sample_args|neg_sampling|training_neg_sample_num)\b[^\n]{0,300}"
        r"should be (?:None|0) when the loss_type is CE"
    ),
    facts=(R(r"(?P<sampling_option>train_neg_sample_args|neg_sampling|training_neg_sample_num)\b"),),
    describe=_recbole_ce,
)

RECOGNISERS = (LIBRARY_OPTION_CONFLICT,)
