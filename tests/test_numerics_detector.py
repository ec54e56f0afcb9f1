"""The detector's own promises: removable, bounded, redirectable, cheap (counted in kernels, not seconds)."""

from __future__ import annotations

import contextlib
import io
import json
import logging

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from transformers.debug_utils import DebugUnderflowOverflow as TransformersDetector

from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected


def mlp() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def poison(model: nn.Sequential, value: float = float("inf")) -> None:
    with torch.no_grad():
        model[2].weight[0, 0] = value


class CountOps(TorchDispatchMode):
    """Counts the aten operations run while active, by name."""

    def __init__(self):
        super().__init__()
        self.counts: dict[str, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        self.counts[name] = self.counts.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


def test_remove_takes_every_hook_off():
    model = mlp()
    detector = DebugUnderflowOverflow(model, file=io.StringIO())
    assert all(m._forward_hooks for m in model.modules())
    detector.remove()
    detector.remove()  # twice is fine
    assert not any(m._forward_hooks for m in model.modules())
    poison(model)
    model(torch.ones(1, 3))  # no longer watched: no raise


def test_context_manager_removes_hooks_even_after_a_detection():
    model = mlp()
    poison(model)
    out = io.StringIO()
    with pytest.raises(InfNanDetected), DebugUnderflowOverflow(model, file=out):
        model(torch.ones(1, 3))
    assert not any(m._forward_hooks for m in model.modules())
    assert "Detected inf/nan" in out.getvalue()


def test_buffer_stays_bounded_after_a_trace():
    ours_model, theirs_model = mlp(), mlp()
    ours = DebugUnderflowOverflow(ours_model, max_frames_to_save=3, trace_batch_nums=[0], file=io.StringIO())
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = TransformersDetector(theirs_model, max_frames_to_save=3, trace_batch_nums=[0])
        for _ in range(5):
            ours_model(torch.ones(1, 3))
            theirs_model(torch.ones(1, 3))
    assert len(theirs.frames) > 3  # transformers' deque became a list after the trace
    assert len(ours.frames) == 3
    ours.remove()


def test_file_and_logger_redirect_all_output(capsys, caplog):
    model = mlp()
    poison(model)
    out = io.StringIO()
    with pytest.raises(InfNanDetected), DebugUnderflowOverflow(model, file=out):
        model(torch.ones(1, 3))
    assert capsys.readouterr().out == ""
    assert out.getvalue().startswith("weight has infs\n")

    logger = logging.getLogger("test_numerics_detector")
    with caplog.at_level(logging.INFO, logger=logger.name):
        with pytest.raises(InfNanDetected), DebugUnderflowOverflow(model, logger=logger):
            model(torch.ones(1, 3))
    assert capsys.readouterr().out == ""
    dumps = [r for r in caplog.records if "Detected inf/nan during batch_number=0" in r.getMessage()]
    assert len(dumps) == 1 and dumps[0].levelno == logging.ERROR


def test_exception_carries_batch_module_and_report():
    model = mlp()
    out = io.StringIO()
    detector = DebugUnderflowOverflow(model, file=out)
    model(torch.ones(1, 3))
    model(torch.ones(1, 3))
    poison(model, float("nan"))
    with pytest.raises(ValueError) as caught:  # except ValueError keeps working
        model(torch.ones(1, 3))
    error = caught.value
    assert isinstance(error, InfNanDetected)
    assert (error.batch_number, error.module_name, error.direction) == (2, "2", "forward")
    assert error.report == detector.report
    assert error.report in out.getvalue()
    assert "Detected inf/nan during batch_number=2" in error.report
    assert "First inf/nan in forward of 2 (Linear), batch 2" in str(error)
    detector.remove()


def test_watching_goes_on_after_a_caught_detection():
    model = mlp()
    out = io.StringIO()
    detector = DebugUnderflowOverflow(model, file=out)
    poison(model)
    with pytest.raises(InfNanDetected):
        model(torch.ones(1, 3))
    poison(model, 0.5)  # fixed: the next batches run
    model(torch.ones(1, 3))
    model(torch.ones(1, 3))
    poison(model)
    with pytest.raises(InfNanDetected) as caught:
        model(torch.ones(1, 3))
    # the batch that raised never finished, so it is counted again, as transformers counts
    assert caught.value.batch_number == 2
    assert out.getvalue().count("Detected inf/nan") == 2
    detector.remove()


def test_trace_mode_does_not_detect_and_later_batches_are_clean():
    model = mlp()
    poison(model)
    out = io.StringIO()
    with DebugUnderflowOverflow(model, trace_batch_nums=[0], file=out):
        model(torch.ones(1, 3))  # traced: printed, not raised
        poison(model, 0.5)
        model(torch.ones(1, 3))
    text = out.getvalue()
    assert "     inf weight" in text and "weight has infs" in text  # batch 0, traced
    assert "Detected" not in text  # transformers would dump at batch 1's first frame, though it is clean


def test_frames_and_json_describe_the_dump():
    model = mlp()
    poison(model)
    detector = DebugUnderflowOverflow(model, max_frames_to_save=2, file=io.StringIO())
    with pytest.raises(InfNanDetected):
        model(torch.ones(1, 3))
    frames = detector.frames
    assert [f.module_name for f in frames] == ["1", "2"]
    assert frames[-1].bad and not frames[0].bad
    data = json.loads(detector.to_json())
    assert data["module"] == "2" and data["direction"] == "forward" and data["batch_number"] == 0
    weight = data["frames"][-1]["entries"][0]
    assert weight["name"] == "weight" and weight["abs_max"] == "inf" and weight["dtype"] == "float32"
    detector.remove()


# -- cost, counted in kernels ----------------------------------------------------------------------------


class Twice(nn.Module):
    """Calls the same Linear twice per batch: its weight must be measured once."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.Tanh()

    def forward(self, x):
        return self.fc(self.act(self.fc(x)))


def test_one_reduction_per_distinct_tensor_per_batch():
    model = Twice()
    x = torch.ones(2, 4)
    with CountOps() as bare:
        model(x)
    with DebugUnderflowOverflow(model, file=io.StringIO()), CountOps() as watched:
        model(x)
    # distinct tensors: weight, bias, x, fc out 1, tanh out, fc out 2 (the root's output) -> 6
    assert watched.counts.get("aminmax", 0) - bare.counts.get("aminmax", 0) == 6
    for op in ("isnan", "isinf", "min", "max", "any"):
        assert watched.counts.get(op, 0) == bare.counts.get(op, 0), op


def test_parameters_are_measured_again_when_changed_in_place():
    model = Twice()

    def bump(module, args, output):
        with torch.no_grad():
            module.weight.mul_(2)  # changes the weight between its two calls

    model.fc.register_forward_hook(bump)
    ours = io.StringIO()
    with DebugUnderflowOverflow(model, trace_batch_nums=[0], file=ours):
        model(torch.ones(2, 4))
    weights = [line for line in ours.getvalue().splitlines() if line.endswith(" weight")]
    assert len(weights) == 2 and weights[0] != weights[1]


def test_deferred_mode_reads_back_once_per_batch():
    model = mlp()
    x = torch.ones(1, 3)
    with DebugUnderflowOverflow(model, sync="batch", file=io.StringIO()), CountOps() as deferred:
        model(x)
        model(x)
    with DebugUnderflowOverflow(model, file=io.StringIO()), CountOps() as eager:
        model(x)
    assert eager.counts.get("_local_scalar_dense", 0) > 0  # .item() per tensor
    assert deferred.counts.get("_local_scalar_dense", 0) == 0
    assert deferred.counts.get("cat", 0) == 2  # the one read-back of each batch


def test_sync_must_be_known():
    with pytest.raises(ValueError, match="sync='sometimes'"):
        DebugUnderflowOverflow(mlp(), sync="sometimes")


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(model=None), TypeError, "model=None (NoneType) is not a torch.nn.Module"),
        (dict(model="model"), TypeError, "model='model' (str) is not a torch.nn.Module"),
        (dict(model=lambda x: x), TypeError, "(function) is not a torch.nn.Module"),
        (dict(max_frames_to_save=-1), ValueError, "max_frames_to_save=-1 must be at least 0"),
        (dict(max_frames_to_save="x"), TypeError, "max_frames_to_save='x' is not an int"),
        (
            dict(trace_batch_nums=5),
            TypeError,
            "trace_batch_nums=5 is not a list of batch numbers; for one batch write [5]",
        ),
        (dict(trace_batch_nums=[0, "1"]), TypeError, "trace_batch_nums=[0, '1']: entry '1' is not an int"),
        (dict(trace_batch_nums=[-1]), ValueError, "trace_batch_nums=[-1]: entry -1 must be at least 0"),
        (dict(abort_after_batch_num="x"), TypeError, "abort_after_batch_num='x' is not an int"),
        (dict(file=5), TypeError, "file=5 has no write()"),
    ],
)
def test_bad_arguments_are_named_at_construction(kwargs, error, message):
    model = mlp()
    kwargs = {"model": model, **kwargs}
    with pytest.raises(error) as raised:
        DebugUnderflowOverflow(**kwargs)
    assert str(raised.value).startswith("DebugUnderflowOverflow: ") and message in str(raised.value)
    assert not any(m._forward_hooks for m in model.modules())  # refused before any hook went on


def test_integer_arguments_of_any_integer_type_and_a_generator_of_batches():
    np = pytest.importorskip("numpy")
    batches = (n for n in [np.int64(0), 2])
    detector = DebugUnderflowOverflow(
        mlp(), max_frames_to_save=np.int64(3), trace_batch_nums=batches, abort_after_batch_num=np.int8(4),
        file=io.StringIO(),
    )  # fmt: skip
    assert detector.trace_batch_nums == [0, 2] and detector.max_frames_to_save == 3
    assert type(detector.abort_after_batch_num) is int
