"""The ninety-second sample's train misses: each reading on the message the installed Lightning raises itself, and a
near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4417-4466)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

lightning = pytest.importorskip("lightning")


def refusal(build) -> str:
    """The line a run prints when ``build()`` (a real Trainer or Fabric) refuses its arguments."""
    with pytest.raises(ValueError) as raised:
        build()
    return f"ValueError: {raised.value}\n"


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# Lightning 1.x's Trainer took strategy=None and accelerator=None as "choose for me"; 2.0's connectors refuse None.
# Whose code passed it the log does not say: code written for Lightning 1.x, or a framework's own script forwarding
# an option left unset (stable-audio-tools' --strategy), a bug of its release, named beside it
@pytest.mark.parametrize(
    ("build", "flag"),
    [
        (lambda: lightning.Trainer(strategy=None, logger=False), "strategy"),
        (lambda: lightning.Trainer(accelerator=None, logger=False), "accelerator"),
        (lambda: lightning.Fabric(strategy=None), "strategy"),
        (lambda: lightning.Fabric(accelerator=None), "accelerator"),
    ],
)
def test_lightnings_refusal_of_none_is_code_written_for_lightning_1(build, flag):
    line = refusal(build)
    assert f"{flag}=None" in line
    found = reads(line, "dependency_version", "likely")
    assert f"{flag}=None" in found.summary and "Lightning 2.0" in found.summary
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert (
        f"{flag}='auto'" in found.fix
        and f"--{flag} auto" in found.fix
        and "pytorch-lightning<2.0" in found.fix
    )


# the same refusal pasted as Markdown, its backticks eaten (the strategy printed bare)
def test_the_refusal_of_none_without_its_backticks_reads_the_same():
    line = refusal(lambda: lightning.Trainer(strategy=None, logger=False)).replace("`", "")
    reads(line, "dependency_version", "likely")


# a strategy Lightning 2.0 removed is printed for nothing else: that reading stays certain beside None's
def test_a_strategy_lightning_2_removed_stays_certain():
    found = reads(
        refusal(lambda: lightning.Trainer(strategy="dp", logger=False)), "dependency_version", "certain"
    )
    assert "strategy='dp'" in found.summary


# a misspelt strategy name is printed in quotes: the argument refused, as before
def test_a_misspelt_strategy_name_stays_the_trainers_refusal():
    found = explained(refusal(lambda: lightning.Trainer(strategy="dpp", logger=False)))
    assert found.id == "log.trainer_arguments", found.summary
    assert "check the spelling" in found.fix
