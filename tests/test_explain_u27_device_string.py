"""pytorch/examples' minGPT-ddp (distributed/minGPT-ddp/mingpt/main.py) with its two-GPU check taken out to try it
on a machine without GPUs: ``torch.device(f"{torch.accelerator.current_accelerator()}:{rank}")`` is
``torch.device("None:0")`` under torch's CPU wheel, which c10/core/Device.cpp refuses ("Expected one of cpu, cuda,
... device type at start of device string: None"). It was not recognised; read here from a real process on this
torch, and as printed for other strings. pytorch/examples' distributed/ddp/example.py, its GPU check taken out the
same way, hands the None to get_default_backend_for_device, whose torch.device(None) fails in torch's argument
parser ("device() received an invalid combination of arguments - got (NoneType)"), which explain read as a bug
of the installed torch."""

import io

import pytest
import torch
from explaining import explained
from rank_runner import run_script

from torchdoctor.explain.diagnose import explain

SCRIPT = "import torch\nacc = torch.accelerator.current_accelerator()\ndevice = torch.device(f'{acc}:0')\n"


@pytest.mark.skipif(
    torch.accelerator.current_accelerator() is not None, reason="needs torch's CPU-only build"
)
def test_a_device_string_from_no_accelerator_says_it_was_none_and_how_to_fall_back_to_the_cpu():
    done = run_script(["-c", SCRIPT], timeout=120)
    assert done.returncode != 0, done.stderr
    found = explain(["-"], stdin=io.BytesIO(done.stderr.encode()))[0]
    assert found.id == "log.device_string", (found.summary, done.stderr[-2000:])
    assert "whose type is 'None'" in found.summary and "current_accelerator()" in found.summary, found.summary
    assert "torch.device('cpu')" in found.fix and "backend='gloo'" in found.fix, found.fix


BACKEND_FOR_NONE = (
    "import torch\nacc = torch.accelerator.current_accelerator()\n"
    "backend = torch.distributed.get_default_backend_for_device(acc)\n"
)


@pytest.mark.skipif(
    torch.accelerator.current_accelerator() is not None, reason="needs torch's CPU-only build"
)
def test_torch_device_given_the_none_of_no_accelerator_is_not_a_bug_of_torch():
    done = run_script(["-c", BACKEND_FOR_NONE], timeout=120)
    assert done.returncode != 0, done.stderr
    found = explain(["-"], stdin=io.BytesIO(done.stderr.encode()))[0]
    assert found.id == "log.device_string", (found.summary, done.stderr[-2000:])
    assert found.summary.startswith("likely: torch.device was given None"), found.summary
    assert "torch.device(acc) is torch.device(None)" in found.fix, found.fix


def test_gpu_as_a_device_string_says_torch_calls_it_cuda():
    line = (
        "RuntimeError: Expected one of cpu, cuda, xpu, mps, meta device type at start of device string: gpu\n"
    )
    found = explained(line)
    assert found.id == "log.device_string" and "torch calls a GPU 'cuda'" in found.summary, found.summary


def test_another_unknown_type_names_the_string_it_read():
    line = "RuntimeError: Expected one of cpu, cuda, xpu, mps, meta device type at start of device string: cuda0\n"
    found = explained(line)
    assert found.id == "log.device_string" and "'cuda0' is not a device type" in found.summary, found.summary


@pytest.mark.parametrize(
    "line",
    [
        # near misses: other messages about a device's type, not a device string torch could not read
        "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'\n",
        "RuntimeError: Invalid device string: 'cuda:0:1'\n",
        # torch.device given arguments of other types than None: not the None of no accelerator
        "TypeError: device() received an invalid combination of arguments - got (int, str), but expected one of:\n",
    ],
)
def test_other_device_type_messages_are_not_an_unreadable_device_string(line):
    assert explained(line).id != "log.device_string"
