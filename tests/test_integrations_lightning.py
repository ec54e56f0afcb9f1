"""DebugUnderflowOverflowCallback in a real lightning.Trainer on CPU."""

import io

import pytest
import torch
from helpers import hook_count
from torch import nn

from torchdoctor.numerics.advice import BROKEN_WEIGHTS_FIX, MIXED_PRECISION_FIX
from torchdoctor.numerics.detector import InfNanDetected


@pytest.fixture
def lm():
    """`tests/lightning_models.py`: lightning (4 s of CPU to import) is imported by the tests that use it, not
    at collection, which every pytest-xdist worker does for every file."""
    pytest.importorskip("lightning")
    import lightning_models

    return lightning_models


def test_planted_overflow_caught_report_names_the_module_and_the_hooks_come_off(lm, capsys):
    module = lm.Regression(plant_overflow=True)
    callback = lm.DebugUnderflowOverflowCallback(max_frames_to_save=2)
    with pytest.raises(InfNanDetected) as error:
        lm.fit(module, callback)
    assert error.value.module_name == "model.2"
    assert error.value.batch_number == 0
    out = capsys.readouterr().out
    assert "Detected inf/nan during batch_number=0" in out
    assert "Last 2 forward frames:" in out
    assert f"{' ' * 17}model.2 Linear" in out
    assert callback.detector is None and hook_count(module) == 0


def test_healthy_run_completes_options_apply_and_hooks_come_off(lm, capsys):
    module = lm.Regression()
    output = io.StringIO()
    callback = lm.DebugUnderflowOverflowCallback(trace_batch_nums=[1], file=output)
    trainer = lm.fit(module, callback)
    assert trainer.global_step == 3
    assert module.batches_seen == [1, 2, 3]  # attached during fit, one batch per step
    assert callback.detector is None and hook_count(module) == 0
    traced = output.getvalue()
    assert "*** Starting batch number=1 ***" in traced and "model.2 Linear" in traced
    assert "batch number=2" not in traced
    assert "Starting batch number" not in capsys.readouterr().out


def test_module_option_watches_the_submodule_training_step_calls(lm):
    module = lm.Regression(call_self=False)
    lm.fit(module, lm.DebugUnderflowOverflowCallback(module="model"), max_steps=2)
    assert module.batches_seen == [1, 2]
    assert hook_count(module) == 0


def test_a_watched_module_never_called_is_warned_about_once(lm):
    module = lm.Regression(call_self=False)
    with pytest.warns(
        UserWarning, match=r"Regression's forward was not called during training batch 0.*\['model'\]"
    ):
        lm.fit(module, lm.DebugUnderflowOverflowCallback(), max_steps=2)
    assert module.batches_seen == [0, 0]


def test_unknown_module_is_named_with_the_children(lm):
    callback = lm.DebugUnderflowOverflowCallback(module="modle")
    with pytest.raises(
        ValueError, match=r"module='modle'\): Regression has no such submodule; .*\['model'\]"
    ):
        lm.fit(lm.Regression(), callback)


def test_an_exception_outside_the_forward_takes_the_hooks_off_too(lm):
    module = lm.FailsAfterForward()
    callback = lm.DebugUnderflowOverflowCallback()
    with pytest.raises(RuntimeError, match="the loss function broke"):
        lm.fit(module, callback)
    assert callback.detector is None and hook_count(module) == 0


def test_16_true_precision_is_told_to_train_in_mixed_precision(lm, caplog):
    """precision="16-true" makes the weights fp16 themselves: keep_in_fp32 cannot apply, "16-mixed" is the fix."""
    module = lm.Regression()
    module.grow_weights(600)  # finite in fp16 (|w| < 300), but the second layer's output passes 65504
    callback = lm.DebugUnderflowOverflowCallback(file=io.StringIO())
    with pytest.raises(InfNanDetected) as error:
        lm.fit(module, callback, precision="16-true")
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
def test_weights_an_optimizer_step_made_inf_are_called_broken(lm):
    """Batch 0 is finite but close to fp16's limit; its gradient step makes model.0's weights inf in fp16."""
    module = lm.Regression()
    module.grow_weights(300)
    with pytest.raises(InfNanDetected) as error:
        lm.fit(module, lm.DebugUnderflowOverflowCallback(file=io.StringIO()), precision="16-true")
    assert (error.value.module_name, error.value.batch_number) == ("model.0", 1)
    said = str(error.value)
    assert (
        "the weights are already broken: model.0.weight, model.0.bias hold infs; no change of precision "
        "(keep_in_fp32 included) brings them back\nbatch 0's forward ran without inf/nan, so its loss, backward or "
        "optimizer step made them: rerun with check_gradients=True" in said
    ), said
    assert said.endswith(f"\n{BROKEN_WEIGHTS_FIX}"), said
    assert BROKEN_WEIGHTS_FIX not in error.value.report
