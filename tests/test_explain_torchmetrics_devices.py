"""A torchmetrics Metric updated with tensors on another device than its state (kinds/placement.py,
device_mismatch): the message torchmetrics' Metric.update raises, and torch's own device check, which keeps its own
fix."""

from __future__ import annotations

import pytest
from explaining import explained

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")


def metric_refusal() -> str:
    """The catalog's template filled as torchmetrics/metric.py fills it (the class name twice), in the traceback
    it ends (CPU-only machines cannot make two devices meet)."""
    template = by_id()["third_party:torchmetrics-different-devices-in-metric"].text
    return (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torchmetrics/metric.py", line 552, in wrapped_func\n'
        "    raise RuntimeError(\n"
        "RuntimeError: " + template.replace("{}", "MulticlassAccuracy") + "\n"
    )


def test_the_metric_s_refusal_names_the_metric_and_how_to_move_it():
    text = metric_refusal()
    assert "Encountered different devices in metric calculation" in text
    found = explained(text)
    assert found.id == "log.device_mismatch", found.summary
    assert "MulticlassAccuracy" in found.summary
    assert "MulticlassAccuracy(...).to(device)" in found.fix and "ModuleDict" in found.fix
    assert "upgrade it" not in found.fix.split("\n")[0], found.fix


def test_torch_s_own_device_check_keeps_its_fix():
    found = explained(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cpu!"
    )
    assert found.id == "log.device_mismatch", found.summary
    assert "ModuleDict" not in found.fix
