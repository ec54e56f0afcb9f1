"""What both trainer callbacks share: the detector comes off on the way out of a forward that raised, only then."""

import subprocess
import sys

import pytest
import torch
from helpers import hook_count
from torch import nn

from torchdoctor.integrations._attach import Attached, options
from torchdoctor.numerics.detector import InfNanDetected


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 3)
        self.second = nn.Linear(3, 3)

    def forward(self, x):
        return self.second(self.first(x))


def overflowing_input() -> torch.Tensor:
    return torch.tensor([[float("inf"), 1.0, 1.0]])


def test_overflow_raises_and_every_hook_comes_off(capsys):
    model = TwoLayers()
    attached = Attached(model, options(21, None, None, None, False))
    assert hook_count(model) == 3 + 2  # one per module, plus the two that watch for exceptions
    model(torch.ones(1, 3))
    assert attached.attached
    with pytest.raises(InfNanDetected) as error:
        model(overflowing_input())
    assert error.value.module_name in ("first", "second")
    assert "Detected inf/nan during batch_number=1" in capsys.readouterr().out
    assert not attached.attached and hook_count(model) == 0
    attached.remove()  # twice is fine


def test_a_hook_added_after_ours_does_not_turn_the_overflow_into_another_error():
    model = TwoLayers()
    attached = Attached(model, options(21, None, None, None, False))
    calls = []
    users_hook = model.register_forward_hook(lambda m, a, out: calls.append(1))
    with pytest.raises(InfNanDetected):
        model(overflowing_input())
    assert not attached.attached
    # the user's own hook stays, and still works
    assert hook_count(model) == 1
    model(torch.ones(1, 3))
    assert calls
    users_hook.remove()


def test_a_forward_called_from_inside_an_except_block_keeps_the_hooks():
    model = TwoLayers()
    attached = Attached(model, options(21, None, None, None, False))
    try:
        raise KeyError("the caller's own, handled")
    except KeyError:
        model(torch.ones(1, 3))  # e.g. a retry after an out-of-memory error
    assert attached.attached and hook_count(model) == 5
    # an exception inside the forward that is not an overflow takes them off too: training is over
    with pytest.raises(RuntimeError):
        model(torch.ones(1, 4))
    assert not attached.attached and hook_count(model) == 0


OPTIONS = {
    "max_frames_to_save": 21,
    "trace_batch_nums": None,
    "abort_after_batch_num": None,
    "file": None,
    "check_gradients": False,
}


@pytest.mark.parametrize(
    "bad, error, message",
    [
        ({"max_frames_to_save": -1}, ValueError, "max_frames_to_save=-1 must be at least 0"),
        ({"max_frames_to_save": 2.0}, TypeError, "max_frames_to_save=2.0 is not an int"),
        ({"trace_batch_nums": ["1"]}, TypeError, r"trace_batch_nums=\['1'\]: entry '1' is not an int"),
        ({"trace_batch_nums": 3}, TypeError, r"trace_batch_nums=3 is not a list .*write \[3\]"),
        ({"abort_after_batch_num": 1.5}, TypeError, "abort_after_batch_num=1.5 is not an int"),
        ({"file": "out.txt"}, TypeError, "file='out.txt' has no write"),
    ],
)
def test_bad_options_are_named_before_training_starts(bad, error, message):
    # the detector's own checks, named after the callback the user called
    with pytest.raises(error, match=f"^DebugUnderflowOverflowCallback: {message}"):
        options(**{**OPTIONS, **bad})


def test_the_callbacks_take_what_the_detector_takes():
    # max_frames_to_save=0 is valid for the detector (transformers prints "Last 0 forward frames"): here too
    chosen = options(**{**OPTIONS, "max_frames_to_save": 0, "trace_batch_nums": (1, 2)})
    assert chosen["max_frames_to_save"] == 0 and chosen["trace_batch_nums"] == [1, 2]
    model = TwoLayers()
    attached = Attached(model, chosen)
    with pytest.raises(InfNanDetected) as error:
        model(overflowing_input())
    assert "Last 0 forward frames:" in error.value.report
    assert not attached.attached


def test_importing_torchdoctor_imports_neither_transformers_nor_lightning():
    code = (
        "import sys, torchdoctor, torchdoctor.integrations, torchdoctor.numerics.fp32\n"
        "torchdoctor.keep_in_fp32, torchdoctor.DebugUnderflowOverflow\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('transformers', 'lightning', 'pytorch_lightning', 'lightning_fabric')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
