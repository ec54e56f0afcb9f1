"""The training frameworks' refusals mapped from the catalog in session 37 (kinds/trainer_arguments.py): each
message filled the way its source (lightning's strategies and accelerator connector, transformers' trainer.py)
fills it, read as the refused argument with its own fix."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

CASES = (
    (
        "ValueError: Post-localSGD algorithm is used, but model averaging period is not provided to DDP strategy.",
        "model_averaging_period",
    ),
    (
        "ValueError: Currently model averaging cannot work with a distributed optimizer of type ZeroRedundancyOptimizer.",
        "configure_optimizers",
    ),
    (
        "lightning.fabric.utilities.exceptions.MisconfigurationException: HPU is currently not supported. "
        "Please contact developer@lightning.ai",
        "lightning-habana",
    ),
    (
        "TypeError: The XLA strategy can only work with the `XLACheckpointIO` plugin, found "
        "<lightning.fabric.plugins.io.torch_io.TorchCheckpointIO object at 0x7f3a2c1d0e50>",
        "XLACheckpointIO()",
    ),
    (
        "ValueError: Found a XLAFSDP model in the provided checkpoint state. Please provide the model without any "
        "XLAFSDP wrapper.",
        "fabric.setup()",
    ),
    (
        "NotImplementedError: XLAFSDP only supports a single model instance with 'model' as the key.",
        "'model'",
    ),
    ("ValueError: SageMaker Model Parallelism does not support BF16 yet. Please use FP16 instead ", "--fp16"),
)


@pytest.mark.parametrize(("text", "keyword"), CASES)
def test_the_refusal_names_the_argument_and_its_fix(text, keyword):
    found = explained('Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n' + text)
    assert found.id == "log.trainer_arguments", (found.id, found.summary)
    assert found.details["confidence"] == "certain", found.summary
    assert keyword in found.fix, found.fix


def test_the_ddp_strategy_s_static_graph_hint_is_no_averaging_refusal():
    """Lightning's ddp.py prints this hint beside the averaging checks; it refuses nothing."""
    found = explained(
        "Your model can run with static graph optimizations. For future training runs, we suggest you pass "
        "`Trainer(..., strategy=DDPStrategy(static_graph=True))` to enable them."
    )
    assert found.id != "log.trainer_arguments", found.summary
