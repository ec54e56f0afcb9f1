"""Reduced precision: headroom warnings, fp8 saturation, the underflow share, and the fp32 fix the dump suggests."""

from __future__ import annotations

import io
import logging

import pytest
import torch
from models import tiny_t5
from torch import nn

import torchdoctor
from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected
from torchdoctor.numerics.fp32 import suggestion


class Emit(nn.Module):
    def forward(self, x):
        return x


class CastToFp8(nn.Module):
    def forward(self, x):
        return x.to(torch.float8_e4m3fn)


def scaled_linear(scale: float, dtype: torch.dtype) -> nn.Sequential:
    model = nn.Sequential(nn.Linear(2, 2), Emit()).to(dtype)
    with torch.no_grad():
        model[0].weight.copy_(torch.eye(2) * scale)
        model[0].bias.zero_()
    return model


def test_fp16_headroom_is_warned_once_per_tensor_module_and_slot():
    model = scaled_linear(1.5e4, torch.float16)
    out = io.StringIO()
    with DebugUnderflowOverflow(model, file=out) as detector:
        for _ in range(3):
            model(torch.tensor([[4.0, 1.0]], dtype=torch.float16))
    expected = "0 output reached 6.00e+04 = 92% of float16 max"
    # the Emit (1) and the Sequential return the same tensor: it was warned about where it was made
    assert detector.warnings == [expected]
    assert out.getvalue().count(expected) == 1
    assert (
        "input[0] reached" not in out.getvalue()
    )  # what a module receives was warned about where it was made


def test_a_new_tensor_past_the_headroom_is_warned_about_again():
    model = nn.Sequential(nn.Linear(2, 2), Emit(), nn.Linear(2, 2), nn.Dropout(0.0)).half()
    with torch.no_grad():
        for linear in (model[0], model[2]):
            linear.weight.copy_(torch.eye(2))
            linear.bias.zero_()
        model[2].weight.mul_(1.1)
    with DebugUnderflowOverflow(model, file=io.StringIO()) as detector:
        for _ in range(2):
            model(torch.tensor([[5e4, 1.0]], dtype=torch.float16))
    # the input itself passes the headroom too, but a module's input was made elsewhere
    assert detector.warnings == [
        "0 output reached 5.00e+04 = 76% of float16 max",
        "2 output reached 5.50e+04 = 84% of float16 max",
    ]


def test_bf16_headroom_and_the_threshold():
    model = scaled_linear(1e38, torch.bfloat16)
    x = torch.tensor([[2.0, 0.0]], dtype=torch.bfloat16)
    with DebugUnderflowOverflow(model, file=io.StringIO()) as detector:
        model(x)
    # 1e38 is 9.97e37 in bf16: twice that is 59% of bf16's 3.39e38
    assert detector.warnings[0] == "0 output reached 1.99e+38 = 59% of bfloat16 max"
    for headroom in (None, 0.75):
        with DebugUnderflowOverflow(model, file=io.StringIO(), headroom=headroom) as quiet:
            model(x)
        assert quiet.warnings == []
    with pytest.raises(ValueError, match="headroom=2"):
        DebugUnderflowOverflow(model, headroom=2)


def test_fp8_e4m3fn_saturation_is_counted():
    model = nn.Sequential(CastToFp8())
    out = io.StringIO()
    x = torch.tensor([1000.0, -500.0, 3.0, 448.0])  # casts saturate at ±448: 1000 and -500 are lost silently
    with DebugUnderflowOverflow(model, trace_batch_nums=[0], file=out) as detector:
        y = model(x)
    if torch.isnan(
        y[:2].float()
    ).all():  # torch 2.4 on CPU casts what does not fit to nan (2.13 saturates at ±448)
        assert "     nan      nan output\n" in out.getvalue() and "output has nans" in out.getvalue()
        return
    assert torch.isfinite(y.float()).all()  # no inf to detect
    text = out.getvalue()
    assert "0.00e+00 4.48e+02 output\n      3 saturated output\n" in text.replace("3.00e+00", "0.00e+00")
    assert "0 output: 3 of 4 elements saturated at ±448 (float8_e4m3fn has no inf)" in detector.warnings
    assert "0 output reached 4.48e+02 = 100% of float8_e4m3fn max" in detector.warnings


def test_underflow_share_in_traces_and_per_batch_summary():
    model = nn.Sequential(Emit())
    # 1e-6 is subnormal in fp16, 0 is zero: half of the values underflow
    x = torch.tensor([0.0, 1e-6, 1.0, 2.0], dtype=torch.float16)
    out = io.StringIO()
    with DebugUnderflowOverflow(model, trace_batch_nums=[0], file=out):
        model(x)
    assert "0.00e+00 2.00e+00 output\n  50.0% underflow output\n" in out.getvalue()

    out = io.StringIO()
    with DebugUnderflowOverflow(model, underflow=True, file=out) as detector:
        model(x)
        model(torch.ones(4, dtype=torch.float16))
    assert out.getvalue().splitlines() == [
        "batch 0 forward: 50.0% of fp16/bf16 activations are zero or subnormal (most: 0 input[0] 50.0%)",
        "batch 1 forward: 0.0% of fp16/bf16 activations are zero or subnormal (most: 0 input[0] 0.0%)",
    ]
    # the tensor fills four slots (the Emit's and the Sequential's input and output): counted in each
    assert detector.underflow_summary[0] == {
        "batch_number": 0,
        "direction": "forward",
        "tiny": 8,
        "numel": 16,
        "worst": "0 input[0]",
        "worst_share": 0.5,
    }


def test_underflow_of_gradients():
    model = nn.Sequential(nn.Linear(4, 4)).half()
    x = torch.ones(2, 4, dtype=torch.float16, requires_grad=True)
    out = io.StringIO()
    with DebugUnderflowOverflow(model, check_gradients=True, underflow=True, file=out) as detector:
        (model(x) * 1e-8).sum().backward()  # gradients of 1e-8 are subnormal in fp16
    directions = [s["direction"] for s in detector.underflow_summary]
    assert directions == ["forward", "backward"]
    backward = detector.underflow_summary[1]
    assert backward["tiny"] / backward["numel"] > 0.5
    assert "batch 0 backward: " in out.getvalue()


def test_logger_gets_warnings_at_warning_level(caplog):
    model = scaled_linear(1.5e4, torch.float16)
    logger = logging.getLogger("test_numerics_precision")
    with caplog.at_level(logging.INFO, logger=logger.name), DebugUnderflowOverflow(model, logger=logger):
        model(torch.tensor([[4.0, 1.0]], dtype=torch.float16))
    assert [r.levelno for r in caplog.records if "reached" in r.getMessage()] == [logging.WARNING]


def t5_whose_block_overflows_fp16():
    """A small random T5 whose encoder.block.1.layer.1.DenseReluDense.wo outputs ~1e6 (fine in fp32)."""
    model = tiny_t5(dropout_rate=0.0)
    batch = {"input_ids": torch.randint(1, 64, (2, 6)), "labels": torch.randint(1, 64, (2, 4))}
    wo = model.encoder.block[1].layer[1].DenseReluDense.wo
    seen = []
    handle = wo.register_forward_hook(lambda module, args, output: seen.append(output.abs().max().item()))
    with torch.no_grad():
        model(**batch)
        wo.weight.mul_(1e6 / seen[-1])  # as if training had let these weights grow
    handle.remove()
    return model, batch


def test_the_error_ends_with_the_fp32_fix_and_the_fix_works():
    model, batch = t5_whose_block_overflows_fp16()
    out = io.StringIO()
    with DebugUnderflowOverflow(model, file=out), pytest.raises(InfNanDetected) as caught:
        with torch.autocast("cpu", dtype=torch.float16):
            model(**batch)
    assert caught.value.module_name == "encoder.block.1.layer.1.DenseReluDense.wo"
    line = suggestion("encoder.block.1.layer.1.DenseReluDense")
    assert line == 'torchdoctor.keep_in_fp32(model, "encoder.block.1.layer.1.DenseReluDense")'
    dump = caught.value.report
    assert str(caught.value).endswith(f"\n{line}") and dump.advice == line
    assert dump.rstrip("\n").endswith("output") and line not in out.getvalue()  # the dump is transformers'
    assert out.getvalue().endswith(dump + "\n")

    # doing what the error says: the same batch now runs clean under the detector
    with torchdoctor.keep_in_fp32(model, "encoder.block.1.layer.1.DenseReluDense"):
        with DebugUnderflowOverflow(model, file=io.StringIO()), torch.autocast("cpu", dtype=torch.float16):
            loss = model(**batch).loss
    assert torch.isfinite(loss)
