"""The eighty-fourth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4017-4066)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# torch's DistributedDataParallel checking the parameters' shapes across the ranks on torch_xla's "xla" process
# group, whose ProcessGroupXla.allgather took no options argument before pytorch/xla#3952 (CPython's TypeError)
XLA_ALLGATHER = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/train_ddp.py", line 41, in _mp_fn\n'
    "    model = DDP(model, gradient_as_bucket_view=True)\n"
    '  File "/usr/local/lib/python3.8/dist-packages/torch/nn/parallel/distributed.py", line 646, in __init__\n'
    "    _verify_param_shape_across_processes(self.process_group, parameters)\n"
    '  File "/usr/local/lib/python3.8/dist-packages/torch/distributed/utils.py", line 89, in '
    "_verify_param_shape_across_processes\n"
    "    return dist._verify_params_across_processes(process_group, tensors, logger)\n"
    "TypeError: allgather() takes 3 positional arguments but 4 were given\n"
)


def test_a_process_group_collective_without_the_options_argument_is_the_backends_release():
    found = reads(XLA_ALLGATHER, "library_version_bug", "likely")
    assert "allgather() takes 3" in found.summary and "called it with 4" in found.summary
    assert "torch_xla" in found.fix and "#3952" in found.fix and "opts=None" in found.fix


# the same CPython TypeError for a model's forward() (a script's own call with one argument too many) is no
# process-group backend
def test_a_forward_given_one_argument_too_many_is_not_a_backends_release():
    found = explained(
        XLA_ALLGATHER.replace(
            "allgather() takes 3 positional arguments but 4", "forward() takes 2 positional arguments but 3"
        )
    )
    assert "process-group backend" not in found.summary, found.summary


# torch_xla/core/xla_model.py xla_replication_devices under XRT, raised in every process xmp.spawn started
XRT_REPLICATE = (
    "Exception in device=TPU:0: Cannot replicate if number of devices (1) is different from 8\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.7/dist-packages/torch_xla/distributed/xla_multiprocessing.py", line 323, in '
    "_start_fn\n"
    "    _setup_replication()\n"
    '  File "/usr/local/lib/python3.7/dist-packages/torch_xla/core/xla_model.py", line 287, in '
    "xla_replication_devices\n"
    "    format(len(local_devices), len(kind_devices)))\n"
    "RuntimeError: Cannot replicate if number of devices (1) is different from 8\n"
)


def test_a_spawned_process_holding_one_of_eight_devices_is_likely_the_device_used_before_spawning():
    found = reads(XRT_REPLICATE, "xla_device_before_spawn", "likely")
    assert "holds 1 XLA device(s)" in found.summary and "all 8" in found.summary
    assert "restart the runtime" in found.fix and "TPU_NUM_DEVICES" in found.fix


# torch_xla/_internal/pjrt.py run_multiprocess under PJRT: the refusal states the cause
def test_pjrts_refusal_to_spawn_after_the_runtime_started_is_certain():
    found = reads(
        "RuntimeError: Runtime is already initialized. Do not use the XLA device before calling xmp.spawn.\n",
        "xla_device_before_spawn",
        "certain",
    )
    assert "already initialised" in found.summary and "inside the function given to xmp.spawn" in found.fix


# xla_replication_devices' other refusal, devices of two kinds in one process, is not the device count
def test_replication_across_device_types_is_not_the_device_used_before_spawning():
    found = explained(
        "RuntimeError: Cannot replicate across different device types: devices=['xla:0', 'xla:1']/['TPU:0', "
        "'CPU:0']\n"
    )
    assert found.id != "log.xla_device_before_spawn", found.summary


# accelerate/launchers.py notebook_launcher with num_processes=None off a TPU (accelerate 1.15's wording)
def test_notebook_launcher_without_num_processes_is_its_refused_argument():
    found = reads(
        "ValueError: You have to specify the number of devices you would like to use, add `num_processes=...` to "
        "your call.\n",
        "trainer_arguments",
        "certain",
    )
    assert "num_processes=2" in found.fix and "TPU" in found.fix


# the launcher's next check, a node rank past the nodes, is another refusal than the missing process count
def test_notebook_launchers_node_rank_check_is_not_the_missing_process_count():
    found = explained("ValueError: The node_rank must be less than the number of nodes.\n")
    assert "num_processes=" not in found.fix, found.fix
