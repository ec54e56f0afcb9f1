"""``self.log`` refused by Lightning's logger connector: in a hook that does not take it, with on_step/on_epoch that
hook does not take, with both off, with a reduce_fx it has no reduction for, the same name twice with other
arguments. Each message is made here by the installed Lightning's own code (``fx_validator.py``, ``result.py``),
as a run raises it, so the test follows Lightning's wording; until session 41 explain knew none of them."""

from __future__ import annotations

import pytest
import torch
from explaining import certain

lightning_result = pytest.importorskip("lightning.pytorch.trainer.connectors.logger_connector.result")
from lightning.pytorch.trainer.connectors.logger_connector.fx_validator import _FxValidator  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_message_seen")


def _raised(call) -> str:
    with pytest.raises(Exception) as caught:
        call()
    return f"{type(caught.value).__module__}.{type(caught.value).__name__}: {caught.value}\n"


def _logged_twice():
    results = lightning_result._ResultCollection(training=True)
    results.log("validation_step", "val_loss", torch.tensor(1.0), on_step=False, on_epoch=True, batch_size=4)
    results.log("validation_step", "val_loss", torch.tensor(1.0), on_step=True, on_epoch=True, batch_size=4)


CASES = {
    "a hook without logging": (
        lambda: _FxValidator.check_logging("configure_optimizers"),
        ["configure_optimizers"],
        ["training_step", "self.logger.log_metrics"],
    ),
    "on_step in an epoch's hook": (
        lambda: _FxValidator.check_logging_levels("on_train_epoch_end", True, True),
        ["on_step=True", "on_train_epoch_end"],
        ["on_step=True has no step there"],
    ),
    "neither step nor epoch": (
        lambda: lightning_result._Metadata(fx="training_step", name="loss", on_step=False, on_epoch=False),
        ["on_step=False, on_epoch=False"],
        ["set one of them to True"],
    ),
    "an unknown reduction": (
        lambda: lightning_result._Metadata(fx="training_step", name="loss", reduce_fx="median"),
        ["Found: median"],
        ["'mean' (the default), 'sum', 'min' or 'max'", "torchmetrics Metric"],
    ),
    "one name twice": (_logged_twice, ["val_loss", "twice"], ["the same arguments"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refused_self_log_is_read_with_its_fix(case):
    call, said, fix = CASES[case]
    found = certain(_raised(call), "lightning_call_refused")
    for words in said:
        assert words in found.summary, (words, found.summary)
    for words in fix:
        assert words in found.fix, (words, found.fix)
