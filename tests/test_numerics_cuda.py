"""On a CUDA device: statistics stay on the GPU, one sync per batch, and the same dump as reading back at once.

Skipped where there is no GPU (the same logic is tested on CPU with ``sync="batch"``).
"""

from __future__ import annotations

import io
import warnings

import pytest
import torch
from torch import nn

from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def model_on_gpu() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).cuda()


def run(sync: str, check_gradients: bool = False) -> tuple[str, BaseException | None]:
    model = model_on_gpu()
    out = io.StringIO()
    error = None
    x = torch.ones(2, 4, device="cuda")
    with DebugUnderflowOverflow(model, sync=sync, check_gradients=check_gradients, file=out):
        try:
            for batch in range(4):
                if batch == 2:
                    with torch.no_grad():
                        model[2].weight[0, 0] = float("inf")
                model(x).sum().backward()
        except InfNanDetected as raised:
            error = raised
    return out.getvalue(), error


def test_gpu_dump_is_the_same_read_back_once_per_batch_or_at_once():
    at_once, error = run("frame")
    per_batch, deferred_error = run("auto")
    assert "Detected inf/nan during batch_number=2" in at_once
    # the dumps match; the "x has nans/infs" lines before them may not: read back later, a tensor holding
    # both is only known by its abs max (nan)
    assert per_batch.split("\nDetected")[1] == at_once.split("\nDetected")[1]
    assert deferred_error.module_name == error.module_name == "2"


def test_one_sync_per_batch():
    model = model_on_gpu()
    x = torch.ones(2, 4, device="cuda")
    with DebugUnderflowOverflow(model, file=io.StringIO()):
        model(x)  # warm-up: allocations, kernels
        torch.cuda.synchronize()
        previous = torch.cuda.get_sync_debug_mode()
        torch.cuda.set_sync_debug_mode("warn")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model(x)
                model(x)
        finally:
            torch.cuda.set_sync_debug_mode(previous)
    syncs = [w for w in caught if "synchronizing" in str(w.message)]
    assert len(syncs) == 2, [str(w.message) for w in caught]


def test_backward_dump_on_gpu_matches_too():
    at_once, _ = run("frame", check_gradients=True)
    per_batch, _ = run("auto", check_gradients=True)
    assert per_batch.split("\nDetected")[1] == at_once.split("\nDetected")[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_stats_on_the_gpu_are_the_cpus_to_the_bit(dtype):
    # what the detector reads back on a GPU (deferred, 0-d tensors on the device) is what it reads on the CPU
    from torchdoctor.numerics.stats import abs_min_max, abs_min_max_lazy

    torch.manual_seed(0)
    cases = {
        "mixed signs": torch.randn(1000, 37) * 100,
        "all negative": -torch.rand(513) - 0.25,
        "all positive": torch.rand(64, 64) + 0.5,
        "with zero": torch.tensor([0.0, -2.0, 3.0]),
        "inf": torch.tensor([1.0, float("-inf"), -0.5]),
        "nan": torch.tensor([1.0, float("nan"), -0.5]),
        "a view": torch.randn(40, 40)[::3, 1::2],
    }
    for name, values in cases.items():
        t = values.to(dtype)
        on_gpu = abs_min_max_lazy(t.cuda())
        assert on_gpu[0].is_cuda and on_gpu[1].is_cuda, name
        got = float(on_gpu[0].item()), float(on_gpu[1].item())
        want = abs_min_max(t)
        assert str(got) == str(want), (name, got, want)  # str: nan == nan
