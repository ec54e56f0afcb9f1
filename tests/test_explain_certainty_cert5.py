"""Certainty, fifth round (task CERT5): DataParallel's device_ids[0] check and NCCL's refused shared memory.

- torch/nn/parallel/data_parallel.py checks every parameter and buffer against device_ids[0] ("module must have
  its parameters and buffers on device {} (device_ids[0]) but found one of them on device: {}"). A parameter on
  another GPU or the CPU is a model placed wrong (certain); one on "meta" has no data at all (a model offloaded by
  a device_map or built under init_empty_weights), which the check only reaches first: likely, with
  meta_weights_not_loaded named. The CPU reading's fix no longer tells to list "cpu" in device_ids.
- NCCL's segment line with EPERM or EOPNOTSUPP after it is still a system call on /dev/shm (certain), but refused,
  not out of room: its fix no longer leads with a full /dev/shm.
- DGL's "Cannot assign node feature ... to a graph on device" (dgl/heterograph.py _set_n_repr / _set_e_repr) is
  raised by one check comparing the feature's device with the graph's: it stays certain.
"""

from __future__ import annotations

import pytest
from explaining import certain, lead, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

DP = "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: {}\n"
WARN = "node1:2301:2345 [0] misc/shmutils.cc:132 NCCL WARN {}\n"
SEGMENT = "Error while creating shared memory segment /dev/shm/nccl-AbC123 (size 9637888), error: {}\n"


def test_a_parameter_on_meta_is_likely_with_weights_never_loaded_named():
    found = likely_with(DP.format("meta"), "device_mismatch", "log.meta_weights_not_loaded")
    assert "log.gpu_selection" not in found.details["alternatives"], found.details["alternatives"]
    assert "never loaded" in found.fix and "device_ids=[meta" not in found.fix, found.fix


def test_a_parameter_on_the_cpu_stays_certain_and_moves_the_model():
    found = certain(DP.format("cpu"), "device_mismatch")
    assert "model.to('cuda:0')" in found.fix and "device_ids=[cpu" not in found.fix, found.fix


def test_a_parameter_on_another_gpu_stays_certain():
    found = certain(DP.format("cuda:1"), "device_mismatch")
    assert "device_ids=[1, ...]" in found.fix, found.fix


@pytest.mark.parametrize("errno", ["Operation not supported (95)", "Operation not permitted (1)"])
def test_a_refused_segment_does_not_lead_with_a_full_dev_shm(errno):
    found = certain(WARN.format(SEGMENT.format(errno)), "nccl_system_error")
    assert "not short of space" in found.fix and "64 MB" not in found.fix, found.fix


def test_a_full_dev_shm_still_says_so():
    found = certain(WARN.format(SEGMENT.format("No space left on device (28)")), "nccl_system_error")
    assert "64 MB" in found.fix, found.fix


def test_dgls_feature_on_another_device_stays_certain():
    text = (
        'dgl._ffi.base.DGLError: Cannot assign edge feature "w" on device cpu to a graph on device cuda:0. '
        "Call DGLGraph.to() to copy the graph to the same device.\n"
    )
    certain(text, "device_mismatch")


@pytest.mark.parametrize(("name", "kind"), [("154.txt", "device_mismatch"), ("2129.txt", "device_mismatch")])
def test_the_train_logs_stay_certain(name, kind):
    found = lead(name)
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", "certain"), found.summary
