"""report.plot draws the dump: a real PNG from a real overflow (looked at by eye when written)."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
import torch
from torch import nn

from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected

pytest.importorskip("matplotlib")


def fp16_overflow_report():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.Linear(4, 4), nn.Linear(4, 2)).half()
    with torch.no_grad():
        model[2].weight.mul_(3e4)
    with DebugUnderflowOverflow(model, file=io.StringIO()), pytest.raises(InfNanDetected) as caught:
        model(torch.full((2, 4), 30.0, dtype=torch.float16))
    assert "keep_in_fp32" not in str(
        caught.value
    )  # fp16 weights (model.half()): keeping in fp32 cannot apply
    return caught.value.report


def test_plot_writes_a_png_of_the_dump(tmp_path):
    report = fp16_overflow_report()
    assert report.module_name == "2"
    assert "keep_in_fp32" not in report  # fp16 weights (model.half()): keeping a module in fp32 cannot apply
    path = report.plot(str(tmp_path / "overflow.png"))
    data = (tmp_path / "overflow.png").read_bytes()
    assert path.endswith("overflow.png")
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    svg = report.plot(str(tmp_path / "overflow.svg"))
    text = open(svg, encoding="utf-8").read()
    assert "float16 max 6.55e+04" in text and "first inf/nan: " in text


def test_plot_names_the_missing_extra_without_matplotlib(tmp_path):
    script = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from torchdoctor.numerics.plot import plot_frames\n"
        "try:\n"
        "    plot_frames([], 'x.png')\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "report.plot needs matplotlib: pip install 'torchdoctor[plot]'" in result.stdout, result.stderr
