"""TRL's own checks and bugs that a trainer built on it, or a script written for another TRL, runs into.

TRL's ``SFTTrainer.__init__`` (``trl/trainer/sft_trainer.py``, 1.0 on) raises "When `padding_free=True` without
packing, `max_length` is not enforced. Either enable packing (...), provide already truncated inputs, or set
`max_length=None`." when padding_free is on, packing off, max_length set and the data not a vision dataset.
Releases before 1.0 (0.25, 0.29 read) let it pass. The trainers built on TRL turned padding_free on themselves:
Unsloth enables it whenever it is left at its default and always writes max_length (unsloth#7951 stopped that),
and a wrapper that passes packing to SFTTrainer rather than SFTConfig leaves TRL's config without it
(training_hub#104). So upgrading TRL under them is the usual way in: likely a library's release, not the script
(versions.py's release-bug recogniser reads the line with `REFUSED` and says it with `padding_free`).

TRL's main branch between the SFTConfig refactor (huggingface/trl#1530, f30daa4, 2024-04-23) and #1678 (488b502,
2024-05-29) read ``args.model_init_kwargs`` in ``SFTTrainer.__init__`` before giving ``args`` a default, so an
SFTTrainer built without ``args`` (the README's and the docs' examples of the time) raised CPython's
"'NoneType' object has no attribute 'model_init_kwargs'"; #1678 builds ``SFTConfig(output_dir="tmp_trainer")``
first. No release had it (0.8.6 precedes the refactor, 0.9.2 follows the fix): a TRL installed from git in May 2024.
The same window refused ``packing=False`` without ``dataset_text_field`` even when the data was prepared (#1673,
2024-06-03). Read as that bug (`no_args`), likely: another object's ``model_init_kwargs`` read on None prints it too.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, on_ranks

FAMILY = "library releases that disagree with the code"

NO_ARGS = "'NoneType' object has no attribute 'model_init_kwargs'"
ANCHORS = (
    "without packing, `max_length` is not enforced",
    "without packing, max_length is not enforced",
    NO_ARGS,
)
REFUSED = re.compile(
    r"(?P<trl_padding_free>padding_free=True`? without packing, `?max_length`? is not enforced)|"
    r"(?P<trl_no_args>'NoneType' object has no attribute 'model_init_kwargs')"
)
TEMPLATES = ("third_party:trl-padding-free-without-packing", "third_party:trl-sft-trainer-args-none")


def padding_free(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for TRL 1.0's padding-free check."""
    return (
        "TRL (1.0 or newer) refused padding-free training without packing while max_length is set; the "
        "trainer built on TRL (Unsloth, a wrapper of SFTTrainer) turned padding_free on itself, a check older "
        "TRL releases did not make" + on_ranks(hits),
        "Upgrade the library on top of TRL (Unsloth stopped tripping it in unsloth#7951), or pin trl<1.0 beside it. "
        "In your own SFTConfig: set padding_free=False for ordinary padded batches, or packing=True (with "
        "packing_strategy='bfd'); pass packing through SFTConfig, not as an SFTTrainer argument, so TRL's check "
        "sees it; or set max_length=None if the data is truncated already.",
    )


def no_args(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for TRL's SFTTrainer built without args on the main branch of April-May 2024."""
    return (
        "SFTTrainer was built without args= and read args.model_init_kwargs on None: a bug of TRL's main branch "
        "between the SFTConfig refactor (huggingface/trl#1530, 2024-04-23) and its fix (#1678, 2024-05-29), which "
        "no release had: a TRL installed from git then" + on_ranks(hits),
        "Install a TRL release instead of that git checkout: pip install -U trl (0.9.2 and later build a default "
        "SFTConfig(output_dir='tmp_trainer') when args is not given), or pass one yourself: SFTTrainer(model, "
        "args=SFTConfig(output_dir=..., dataset_text_field='text'), train_dataset=...). The same checkout refused "
        "packing=False without dataset_text_field even for prepared data (#1673): a release fixes both.",
    )
