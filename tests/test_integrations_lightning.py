"""DebugUnderflowOverflowCallback in a real lightning.Trainer on CPU."""

import io

import pytest
import torch
from helpers import hook_count
from torch import nn

lightning = pytest.importorskip("lightning")

from torchdoctor.integrations.lightning import DebugUnderflowOverflowCallback  # noqa: E402
from torchdoctor.numerics.advice import BROKEN_WEIGHTS_FIX, MIXED_PRECISION_FIX  # noqa: E402
from torchdoctor.numerics.detector import InfNanDetected  # noqa: E402


class Regression(lightning.LightningModule):
    """A two-layer regression; ``call_self`` picks ``self(x)`` or ``self.model(x)`` in ``training_step``."""

    def __init__(self, plant_overflow: bool = False, call_self: bool = True):
        super().__init__()
        torch.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.call_self = call_self
        if plant_overflow:  # weights grown until the second layer's output no longer fits in fp32
            self.grow_weights(1e20)
        self.batches_seen = []

    def grow_weights(self, factor: float) -> None:
        with torch.no_grad():
            self.model[0].weight.mul_(factor)
            self.model[2].weight.mul_(factor)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_index):
        x, y = batch
        prediction = self(x) if self.call_self else self.model(x)
        return nn.functional.mse_loss(prediction, y)

    def on_train_batch_end(self, outputs, batch, batch_index):
        detector = self.trainer.callbacks[0].detector
        self.batches_seen.append(detector.batch_number if detector else None)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def loader():
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(16, 4, generator=generator) + 0.5
    data = torch.utils.data.TensorDataset(x, x.sum(dim=1, keepdim=True))
    return torch.utils.data.DataLoader(data, batch_size=4)


def fit(module, callback, max_steps=3, precision="32-true"):
    trainer = lightning.Trainer(
        accelerator="cpu",
        precision=precision,
        max_steps=max_steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[callback],
    )
    trainer.fit(module, loader())
    return trainer


def test_planted_overflow_caught_report_names_the_module_and_the_hooks_come_off(capsys):
    module = Regression(plant_overflow=True)
    callback = DebugUnderflowOverflowCallback(max_frames_to_save=2)
    with pytest.raises(InfNanDetected) as error:
        fit(module, callback)
    assert error.value.module_name == "model.2"
    assert error.value.batch_number == 0
    out = capsys.readouterr().out
    assert "Detected inf/nan during batch_number=0" in out
    assert "Last 2 forward frames:" in out
    assert f"{' ' * 17}model.2 Linear" in out
    assert callback.detector is None and hook_count(module) == 0


def test_healthy_run_completes_options_apply_and_hooks_come_off(capsys):
    module = Regression()
    output = io.StringIO()
    callback = DebugUnderflowOverflowCallback(trace_batch_nums=[1], file=output)
    trainer = fit(module, callback)
    assert trainer.global_step == 3
    assert module.batches_seen == [1, 2, 3]  # attached during fit, one batch per step
    assert callback.detector is None and hook_count(module) == 0
    traced = output.getvalue()
    assert "*** Starting batch number=1 ***" in traced and "model.2 Linear" in traced
    assert "batch number=2" not in traced
    assert "Starting batch number" not in capsys.readouterr().out


def test_module_option_watches_the_submodule_training_step_calls():
    module = Regression(call_self=False)
    fit(module, DebugUnderflowOverflowCallback(module="model"), max_steps=2)
    assert module.batches_seen == [1, 2]
    assert hook_count(module) == 0


def test_a_watched_module_never_called_is_warned_about_once():
    module = Regression(call_self=False)
    with pytest.warns(
        UserWarning, match=r"Regression's forward was not called during training batch 0.*\['model'\]"
    ):
        fit(module, DebugUnderflowOverflowCallback(), max_steps=2)
    assert module.batches_seen == [0, 0]


def test_unknown_module_is_named_with_the_children():
    callback = DebugUnderflowOverflowCallback(module="modle")
    with pytest.raises(
        ValueError, match=r"module='modle'\): Regression has no such submodule; .*\['model'\]"
    ):
        fit(Regression(), callback)


class FailsAfterForward(Regression):
    def training_step(self, batch, batch_index):
        super().training_step(batch, batch_index)
        raise RuntimeError("the loss function broke")


def test_an_exception_outside_the_forward_takes_the_hooks_off_too():
    module = FailsAfterForward()
    callback = DebugUnderflowOverflowCallback()
    with pytest.raises(RuntimeError, match="the loss function broke"):
        fit(module, callback)
    assert callback.detector is None and hook_count(module) == 0


def test_16_true_precision_is_told_to_train_in_mixed_precision(caplog):
    """precision="16-true" makes the weights fp16 themselves: keep_in_fp32 cannot apply, "16-mixed" is the fix."""
    module = Regression()
    module.grow_weights(600)  # finite in fp16 (|w| < 300), but the second layer's output passes 65504
    callback = DebugUnderflowOverflowCallback(file=io.StringIO())
    with pytest.raises(InfNanDetected) as error:
        fit(module, callback, precision="16-true")
    report, message = error.value.report, str(error.value)
    assert (error.value.module_name, error.value.batch_number) == ("model.2", 0)
    assert module.model[2].weight.dtype == torch.float16 and torch.isfinite(module.model[2].weight).all()
    assert message.endswith(f"so no module can be kept in fp32\n{MIXED_PRECISION_FIX}")
    assert 'precision="16-mixed" or "bf16-mixed"' in message and "keep_in_fp32(model" not in message
    assert report.endswith("output\n\n\n") and MIXED_PRECISION_FIX not in report  # the dump is transformers'
    logged = [r.getMessage() for r in caplog.records if r.name == "torchdoctor.integrations._attach"]
    assert logged == [f"inf/nan in forward of model.2, batch 0; what to try:\n{report.advice}"]
    assert callback.detector is None and hook_count(module) == 0


def _half_mse_backward_on_cpu() -> bool:
    """Whether this torch has mse_loss's backward for float16 on CPU (torch 2.4 has not; 2.13 has)."""
    x = torch.ones(2, dtype=torch.float16, requires_grad=True)
    try:
        nn.functional.mse_loss(x, torch.zeros(2, dtype=torch.float16)).backward()
    except RuntimeError:
        return False
    return True


@pytest.mark.skipif(
    not _half_mse_backward_on_cpu(), reason="this torch has no float16 mse_loss backward on CPU"
)
def test_weights_an_optimizer_step_made_inf_are_called_broken():
    """Batch 0 is finite but close to fp16's limit; its gradient step makes model.0's weights inf in fp16."""
    module = Regression()
    module.grow_weights(300)
    with pytest.raises(InfNanDetected) as error:
        fit(module, DebugUnderflowOverflowCallback(file=io.StringIO()), precision="16-true")
    assert (error.value.module_name, error.value.batch_number) == ("model.0", 1)
    assert str(error.value).endswith(
        "the weights are already broken: model.0.weight, model.0.bias hold infs; no change of precision "
        f"(keep_in_fp32 included) brings them back\n{BROKEN_WEIGHTS_FIX}"
    )
    assert BROKEN_WEIGHTS_FIX not in error.value.report
