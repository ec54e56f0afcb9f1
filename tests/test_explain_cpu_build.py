"""A CPU-only torch asked for CUDA: torch.cuda.set_device (pytorch/examples' DDP tutorial calls it first thing)
raises, on torch 2.13's CPU wheel, `AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'` rather
than "Torch not compiled with CUDA enabled". Read from a real process on this machine's torch, and as printed."""

import io

import pytest
import torch
from explaining import explained
from rank_runner import run_script

from torchdoctor.explain.diagnose import explain

SCRIPT = "import torch\ntorch.cuda.set_device(0)\n"


@pytest.mark.skipif(torch.version.cuda is not None, reason="needs torch's CPU-only build")
def test_set_device_on_this_cpu_only_torch_is_read_as_no_cuda_with_the_cpu_build_fix():
    done = run_script(["-c", SCRIPT], timeout=120)
    assert done.returncode != 0, done.stderr
    found = explain(["-"], stdin=io.BytesIO(done.stderr.encode()))[0]
    assert found.id == "log.cuda_unavailable", (found.summary, done.stderr[-2000:])
    assert "CPU-only build" in found.summary and "Install a CUDA build" in found.fix
    # a build without CUDA is not CUDA_VISIBLE_DEVICES naming GPUs that are not there
    assert "log.gpu_selection" not in found.details.get("alternatives", [])


@pytest.mark.usefixtures("every_message_seen")
@pytest.mark.parametrize("function", ["_cuda_setDevice", "_cuda_getDeviceCount", "_cuda_emptyCache"])
def test_torch_c_without_its_cuda_functions_is_a_cpu_only_build(function):
    found = explained(f"AttributeError: module 'torch._C' has no attribute '{function}'\n")
    assert found.id == "log.cuda_unavailable" and found.details["confidence"] == "certain"
    assert f"torch._C has no {function}" in found.summary


@pytest.mark.parametrize(
    "line",
    [
        # another module's missing attribute, or torch._C's that is not a CUDA function: not this
        "AttributeError: module 'torch._C' has no attribute '_get_tracing_state'\n",
        "AttributeError: module 'torch.cuda' has no attribute '_cuda_setDevice'\n",
    ],
)
def test_other_missing_attributes_are_not_a_cpu_build(line):
    assert explained(line).id != "log.cuda_unavailable"
