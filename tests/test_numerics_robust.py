"""The detector never crashes the training it watches: every kind of tensor is measured or labelled."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import warnings

import pytest
import torch
from torch import nn

from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected, detect_overflow
from torchdoctor.numerics.stats import abs_min_max

# torch's own notes on building sparse and nested tensors (prototype, beta): not what is tested here
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*nested tensors is in prototype stage:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse:UserWarning"),
]


class Emit(nn.Module):
    """Returns what it is given: the value shows up as ``input[0]`` and as ``output``."""

    def forward(self, x):
        return x


class Wrapper(torch.Tensor):
    """A wrapper tensor subclass (like DTensor) that supports no operation at all, only flattening."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, device=inner.device)

    def __init__(self, inner):
        self.inner = inner

    def __tensor_flatten__(self):
        return ["inner"], None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"Wrapper supports no {func}")


class Hostile(torch.Tensor):
    """A subclass whose every torch function raises."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError(f"Hostile refuses {func}")


def output_line(value) -> str:
    """The ``output`` line the detector prints for ``value`` in trace mode."""
    model = nn.Sequential(Emit())
    out = io.StringIO()
    with warnings.catch_warnings(), DebugUnderflowOverflow(model, trace_batch_nums=[0], file=out):
        warnings.simplefilter("ignore")
        model(value)
    lines = [
        line
        for line in out.getvalue().splitlines()
        if line.endswith(" output") and not line.endswith((" underflow output", " saturated output"))
    ]
    assert len(lines) == 2, out.getvalue()  # Emit's frame and the Sequential's
    return lines[0]


def reference(values) -> str:
    """The line computed independently, in float64."""
    magnitudes = torch.as_tensor(values, dtype=torch.float64).abs()
    return f"{magnitudes.min().item():8.2e} {magnitudes.max().item():8.2e} output"


def quantized():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.quantize_per_tensor(torch.tensor([-0.5, 0.2, 1.0]), 0.1, 0, torch.qint8)


def inference_tensor():
    with torch.inference_mode():
        return torch.tensor([-2.0, 0.25])


MEASURED = {
    "float32": (lambda: torch.tensor([-3.0, 0.5, 2.0]), [3.0, 0.5, 2.0]),
    "float16": (lambda: torch.tensor([-60000.0, 0.001]).half(), [60000.0, 0.0010004043579101562]),
    "bfloat16": (
        lambda: torch.tensor([-1e30, 0.5]).bfloat16(),
        torch.tensor([-1e30, 0.5]).bfloat16().double(),
    ),
    "float64": (lambda: torch.tensor([-1e300, 1e-300], dtype=torch.float64), [1e300, 1e-300]),
    "bool": (lambda: torch.tensor([True, False]), [1.0, 0.0]),
    "int64": (lambda: torch.tensor([-7, 3]), [7, 3]),
    "int8 minimum": (lambda: torch.tensor([-128, 1], dtype=torch.int8), [128, 1]),
    "uint8": (lambda: torch.tensor([200, 3], dtype=torch.uint8), [200, 3]),
    "complex": (lambda: torch.tensor([3 + 4j, 1j]), [5.0, 1.0]),
    "sparse coo": (lambda: torch.tensor([[0.0, -2.0], [0.0, 0.5]]).to_sparse(), [0.0, 2.0, 0.5]),
    "sparse coo uncoalesced": (
        lambda: torch.sparse_coo_tensor(torch.tensor([[0, 0]]), torch.tensor([1.0, 2.0]), (1,)),
        [3.0],
    ),
    "sparse csr": (lambda: torch.tensor([[0.0, -2.0], [4.0, 0.5]]).to_sparse_csr(), [0.0, 2.0, 4.0, 0.5]),
    "sparse all zero": (lambda: torch.zeros(2, 2).to_sparse(), [0.0]),
    "nested": (
        lambda: torch.nested.nested_tensor([torch.tensor([-1.0, 2.0]), torch.tensor([0.25])]),
        [1.0, 2.0, 0.25],
    ),
    "nested jagged": (
        lambda: torch.nested.nested_tensor(
            [torch.tensor([-1.0, 2.0]), torch.tensor([0.25])], layout=torch.jagged
        ),
        [1.0, 2.0, 0.25],
    ),
    "float8_e4m3fn": (lambda: torch.tensor([0.5, -448.0]).to(torch.float8_e4m3fn), [0.5, 448.0]),
    "float8_e5m2": (lambda: torch.tensor([0.5, -2.0]).to(torch.float8_e5m2), [0.5, 2.0]),
    "non-contiguous": (
        lambda: torch.arange(12.0).reshape(3, 4).T[::2] - 5.5,
        (torch.arange(12.0).reshape(3, 4).T[::2] - 5.5),
    ),
    "requires grad": (lambda: torch.tensor([-1.5, 0.5], requires_grad=True), [1.5, 0.5]),
    "parameter": (lambda: nn.Parameter(torch.tensor([-1.5, 0.5])), [1.5, 0.5]),
    "plain subclass": (
        lambda: torch.tensor([-2.0, 1.0]).as_subclass(type("Tagged", (torch.Tensor,), {})),
        [2.0, 1.0],
    ),
    "wrapper subclass": (lambda: Wrapper(torch.tensor([-4.0, 0.125])), [4.0, 0.125]),
    "quantized": (quantized, [0.5, 0.2, 1.0]),
    "inference tensor": (inference_tensor, [2.0, 0.25]),
}


@pytest.mark.parametrize("kind", list(MEASURED))
def test_every_kind_of_tensor_is_measured(kind):
    make, expected = MEASURED[kind]
    assert output_line(make()) == reference(expected)


LABELLED = {
    "empty": (lambda: torch.empty(0, 3), "empty"),
    "empty sparse": (lambda: torch.empty(0, 3).to_sparse(), "empty"),
    "meta": (lambda: torch.empty(3, device="meta"), "meta"),
    "hostile subclass": (lambda: torch.tensor([1.0]).as_subclass(Hostile), "unreadable"),
}


@pytest.mark.parametrize("kind", list(LABELLED))
def test_tensors_without_readable_values_are_labelled(kind):
    make, label = LABELLED[kind]
    assert output_line(make()) == f"{label:>17} output"


def test_measuring_builds_no_autograd_graph():
    model = nn.Sequential(nn.Linear(2, 2))
    x = torch.ones(1, 2, requires_grad=True)
    with DebugUnderflowOverflow(model, file=io.StringIO()):
        y = model(x)
    # the graph behind y is the Linear's only: nothing of ours hangs off it
    assert y.grad_fn.name() == "AddmmBackward0"
    y.sum().backward()
    assert x.grad is not None


BAD = {
    "float16 inf": lambda: torch.tensor([70000.0]).half(),
    "bfloat16 nan": lambda: torch.tensor([float("nan")]).bfloat16(),
    "complex nan": lambda: torch.tensor([complex(float("nan"), 1.0)]),
    "float8_e5m2 inf": lambda: torch.tensor([1e6]).to(torch.float8_e5m2),
    "float8_e4m3fn nan": lambda: torch.tensor([float("nan")]).to(torch.float8_e4m3fn),
    "sparse nan": lambda: torch.tensor([[0.0, float("nan")]]).to_sparse(),
    "nested inf": lambda: torch.nested.nested_tensor(
        [torch.tensor([1.0]), torch.tensor([float("inf"), 0.0])]
    ),
    "non-contiguous inf": lambda: torch.tensor([[1.0, float("inf")], [0.0, 0.0]]).T,
}


@pytest.mark.parametrize("kind", list(BAD))
def test_inf_and_nan_are_caught_in_every_kind(kind):
    model = nn.Sequential(Emit())
    out = io.StringIO()
    with DebugUnderflowOverflow(model, file=out), pytest.raises(InfNanDetected) as caught:
        model(BAD[kind]())
    assert caught.value.module_name == "0"
    assert "Detected inf/nan during batch_number=0" in out.getvalue()
    with contextlib.redirect_stdout(io.StringIO()):
        assert detect_overflow(BAD[kind](), "x") is True


def test_abs_min_max_never_raises():
    assert abs_min_max(torch.tensor([1.0]).as_subclass(Hostile)) == "unreadable"
    assert abs_min_max(torch.empty(0)) == "empty"
    assert abs_min_max(torch.tensor([-2.0, 1.0])) == (1.0, 2.0)


@dataclasses.dataclass
class Stats:
    mean: torch.Tensor
    note: str


def test_a_model_full_of_odd_values_trains_on():
    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x, mask=None, extras=None):
            return {
                "hidden": self.fc(x),
                "mask": mask,
                "sparse": x.detach().to_sparse(),
                "ids": torch.arange(3),
                "empty": x.new_empty(0),
                "meta": torch.empty(2, device="meta"),
                "nested": [[(x * 2,)]],
                "stats": Stats(mean=x.mean(), note="text"),
            }

    model = Odd()
    out = io.StringIO()
    with DebugUnderflowOverflow(model, trace_batch_nums=[0], file=out):
        result = model(torch.ones(2, 3), mask=torch.ones(2, 3, dtype=torch.bool), extras={"note": "text"})
        result["hidden"].sum().backward()
    text = out.getvalue()
    names = (
        "output[hidden]",
        "input[mask]",
        "output[sparse]",
        "output[nested][0][0][0]",
        "output[stats][mean]",
    )
    for name in names:
        assert f" {name}\n" in text, name
    assert "            empty output[empty]" in text
    assert model.fc.weight.grad is not None
