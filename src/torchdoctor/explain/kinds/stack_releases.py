"""Releases of the distributed-training stack that refuse what another release of it wrote or asks for.

Read by versions.py's ``dependency_version`` beside neighbour_releases.py, from what the sources print:

- megatron-core's distributed checkpointing refuses a flat shard: ``megatron/core/dist_checkpointing/mapping.py``
  ``ShardedTensor.validate_metadata_integrity`` (run by ``__post_init__``) raises CheckpointingException
  "ShardedTensor.flattened_range is not supported." Megatron-LM removed the flat layout of the distributed
  optimizer's checkpoint (NVIDIA/Megatron-LM#2126, megatron-core 0.16), yet
  ``DistributedOptimizer.sharded_state_dict`` still takes its sharding type from
  ``metadata["distrib_optim_sharding_type"]`` with the legacy ``fully_sharded_model_space`` as default, which
  builds its shards with a flattened_range. Megatron-LM's own ``training/checkpointing.py`` asks for
  ``dp_reshardable`` (or ``fully_reshardable``); a framework written for an older megatron-core that calls
  sharded_state_dict without that metadata fails when it saves or loads the optimizer state (areal-project/AReaL#1468
  fixed its checkpointer so). Printed for nothing else: certain;
- accelerate's config reader (``accelerate/commands/config/config_args.py``, ``BaseConfig.from_yaml_file`` and
  ``from_json_file``) refuses keys its config class lacks: "The config file at {} had unknown keys ({}), please try
  upgrading your `accelerate` version or fix (and potentially remove) these keys from your config file." A file
  written by a newer accelerate (``accelerate config`` writes every key its release has, enable_cpu_affinity for
  one) and read by an older one; a key mistyped by hand prints the same words: likely.

`change(facts)` says which of them a line is; `decisive(facts, ctx)` whether the log makes it certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

FLATTENED_RANGE = "ShardedTensor.flattened_range is not supported"
ACCELERATE_KEYS = " had unknown keys ("
ANCHORS = (FLATTENED_RANGE, ACCELERATE_KEYS)
# a key mistyped in a hand-written config file prints accelerate's refusal too
GENERIC = (ACCELERATE_KEYS,)
TEMPLATES = (
    "third_party:megatron-core-sharded-tensor-flattened-range",
    "accelerate:the-config-file-at-had-unknown",
)
CHANGE = R(
    r"(?P<mcore_flat_range>ShardedTensor\.flattened_range is not supported)|"
    r"The config file at (?P<acc_config_file>[^\n]{1,300}?) had unknown keys \((?P<acc_unknown_keys>[^\n)]{0,300})\)"
)
CONTEXT: tuple = ()


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """megatron-core's flat-shard refusal is certain; nothing tells a newer accelerate's key from a typo."""
    return bool(facts.get("mcore_flat_range"))


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for the release change among ``facts`` (the named groups of `CHANGE`), else None."""
    if facts.get("mcore_flat_range"):
        return (
            "megatron-core refused a ShardedTensor with a flattened_range while the distributed optimizer's state "
            "was being saved or loaded: the installed megatron-core no longer writes that flat layout, and the code "
            "that called DistributedOptimizer.sharded_state_dict asked for it (the legacy default sharding type, "
            "fully_sharded_model_space), so that code was written for an older megatron-core",
            "Ask for a sharding type this megatron-core writes where the framework builds its checkpoint: "
            "optimizer.sharded_state_dict(model_sharded_state_dict, metadata={'distrib_optim_sharding_type': "
            "'dp_reshardable'}) (or 'fully_reshardable'), as Megatron-LM's training/checkpointing.py does, and the "
            "same on load (areal-project/AReaL#1468 changed its checkpointer so). Or upgrade the framework to its "
            "release for this megatron-core, or install the megatron-core it pins (pip show megatron-core). "
            "Saving without the optimizer state avoids it only at the cost of resuming without the optimizer's moments.",
        )
    if facts.get("acc_config_file"):
        keys = facts.get("acc_unknown_keys") or "keys"
        return (
            f"accelerate refused its config file {facts['acc_config_file']}: it holds {keys}, which the installed "
            "accelerate does not know, so the file was written by a newer accelerate (or a key was mistyped by hand)",
            "Upgrade accelerate where the job runs (pip install -U accelerate, to the release that wrote the file: "
            "accelerate env on the machine that wrote it), or remove the keys it names from the file, or write the "
            "file again with this release: accelerate config (the default is "
            "~/.cache/huggingface/accelerate/default_config.yaml; --config_file names another).",
        )
    return None
