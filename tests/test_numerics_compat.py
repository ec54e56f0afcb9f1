"""torchdoctor's detector prints what transformers.debug_utils prints, byte for byte, on the same model and input.

Where transformers sees the value the lines must be identical; where it is blind (keyword arguments,
ModelOutputs, dicts, deeper nesting) we may only add lines, never change or drop one.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import re

import pytest
import torch
from models import tiny_t5
from torch import nn
from transformers.debug_utils import DebugUnderflowOverflow as TransformersDetector
from transformers.debug_utils import detect_overflow as transformers_detect_overflow

import torchdoctor
from torchdoctor.numerics.advice import BROKEN_WEIGHTS_FIX, MIXED_PRECISION_FIX
from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected, detect_overflow


def run_batches(make_detector, model, batches, plant=None, autocast=False, **options):
    """Run ``batches`` through ``model`` under a detector (each batch under fp16 autocast with ``autocast``);
    return (stdout, the ValueError raised or None)."""
    out = io.StringIO()
    error = None
    torch.manual_seed(1234)  # same dropout masks for both detectors
    with contextlib.redirect_stdout(out):
        detector = make_detector(model, **options)
        try:
            for number, batch in enumerate(batches):
                if plant is not None:
                    plant(model, number)
                # autocast per batch, as a training loop does: its cache of fp16 weights lasts one block
                with torch.autocast("cpu", dtype=torch.float16, enabled=autocast):
                    result = model(**batch) if isinstance(batch, dict) else model(batch)
                if hasattr(result, "loss") and result.loss is not None:
                    result.loss.backward()
        except ValueError as raised:
            error = raised
        finally:
            if hasattr(detector, "remove"):
                detector.remove()
    return out.getvalue(), error


class Block(nn.Module):  # returns a tuple holding a tuple, a None and an int, as transformers' layers do
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.GELU()

    def forward(self, x, scale=None):
        h = self.act(self.fc(x))
        return h, (h * 2, None), 3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = nn.Linear(4, 8)
        self.relu = nn.ReLU()
        self.block = Block()
        self.fc1 = nn.Linear(8, 2)

    def forward(self, x):
        h, _, _ = self.block(self.relu(self.fc0(x)), None)
        return self.fc1(h)


def small_mlp() -> nn.Module:
    torch.manual_seed(0)
    return Net()


def plant_inf_in_last_linear(at_batch):
    def plant(model, number):
        if number == at_batch:
            with torch.no_grad():
                model.fc1.weight[0, 0] = float("inf")

    return plant


def mlp_batches(n=4):
    return [torch.full((2, 4), float(i + 1)) for i in range(n)]


def test_dump_is_byte_identical_to_transformers():
    ours, our_error = run_batches(
        DebugUnderflowOverflow, small_mlp(), mlp_batches(), plant_inf_in_last_linear(2), max_frames_to_save=7
    )
    theirs, their_error = run_batches(
        TransformersDetector, small_mlp(), mlp_batches(), plant_inf_in_last_linear(2), max_frames_to_save=7
    )
    assert "Detected inf/nan during batch_number=2" in theirs
    assert ours == theirs
    assert isinstance(our_error, InfNanDetected) and isinstance(our_error, ValueError)
    # then what to try, which transformers does not say: the weight fc1 holds is broken (fp32 too)
    assert str(our_error) == (
        f"{their_error} First inf/nan in forward of fc1 (Linear), batch 2.\nthe weights are already broken: "
        "fc1.weight holds infs; no change of precision (keep_in_fp32 included) brings them back\n"
        "batch 1's forward ran without inf/nan, so its loss, backward or optimizer step made them: rerun with "
        "check_gradients=True to see the first gradient that went bad (a loss that is itself inf/nan, such as the "
        f"log of 0, shows as the model's own grad_output)\n{BROKEN_WEIGHTS_FIX}"
    )
    assert our_error.batch_number == 2
    assert our_error.module_name == "fc1"
    assert our_error.report in ours


def test_a_half_precision_dump_is_identical_and_the_advice_is_in_the_error():
    """fp16 weights whose output passes 65504: the dump stays transformers' text, whole; what to do about it
    (train in mixed precision) is the error's last lines."""

    def overflow_in_fp16(model, number):
        if number == 2:
            with torch.no_grad():
                model.fc0.weight.fill_(3e4)  # finite in fp16, under the headroom warning; its output is not

    ours, our_error = run_batches(
        DebugUnderflowOverflow, small_mlp().half(), half_batches(), overflow_in_fp16, max_frames_to_save=5
    )
    theirs, their_error = run_batches(
        TransformersDetector, small_mlp().half(), half_batches(), overflow_in_fp16, max_frames_to_save=5
    )
    assert "Detected inf/nan during batch_number=2" in theirs and "float16" not in theirs
    assert ours == theirs
    assert str(our_error) == (
        f"{their_error} First inf/nan in forward of fc0 (Linear), batch 2.\n"
        'the weights are float16 (model.half(), or Lightning precision="16-true"/"bf16-true"), so no module '
        f"can be kept in fp32\n{MIXED_PRECISION_FIX}"
    )


def test_an_autocast_dump_is_identical_and_the_keep_in_fp32_call_is_in_the_error():
    def too_big_for_fp16(model, number):
        if number == 1:
            with torch.no_grad():
                model.fc1.weight.fill_(1e5)  # fp32 weights; autocast's cast to fp16 makes them inf

    ours, our_error = run_batches(DebugUnderflowOverflow, small_mlp(), mlp_batches(), too_big_for_fp16, True)
    theirs, their_error = run_batches(
        TransformersDetector, small_mlp(), mlp_batches(), too_big_for_fp16, True
    )
    assert "Detected inf/nan during batch_number=1" in theirs
    assert ours == theirs
    assert str(our_error) == (
        f'{their_error} First inf/nan in forward of fc1 (Linear), batch 1.\ntorchdoctor.keep_in_fp32(model, "fc1")'
    )
    assert our_error.report.advice == 'torchdoctor.keep_in_fp32(model, "fc1")'


def half_batches(n=4):
    return [batch.half() for batch in mlp_batches(n)]


def test_keeping_no_frames_is_identical_too():
    ours, _ = run_batches(
        DebugUnderflowOverflow, small_mlp(), mlp_batches(), plant_inf_in_last_linear(1), max_frames_to_save=0
    )
    theirs, _ = run_batches(
        TransformersDetector, small_mlp(), mlp_batches(), plant_inf_in_last_linear(1), max_frames_to_save=0
    )
    assert "Last 0 forward frames:" in theirs
    assert ours == theirs


def test_dump_of_a_bad_root_output_is_identical_too():
    # the root's frame is the last of a batch: transformers has already advanced its counter there
    class Root(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x).sum() / torch.zeros(())

    torch.manual_seed(0)
    batches = [torch.ones(1, 2)]
    ours, error = run_batches(DebugUnderflowOverflow, Root(), batches)
    torch.manual_seed(0)
    theirs, _ = run_batches(TransformersDetector, Root(), batches)
    assert "Detected inf/nan during batch_number=1" in theirs
    assert ours == theirs
    assert error.batch_number == 0 and error.module_name == ""


@pytest.mark.parametrize("trace", [[0], [1, 3], [0, 1, 2, 3]])
def test_trace_mode_is_byte_identical(trace):
    ours, our_error = run_batches(DebugUnderflowOverflow, small_mlp(), mlp_batches(), trace_batch_nums=trace)
    theirs, their_error = run_batches(
        TransformersDetector, small_mlp(), mlp_batches(), trace_batch_nums=trace
    )
    assert "*** Starting batch number=" in theirs
    assert ours == theirs
    assert our_error is None and their_error is None


def test_abort_after_batch_num_is_identical():
    options = dict(trace_batch_nums=[1], abort_after_batch_num=1)
    ours, our_error = run_batches(DebugUnderflowOverflow, small_mlp(), mlp_batches(), **options)
    theirs, their_error = run_batches(TransformersDetector, small_mlp(), mlp_batches(), **options)
    assert ours == theirs
    assert str(our_error) == str(their_error)
    assert "abort_after_batch_num=1" in str(our_error)


def test_nan_weight_and_has_nans_lines_are_identical():
    def plant(model, number):
        if number == 1:
            with torch.no_grad():
                model.fc0.bias[1] = float("nan")

    ours, _ = run_batches(DebugUnderflowOverflow, small_mlp(), mlp_batches(), plant, max_frames_to_save=3)
    theirs, _ = run_batches(TransformersDetector, small_mlp(), mlp_batches(), plant, max_frames_to_save=3)
    assert theirs.startswith("bias has nans\noutput has nans\n")
    assert ours == theirs


def test_in_place_changes_are_seen_as_transformers_sees_them():
    # ReLU(inplace=True) changes the Linear's output after it was measured: the ReLU's frame must show the change
    def make():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 2))

    def plant(model, number):
        if number == 1:
            with torch.no_grad():
                model[2].bias[0] = float("nan")

    batches = [torch.randn(3, 4, generator=torch.Generator().manual_seed(i)) for i in range(3)]
    ours, _ = run_batches(DebugUnderflowOverflow, make(), batches, plant, trace_batch_nums=[0])
    theirs, _ = run_batches(TransformersDetector, make(), batches, plant, trace_batch_nums=[0])
    assert ours == theirs


def test_deferred_read_back_prints_the_same_dump_and_trace():
    # what accelerators do (statistics stay on the device until the root module returns), forced on CPU
    for options in (dict(max_frames_to_save=7), dict(trace_batch_nums=[0, 2])):
        eager, eager_error = run_batches(
            DebugUnderflowOverflow, small_mlp(), mlp_batches(), plant_inf_in_last_linear(2), **options
        )
        deferred, deferred_error = run_batches(
            DebugUnderflowOverflow,
            small_mlp(),
            mlp_batches(),
            plant_inf_in_last_linear(2),
            sync="batch",
            **options,
        )
        assert deferred == eager
        assert type(deferred_error) is type(eager_error)
        if eager_error is not None:
            assert deferred_error.module_name == eager_error.module_name == "fc1"


# -- a real transformers model ---------------------------------------------------------------------------


def t5_batches(n=2, labels=None):
    generator = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(n):
        ids = torch.randint(1, 64, (2, 6), generator=generator)
        batches.append(
            {
                "input_ids": ids,
                "labels": labels if labels is not None else torch.randint(1, 64, (2, 4), generator=generator),
            }
        )
    return batches


# names only torchdoctor shows: keyword arguments, dict/ModelOutput keys, nesting transformers does not open
_EXTRA_NAME = re.compile(r"(input|output)(\[\d+\])*\[[A-Za-z_][^\]]*\]|(input\[\d+\]|output(\[\d+\]){2})\[")


def assert_only_extra_lines(theirs: str, ours: str) -> list[str]:
    """Every line of ``theirs`` is in ``ours``, in order; the lines ``ours`` adds are all of the extra kinds."""
    their_lines, our_lines = theirs.splitlines(), ours.splitlines()
    matcher = difflib.SequenceMatcher(None, their_lines, our_lines, autojunk=False)
    added = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), (tag, their_lines[i1:i2], our_lines[j1:j2])
        if tag == "insert":
            added += our_lines[j1:j2]
    for line in added:
        name = line[18:] if line[17:18] == " " else ""
        assert _EXTRA_NAME.match(name) or line.endswith(" has nans") or line.endswith(" has infs"), line
    return added


def test_t5_dump_has_transformers_lines_plus_extras_only():
    def plant(model, number):
        if number == 1:
            with torch.no_grad():
                model.encoder.block[1].layer[1].DenseReluDense.wo.weight[0, :] = 3e38

    ours, our_error = run_batches(DebugUnderflowOverflow, tiny_t5(), t5_batches(), plant)
    theirs, _ = run_batches(TransformersDetector, tiny_t5(), t5_batches(), plant)
    assert "Detected inf/nan during batch_number=1" in theirs
    added = assert_only_extra_lines(theirs, ours)
    assert added, "expected keyword-argument lines transformers cannot see"
    assert our_error.module_name == "encoder.block.1.layer.1.DenseReluDense.wo"
    assert ours.rstrip().endswith("output")  # fp32 model: no keep_in_fp32 suggestion
    assert "keep_in_fp32" not in ours


def once_per_call(trace: str) -> str:
    """``trace`` with a module's frame printed again right after itself dropped: transformers before 5 hooks a
    module once per parent holding it (T5's ``shared`` embedding is also ``encoder.embed_tokens`` and
    ``decoder.embed_tokens``), so each call of it prints its frame three times; torchdoctor hooks it once."""
    frames: list[list[str]] = []
    for line in trace.splitlines():
        header = line[:18] == " " * 18 and line[18:19] not in (
            "",
            " ",
        )  # "                  shared Embedding"
        if header or not frames:
            frames.append([line])
        else:
            frames[-1].append(line)
    kept = [frame for i, frame in enumerate(frames) if i == 0 or frame != frames[i - 1]]
    return "\n".join(line for frame in kept for line in frame) + ("\n" if trace.endswith("\n") else "")


def test_t5_trace_has_transformers_lines_plus_extras_only():
    ours, _ = run_batches(DebugUnderflowOverflow, tiny_t5(), t5_batches(1), trace_batch_nums=[0])
    theirs, _ = run_batches(TransformersDetector, tiny_t5(), t5_batches(1), trace_batch_nums=[0])
    added = assert_only_extra_lines(once_per_call(theirs), ours)
    # the root's ModelOutput, opened: transformers only says "not a tensor output"
    assert any(line.endswith(" output[loss]") for line in added)
    assert any(line.endswith(" output[logits]") for line in added)
    assert any(line.endswith(" input[input_ids]") for line in added)


def test_nan_loss_inside_a_model_output_is_caught():
    # every label ignored: the mean over zero tokens is nan, and only the loss is bad
    labels = torch.full((2, 4), -100)
    ours, error = run_batches(DebugUnderflowOverflow, tiny_t5(), t5_batches(1, labels=labels))
    theirs, their_error = run_batches(TransformersDetector, tiny_t5(), t5_batches(1, labels=labels))
    assert their_error is None and "Detected" not in theirs  # transformers misses it
    assert isinstance(error, InfNanDetected)
    assert error.module_name == "" and error.batch_number == 0
    assert "output[loss] has nans" in ours
    assert re.search(r"\n\s+nan\s+nan output\[loss\]\n", ours)


def test_detect_overflow_matches_transformers():
    cases = {
        "fine": torch.tensor([1.0, -2.0]),
        "nan": torch.tensor([1.0, float("nan")]),
        "inf": torch.tensor([float("-inf"), 2.0]),
        "both": torch.tensor([float("inf"), float("nan")]),
        "half": torch.tensor([70000.0]).half(),
    }
    for ctx, tensor in cases.items():
        ours_out, theirs_out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(ours_out):
            ours = detect_overflow(tensor, ctx)
        with contextlib.redirect_stdout(theirs_out):
            theirs = transformers_detect_overflow(tensor, ctx)
        assert ours == theirs, ctx
        assert ours_out.getvalue() == theirs_out.getvalue(), ctx


def test_detect_overflow_looks_inside_containers():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        found = detect_overflow({"loss": torch.tensor(float("nan")), "x": [torch.ones(2)]}, "step")
        clean = detect_overflow({"x": [torch.ones(2), None, "text"]}, "step")
    assert found is True and clean is False
    assert out.getvalue() == "step[loss] has nans\n"


def test_public_names():
    assert torchdoctor.DebugUnderflowOverflow is DebugUnderflowOverflow
    assert torchdoctor.detect_overflow is detect_overflow
