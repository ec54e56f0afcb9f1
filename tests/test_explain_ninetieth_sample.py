"""The ninetieth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4317-4366)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# a framework's checkpointer asking megatron-core's DistributedOptimizer for its state without a sharding type
# (megatron/core/dist_checkpointing/mapping.py ShardedTensor.validate_metadata_integrity refuses the flat shard)
FLAT_SHARD = (
    "[rank0]: Traceback (most recent call last):\n"
    '[rank0]:   File "/opt/areal/engine/megatron_utils/checkpointer.py", line 283, in generate_state_dict\n'
    "[rank0]:     optimizer_sharded_states = self.optimizer.sharded_state_dict(state_dict)\n"
    '[rank0]:   File "/usr/local/lib/python3.12/site-packages/megatron/core/optimizer/distrib_optimizer.py", line '
    "2101, in sharded_param_state_fs_model_space\n"
    "[rank0]:     tensors[state_key].validate_metadata_integrity()\n"
    "[rank0]: megatron.core.dist_checkpointing.core.CheckpointingException: ShardedTensor.flattened_range is not "
    "supported.\n"
)


def test_megatron_cores_refusal_of_a_flat_shard_is_a_framework_written_for_an_older_megatron_core():
    found = reads(FLAT_SHARD, "dependency_version", "certain")
    assert "megatron-core" in found.summary and "flattened_range" in found.summary
    assert "dp_reshardable" in found.fix and "pip show megatron-core" in found.fix


# the same validation's other refusals (a shard whose offset is off the grid) are no release's
def test_another_sharded_tensor_refusal_of_megatron_core_is_not_the_flat_shard():
    found = explained(
        "[rank0]: megatron.core.dist_checkpointing.core.CheckpointingException: Global offset (3) must be "
        "divisible by local shape (2) for ShardedTensor(key='decoder.layers.0.mlp.linear_fc1.weight').\n"
    )
    assert found.id != "log.dependency_version", found.summary


# accelerate/commands/config/config_args.py from_yaml_file: a config file another (newer) accelerate wrote
UNKNOWN_KEYS = (
    "ValueError: The config file at /root/.cache/huggingface/accelerate/default_config.yaml had unknown keys "
    "(['enable_cpu_affinity']), please try upgrading your `accelerate` version or fix (and potentially remove) "
    "these keys from your config file.\n"
)


def test_accelerates_unknown_config_keys_are_likely_a_newer_accelerates_file():
    found = reads(UNKNOWN_KEYS, "dependency_version", "likely")
    assert "['enable_cpu_affinity']" in found.summary and "default_config.yaml" in found.summary
    assert "pip install -U accelerate" in found.fix and "accelerate config" in found.fix


# the same reader's refusal of a file without distributed_type is an incomplete config: the launch command's
def test_a_config_without_distributed_type_stays_the_launch_command():
    found = reads(
        "ValueError: A `distributed_type` must be specified in the config file.\n",
        "launch_command",
        "certain",
    )
    assert "distributed_type" in found.fix
