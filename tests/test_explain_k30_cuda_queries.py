"""torch.cuda's GPU queries refusing (kinds/cuda_queries.py): NVML's Python package missing, produced for real
where torch prints it (a torch built with CUDA, or a CPU build, without nvidia-ml-py); and a near miss."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from explaining import explained, traceback_of

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_utilization_without_nvidia_ml_py():
    if importlib.util.find_spec("pynvml") is not None:
        pytest.skip("nvidia-ml-py is installed here: torch reads NVML instead of refusing")
    found = explained(traceback_of(torch.cuda.utilization))
    assert found.id == "log.cuda_queries" and found.details["confidence"] == "certain", (
        found.id,
        found.summary,
    )
    assert "nvidia-ml-py does not seem to be installed" in found.summary
    assert "pip install nvidia-ml-py" in found.fix


def test_an_unknown_sync_debug_mode_from_its_text():
    # torch/cuda/__init__.py set_sync_debug_mode (checked after CUDA initialises: a GPU build)
    found = explained(
        "RuntimeError: invalid value of debug_mode, expected one of `default`, `warn`, `error`\n",
    )
    assert found.id == "log.cuda_queries", (found.id, found.summary)
    assert "'default', 'warn' or 'error'" in found.fix


def test_a_missing_python_package_is_not_a_cuda_query():
    found = explained("ModuleNotFoundError: No module named 'pynvml'\n")
    assert found.id != "log.cuda_queries", found.id
