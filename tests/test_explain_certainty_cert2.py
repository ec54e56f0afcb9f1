"""Certainty, second round (task CERT2): certain readings whose anchor its source prints for more than one cause,
made likely with the other reading named, and certain again only with the evidence that tells them apart.

- c10's CPU allocator (``c10/core/impl/alloc_cpu.cpp``: "DefaultCPUAllocator: not enough memory: you tried to
  allocate N bytes") and TH's ``THAlloc`` ("$ Torch: not enough memory: you tried to allocate NGB") print the same
  line for any request malloc refuses: host RAM used up, and a size no machine has, computed wrong by the code that
  asked. A terabyte or more is the second: likely, ``input_shape_mismatch`` named; a request a machine can hold
  stays a certain ``cpu_oom``.

Checked and left as they were (the source prints the anchor for one cause only, or the reading was likely already):
accelerate's "`--mixed_precision` arg cannot be set to `X` when `Y` is set in the DeepSpeed config file"
(``utils/dataclasses.py`` set_mixed_precision: raised only where the other precision is enabled in the config);
DeepSpeed's "You are using an untested ZeRO Optimizer" (``runtime/engine.py`` _do_optimizer_sanity_check: only a
ZeRO run whose optimizer is not in ZERO_SUPPORTED_OPTIMIZERS and whose config lacks zero_allow_untested_optimizer);
torch's "found no DeviceMesh from dtensor args" (already likely alone, ``device_mesh_config`` named).
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, lead, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

ALLOCATOR = (
    "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: "
    "you tried to allocate {} bytes.\n"
)


def test_a_request_no_machine_holds_is_likely_a_wrong_size():
    found = likely_with(ALLOCATOR.format(1099511627776000), "cpu_oom", "log.input_shape_mismatch")
    assert "no machine's RAM" in found.summary, found.summary


def test_th_allocators_request_of_thousands_of_gigabytes_is_likely_a_wrong_size():
    text = "$ Torch: not enough memory: you tried to allocate 4096GB. Buy new RAM!\n"
    likely_with(text, "cpu_oom", "log.input_shape_mismatch")


def test_a_request_a_machine_can_hold_stays_certain():
    found = certain(ALLOCATOR.format(8589934592), "cpu_oom")
    assert "log.input_shape_mismatch" not in found.details.get("alternatives", [])
    certain("$ Torch: not enough memory: you tried to allocate 0GB. Buy new RAM!\n", "cpu_oom")


def test_just_under_a_terabyte_is_still_ram_used_up():
    certain(ALLOCATOR.format(999_999_999_999), "cpu_oom")
    likely_with(ALLOCATOR.format(1_000_000_000_000), "cpu_oom", "log.input_shape_mismatch")


def test_enomem_alone_stays_likely():
    found = explained("OSError: [Errno 12] Cannot allocate memory\n")
    assert (found.id, found.details["confidence"]) == ("log.cpu_oom", "likely"), found.summary


@pytest.mark.parametrize("name", ["778.txt", "780.txt"])
def test_the_train_logs_of_the_allocator_stay_certain(name):
    # 778.txt (TooTouch/MemSeg#3): 223 MB asked; 780.txt (tiny-faces-pytorch#12): 113 MB on an 8 GB laptop
    found = lead(name)
    assert (found.id, found.details["confidence"]) == ("log.cpu_oom", "certain"), found.summary


def test_accelerates_mixed_precision_against_the_config_stays_certain():
    certain(
        "ValueError: `--mixed_precision` arg cannot be set to `fp16` when `bf16` is set in the DeepSpeed config "
        "file.\n",
        "deepspeed_config_mismatch",
    )


def test_deepspeeds_untested_zero_optimizer_stays_certain():
    certain(
        'AssertionError: You are using an untested ZeRO Optimizer. Please add <"zero_allow_untested_optimizer": '
        "true> in the configuration file to use it.\n",
        "deepspeed_config_mismatch",
    )


def test_a_dtensor_without_a_mesh_is_likely_with_the_mesh_config_named():
    likely_with(
        "AssertionError: found no DeviceMesh from dtensor args for c10d.broadcast_.default!\n",
        "device_map_distributed",
        "log.device_mesh_config",
    )
