"""FSDP settings refused by accelerate or the HF Trainer before anything is wrapped: an FSDP1 value under FSDP2 (or
the reverse), options that need each other, the optimizer or the models handed over in a way FSDP2 cannot take.

The texts are accelerate's (``utils/dataclasses.py`` FullyShardedDataParallelPlugin, ``accelerator.py`` prepare,
``utils/launch.py``) and transformers' (``trainer.py``), as the catalog holds them. Each names the value it refuses
and why: certain. (A wrap policy naming a class the model lacks, or FSDP1 flattening mixed parameters, is
``fsdp_wrap_config``, kinds/checkpoint.py.)
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, merged, on_ranks

R = re.compile

_FSDP2_STRATEGY = (
    "FSDP2 takes reshard_after_forward as true/false (true is what FSDP1 calls FULL_SHARD, false SHARD_GRAD_OP): "
    "pass a bool (FullyShardedDataParallelPlugin(reshard_after_forward=True), fsdp_reshard_after_forward: true in "
    "the accelerate config), not a ShardingStrategy or a number left from FSDP1 code, or go back to fsdp_version: 1."
)

# (the text the source prints, the fix)
REFUSALS: tuple[tuple[str, str], ...] = (
    ("This is not supported with FSDP2, please set to a `bool`", _FSDP2_STRATEGY),
    (
        "This is not supported with FSDP1, please set to a `str`",
        "FSDP1 takes a sharding strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD), not true/false: set "
        "fsdp_sharding_strategy: FULL_SHARD in the accelerate config, or set fsdp_version: 2 to keep the boolean.",
    ),
    (
        "forward_prefetch is not yet implemented in FSDP2",
        "Remove fsdp_forward_prefetch from the accelerate config (or set it false) under fsdp_version: 2, or use "
        "fsdp_version: 1 to keep it.",
    ),
    (
        "`activation_checkpointing_offload=True` requires `fsdp_version=2`",
        "Offloading activation checkpoints is FSDP2's: set fsdp_version: 2, or drop activation_checkpointing_offload.",
    ),
    (
        "`activation_checkpointing_offload=True` requires `activation_checkpointing=True`",
        "Turn on fsdp_activation_checkpointing too, or drop activation_checkpointing_offload.",
    ),
    (
        "FSDP2 does not support LOCAL_STATE_DICT",
        "Set fsdp_state_dict_type to SHARDED_STATE_DICT (fast, one file per rank) or FULL_STATE_DICT (one file) in "
        "the accelerate config (or TrainingArguments' fsdp_config).",
    ),
    (
        "must be an instance of `torch.distributed.fsdp.OffloadPolicy` in FSDP2",
        "Under FSDP2 pass cpu_offload=torch.distributed.fsdp.CPUOffloadPolicy() (or fsdp_offload_params: true in the "
        "accelerate config), not FSDP1's CPUOffload(...).",
    ),
    (
        "must be an instance of `torch.distributed.fsdp.CPUOffload` in FSDP1",
        "Under FSDP1 pass cpu_offload=torch.distributed.fsdp.CPUOffload(offload_params=True) (or fsdp_offload_params: "
        "true in the accelerate config), not FSDP2's OffloadPolicy.",
    ),
    (
        "When using FSDP2, a model and optimizer must be passed together to `Accelerator.prepare()`",
        "FSDP2 replaces the model's parameters, so the optimizer built on them must be prepared in the same call: "
        "model, optimizer = accelerator.prepare(model, optimizer) (the dataloaders and scheduler may come along).",
    ),
    (
        "Only one model is supported when using FSDP2",
        "Under FSDP2 accelerate prepares one model, together with its optimizer: pass only the trained model and "
        "its optimizer to accelerator.prepare(), and keep a second (frozen) model out of it (move it to "
        "accelerator.device yourself, or shard it with torch's fully_shard).",
    ),
    (
        "FSDP2 preparation should be done via `accelerate.prepare()`",
        "Under FSDP2 the model is wrapped by accelerator.prepare(model, optimizer), not prepare_model(): call "
        "prepare with both.",
    ),
    (
        "When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`",
        "Loading the weights on rank 0 only needs them broadcast to the others: pass --fsdp_sync_module_states true "
        "with --fsdp_cpu_ram_efficient_loading true (or fsdp_sync_module_states: true in the accelerate config).",
    ),
    (
        "Passing `optimizers` is not allowed if PyTorch FSDP is enabled",
        "With FSDP the Trainer builds the optimizer after wrapping the model: drop optimizers=(...) from Trainer(...) "
        "and choose it with --optim / --learning_rate, or subclass Trainer and override create_optimizer_and_scheduler "
        "(create_optimizer) to build your own on self.model.",
    ),
    (
        "save_only_model option is not compatible with FSDP state dict type 'SHARDED_STATE_DICT'",
        "Sharded FSDP checkpoints always carry the optimizer shards: drop --save_only_model, or set "
        'fsdp_config {"state_dict_type": "FULL_STATE_DICT"} to save the weights alone.',
    ),
    (
        "(FSDP's own activation checkpointing) and the",
        "Keep one activation checkpointing: fsdp_config['activation_checkpointing'] (FSDP's, preferred with FSDP) and "
        "drop --activation_checkpointing / gradient_checkpointing from the training arguments.",
    ),
)


def _fsdp_config(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    refusal = " ".join(merged(hits).get("refusal", "").split())
    fix = next((f for anchor, f in REFUSALS if anchor in refusal), REFUSALS[0][1])
    # the message whole (quote() would drop the apostrophe of "FSDP's" as an unbalanced quote)
    said = refusal if len(refusal) <= 200 else refusal[:200].rsplit(" ", 1)[0] + " …"
    return f"the FSDP settings are refused: {said}" + on_ranks(hits), fix


FSDP_CONFIG_MISMATCH = Recogniser(
    kind="fsdp_config_mismatch",
    title="FSDP settings that do not fit together or FSDP's version",
    anchors=tuple(anchor for anchor, _ in REFUSALS),
    templates=(
        # accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__ / validate
        "accelerate:reshard-after-forward-set-to-this",
        "accelerate:reshard-after-forward-set-to-this-2",
        "accelerate:forward-prefetch-is-not-yet-implemented",
        "accelerate:activation-checkpointing-offload-true-requires-fsdp",
        "accelerate:activation-checkpointing-offload-true-requires-activation",
        "accelerate:fsdp2-does-not-support-local-state",
        "accelerate:cpu-offload-must-be-an-instance",
        "accelerate:cpu-offload-must-be-an-instance-2",
        # accelerate/accelerator.py prepare / prepare_model under FSDP2
        "accelerate:when-using-fsdp2-model-and-optimizer",
        "accelerate:only-one-model-is-supported-when",
        "accelerate:fsdp2-preparation-should-be-done-via",
        "accelerate:when-using-fsdp-cpu-ram-efficient",  # utils/launch.py: accelerate launch's FSDP flags
        # transformers/trainer.py: the Trainer's own FSDP checks
        "transformers:passing-optimizers-is-not-allowed-if",
        "transformers:save-only-model-option-is-not",
        "transformers:fsdp-config-activation-checkpointing-fsdp-own",
    ),
    facts=(
        R(r"(?P<refusal>[^\n:]{0,150}?(?:" + "|".join(re.escape(a) for a, _ in REFUSALS) + r")[^\n]{0,200})"),
    ),
    describe=_fsdp_config,
)

RECOGNISERS = (FSDP_CONFIG_MISMATCH,)
