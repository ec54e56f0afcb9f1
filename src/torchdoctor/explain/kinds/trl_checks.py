"""TRL 1.0's refusal of padding-free training without packing, tripped by the libraries that build on it.

TRL's ``SFTTrainer.__init__`` (``trl/trainer/sft_trainer.py``, 1.0 on) raises "When `padding_free=True` without
packing, `max_length` is not enforced. Either enable packing (...), provide already truncated inputs, or set
`max_length=None`." when padding_free is on, packing off, max_length set and the data not a vision dataset.
Releases before 1.0 (0.25, 0.29 read) let it pass. The trainers built on TRL turned padding_free on themselves:
Unsloth enables it whenever it is left at its default and always writes max_length (unsloth#7951 stopped that),
and a wrapper that passes packing to SFTTrainer rather than SFTConfig leaves TRL's config without it
(training_hub#104). So upgrading TRL under them is the usual way in: likely a library's release, not the script
(versions.py's release-bug recogniser reads the line with `REFUSED` and says it with `padding_free`).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = ("without packing, `max_length` is not enforced", "without packing, max_length is not enforced")
REFUSED = re.compile(
    r"(?P<trl_padding_free>padding_free=True`? without packing, `?max_length`? is not enforced)"
)


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
