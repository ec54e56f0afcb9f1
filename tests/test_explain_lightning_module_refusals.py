"""What a LightningModule's own methods refuse (lightning/pytorch/core/module.py: self.log / log_dict,
manual_backward, clip_gradients, self.trainer), read as lightning_call_refused with the fix each message names:
produced for real by Lightning on CPU where one small fit shows it, else the catalog's template filled the way
module.py fills it."""

from __future__ import annotations

import traceback

import lightning.pytorch as pl
import pytest
import torch
from explaining import explained
from lightning.fabric.utilities.exceptions import MisconfigurationException
from torch.utils.data import DataLoader, TensorDataset

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")


class Logs(pl.LightningModule):
    """A module whose training_step logs ``value`` (with manual_backward first when ``manual`` is set)."""

    def __init__(self, value=None, manual=False):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.value, self.manual = value, manual

    def training_step(self, batch, batch_idx):
        loss = self.layer(batch[0]).sum()
        if self.manual:
            self.manual_backward(loss)
        self.log("value", self.value)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def refusal_of(module: pl.LightningModule, tmp_path) -> str:
    """The traceback of one batch of fit() on ``module``, on the CPU."""
    trainer = pl.Trainer(
        accelerator="cpu",
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    loader = DataLoader(TensorDataset(torch.ones(2, 2)), batch_size=2)
    try:
        trainer.fit(module, loader)
    except (ValueError, MisconfigurationException) as err:
        return "".join(traceback.format_exception(err))
    pytest.fail("fit() ran without the refusal")


def refused(text: str, keyword: str):
    found = explained(text)
    assert found.id == "log.lightning_call_refused", (found.id, found.summary)
    assert found.details["confidence"] == "certain", found.summary
    assert keyword in found.fix, found.fix
    return found


def test_a_string_logged_is_refused_with_what_self_log_takes(tmp_path):
    refused(refusal_of(Logs(value="fast"), tmp_path), "float(x)")


def test_a_dict_handed_to_self_log_is_sent_to_log_dict(tmp_path):
    refused(refusal_of(Logs(value={"acc": 1.0}), tmp_path), "self.log_dict")


def test_a_vector_logged_is_refused_with_its_reduction(tmp_path):
    refused(refusal_of(Logs(value=torch.ones(3)), tmp_path), "value.mean()")


def test_manual_backward_under_automatic_optimization(tmp_path):
    refused(refusal_of(Logs(value=1.0, manual=True), tmp_path), "self.automatic_optimization = False")


def test_a_module_without_its_trainer():
    try:
        Logs().trainer  # noqa: B018 (the property raises)
    except RuntimeError as err:
        text = "".join(traceback.format_exception(err))
    refused(text, "from a hook")


@pytest.mark.parametrize(
    ("template", "values", "keyword"),
    (
        ("lightning:you-are-trying-to-self-log-3", (), "predict_step"),
        ("lightning:self-log-dict-was-called-but", ("{'val': {'acc': 1.0}}",), "one level of keys"),
        ("lightning:you-are-trying-to-self-log-4", (), "outside a hook"),
        ("lightning:could-not-find-the-lightningmodule-attribute", (), "metric_attribute="),
        (
            "lightning:you-called-self-log-with-the",
            ("'val/dataloader_idx_0/acc'",),
            "add_dataloader_idx=False",
        ),
        ("lightning:with-def-training-step-self-dataloader", (), "batch_size=N"),
        ("lightning:you-have-set-trainer-gradient-clip", ("1.0", "0.5"), "in one place"),
        ("lightning:your-lightningmodule-code-tried-to-access", ("global_step",), "self.fabric"),
    ),
)
def test_the_template_as_module_py_fills_it(template, values, keyword):
    text = by_id()[template].text
    for value in values:
        text = text.replace("{}", value, 1)
    refused(
        'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n'
        "lightning.fabric.utilities.exceptions.MisconfigurationException: " + text,
        keyword,
    )
