"""The knowledge the nineteenth sample by symptom (corpus files 767-785, train half) asked for, each anchored on the
message its source prints: ATen's refusal of a torch.quantile input over 2**24 values (Sorting.cpp), Lightning's
device parser when the GPU ids asked for are not all visible (device_parser.py: an empty list is no GPU at all),
torch's CPU allocator (alloc_cpu.cpp) with what grows in host RAM, and accelerate's RTX 4000 refusal naming the
cards. Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_a_quantile_input_over_two_to_the_24_is_certain():
    # 772.txt (pytorch/pytorch#67592): the error in the filer's prose line
    found = lead("772.txt")
    assert found.id == "log.quantile_input_too_large" and found.details["confidence"] == "certain"
    assert "16 million" in found.fix and "kthvalue" in found.fix
    found = explained(
        '  File "flow3d/loss_utils.py", line 32, in masked_l1_loss\n'
        "RuntimeError: " + template("torch_native:quantile-input-too-large") + "\n"
    )
    assert found.id == "log.quantile_input_too_large"


def test_another_quantile_refusal_is_not_the_size_limit():
    # the same op's other checks name other causes (a q out of range, a q of the wrong shape)
    for line in (
        "RuntimeError: quantile() q values must be in the range [0, 1]\n",
        "RuntimeError: quantile() q must be a scalar or 1D tensor\n",
    ):
        assert explained(line).id != "log.quantile_input_too_large"


def test_more_gpus_asked_of_lightning_than_visible():
    # 776.txt (luca-medeiros/lightning-sam#42): a config for 4 GPUs on a machine with one
    found = lead("776.txt")
    assert found.id == "log.gpus_requested_not_visible" and found.details["confidence"] == "certain"
    assert "[0, 1, 2, 3]" in found.summary and "CUDA_VISIBLE_DEVICES" in found.fix and "config" in found.fix
    # pytorch_lightning 1.x wording ("GPUs"), its second line indented as printed
    found = explained(
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0, 1]\n"
        " But your machine only has: [0]\n"
    )
    assert found.id == "log.gpus_requested_not_visible"
    line = template("lightning:you-requested-gpu-but-your-machine", "[1]", "[0]")
    assert explained(line + "\n").id == "log.gpus_requested_not_visible"


def test_no_gpu_visible_to_lightning_is_no_cuda():
    # the ids checked against an empty list: torch sees no GPU at all (a CPU-only build, no driver)
    found = explained(
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0]\n"
        " But your machine only has: []\n"
    )
    assert found.id == "log.cuda_unavailable" and "CPU-only build" in found.fix
    line = template("lightning:gpus-requested-but-none-are-available")
    assert explained(line + "\n").id == "log.cuda_unavailable"
    # a request line alone, without the device parser's answer, is not a finding of either kind
    assert explained("You requested gpu: [0, 1] for this run\n").id not in (
        "log.gpus_requested_not_visible",
        "log.cuda_unavailable",
    )


def test_host_memory_names_what_grows_in_it():
    # 778.txt (TooTouch/MemSeg#3: metrics never reset), 780.txt (tiny-faces-pytorch#12: an 8 GB laptop)
    for name, word in (("778.txt", "reset"), ("780.txt", "batch size")):
        found = lead(name)
        assert found.id == "log.cpu_oom" and found.details["confidence"] == "certain"
        assert word in found.fix and "host RAM" in found.fix
    # the CUDA caching allocator's message is GPU memory, not this kind
    found = explained("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert found.id != "log.cpu_oom"


def test_accelerate_rtx4000_refusal_names_the_cards():
    # 774.txt (zai-org/GLM-4#487): an RTX 4090
    found = lead("774.txt")
    assert found.id == "log.gpu_p2p" and "RTX 4090" in found.summary
    assert "NCCL_P2P_DISABLE=1" in found.fix
    # NCCL's own P2P failure is the same kind without accelerate's card names
    found = explained("Cuda failure 'peer access is not supported between these two devices'\n")
    assert found.id == "log.gpu_p2p" and "RTX 4090" not in found.summary


def test_a_keyword_init_process_group_never_takes_is_the_call():
    # mmagic#535's cause (785.txt retypes the line with typos, left unanchored): a config's port passed on
    found = explained(
        '  File "mmcv/runner/dist_utils.py", line 29, in _init_dist_pytorch\n'
        "    dist.init_process_group(backend=backend, **kwargs)\n"
        "TypeError: init_process_group() got an unexpected keyword argument 'port'\n"
    )
    assert found.id == "log.process_group_args" and found.details["confidence"] == "certain"
    assert "MASTER_PORT" in found.fix and "port" in found.summary
    # a keyword newer torch releases take is the torch version, not a wrong call; another function's is not this
    for line in (
        "TypeError: init_process_group() got an unexpected keyword argument 'device_id'\n",
        "TypeError: launch() got an unexpected keyword argument 'port'\n",
    ):
        assert explained(line).id != "log.process_group_args"
