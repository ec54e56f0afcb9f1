"""Post-training stacks whose own release fails a run, read by versions.py as a release's bug.

Three of them: an RL rollout's engine placement, ZeRO-3's gather of PEFT adapters, Megatron-Core's async save.

slime's rollout (``slime/ray/rollout.py``, ``start_engines``; its forks miles and vime carry the same code) places
each inference engine at ``gpu_offset + i * gpus_per_engine`` in the Ray placement group's GPU list
(``reordered_gpu_ids``), so engines sized for more GPUs than the group holds index past that list: CPython's
``IndexError: list index out of range`` on the code line ``base_gpu_id = int(reordered_gpu_ids[gpu_index])``.
The GPUs the rollout asks for come from ``rollout_num_gpus`` (engines x ``rollout_num_gpus_per_engine``); in
colocate mode ``slime/utils/arguments.py`` sets it to the actor's GPUs and, from 371c0309 (2025-09-28), added the
critic's GPUs too when a critic trains (``--advantage-estimator ppo``), though the critic shares the actor's
placement group: vllm-project/vime#41 (2026-05) drops the addition. Later releases check the indices first
(``validate_server_group_gpu_indices``) with a message that names the counts. Read where that code line is
followed by the IndexError (a traceback cut there is not this): likely, since a rollout_num_gpus set by hand
larger than the group does the same.

DeepSpeed ZeRO-3 gathers persistent parameters in one coalesced all-gather
(``deepspeed/runtime/zero/partition_parameters.py`` ``_allgather_params_coalesced``) whose output buffers take
the first parameter's dtype; torch refuses an all_gather_into_tensor whose output has another dtype than its input
("output tensor must have the same type as input tensor", ``ProcessGroupNCCL::_allgather_base``, a TypeError in
torch 2.x). Until 0.19.2 DeepSpeed cast a ZeRO-Init model to bf16 as a whole, which also cast PEFT's adapters;
from 0.19.2 it no longer does, and PEFT keeps LoRA adapters in fp32 (``autocast_adapter_dtype=True``) beside the
bf16 base weights (deepspeedai/DeepSpeed#8072; huggingface/trl#6091 keeps the adapters in the model's dtype).
Read where the refusal's own line also names DeepSpeed or ZeRO (likely, as every release's bug versions.py reads):
the same refusal on a line of its own is a call whose buffer has the wrong dtype, whoever made it
(``collective_arguments``, collective_args.py).

Megatron-Core's own async checkpoint save (``megatron/core/dist_checkpointing/strategies/torch.py``
``async_save`` with ``async_strategy="mcore"``) warns "MCore's async save is deprecated ..." and writes from a
spawned process (``filesystem_async.py``); a writer process that fails prints CPython's ``Process
SpawnProcess-N:`` and its traceback (``multiprocessing/process.py`` ``_bootstrap``), and the training ranks wait
on a save that never finishes. SkyRL's opt-in async save hung so until NovaSky-AI/SkyRL#1960 staged the tensors to
the CPU in the training process first. Read where that header follows the warning within two lines: likely, the
writer's own error being further down.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Hit, Pattern, first, on_ranks

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

ROLLOUT_GPU_INDEX = "reordered_gpu_ids[gpu_index]"
MIXED_DTYPE_GATHER = "output tensor must have the same type as input tensor"
MCORE_ASYNC_SAVE = "MCore's async save is deprecated"
ANCHORS = (ROLLOUT_GPU_INDEX, MIXED_DTYPE_GATHER, MCORE_ASYNC_SAVE)
TEMPLATES = (
    "third_party:slime-rollout-start-engines-gpu-index",
    "torch_native:output-tensor-must-have-the-same-type",
    "third_party:megatron-core-async-save-deprecated",
)
# words on the refusal's own line that say the all-gather was ZeRO's
ZERO_WORDS = r"[Dd]eep[Ss]peed|\bZeRO\b|\b[Zz]ero[-_ ]?(?:[Ss]tage[-_ ]?)?3\b|partition_parameters"
REFUSED = R(
    # the code line, the caret line CPython 3.11+ prints under it, then the IndexError
    r"(?P<rollout_gpu_index>reordered_gpu_ids\[gpu_index\])[^\n]*\n(?:[ \t~^]*\n)?[^\n]*IndexError: list index "
    r"out of range|"
    rf"(?:{ZERO_WORDS})[^\n]{{0,400}}?(?P<zero3_mixed_dtype>{MIXED_DTYPE_GATHER})|"
    rf"(?P<zero3_mixed_dtype_before>{MIXED_DTYPE_GATHER})[^\n]{{0,400}}?(?:{ZERO_WORDS})|"
    rf"(?P<mcore_async_writer>{MCORE_ASYNC_SAVE})[^\n]*\n(?:[^\n]*\n)?[^\n]*\bProcess (?:Spawn|Fork)Process-\d+:"
)
FACTS = ("rollout_gpu_index", "zero3_mixed_dtype", "zero3_mixed_dtype_before", "mcore_async_writer")


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for the release bug among ``hits`` (the named groups of `REFUSED`)."""
    if first(hits, "rollout_gpu_index"):
        return (
            "the rollout's engines were placed past the GPUs of their Ray placement group: start_engines indexed "
            "reordered_gpu_ids[gpu_index] beyond the group's GPU list (IndexError)" + on_ranks(hits),
            "The rollout asks for rollout_num_gpus GPUs (engines x rollout_num_gpus_per_engine) from a placement "
            "group that holds fewer. With --colocate and a critic (--advantage-estimator ppo), slime from "
            "2025-09-28 added the critic's GPUs to rollout_num_gpus although the critic shares the actor's group: "
            "upgrade slime (or the fork you run: vllm-project/vime#41 drops it), or train without the critic. "
            "Otherwise make --rollout-num-gpus fit the group: in colocate mode the actor's GPUs "
            "(actor_num_nodes x actor_num_gpus_per_node), else the GPUs reserved for the rollout, and a multiple "
            "of --rollout-num-gpus-per-engine.",
        )
    if first(hits, "zero3_mixed_dtype") or first(hits, "zero3_mixed_dtype_before"):
        return (
            "DeepSpeed ZeRO-3 all-gathered parameters of two dtypes into buffers of one (torch refuses an "
            "all_gather_into_tensor whose output dtype differs from its input)" + on_ranks(hits),
            "ZeRO-3's coalesced all-gather sizes its buffers from the first parameter's dtype. From DeepSpeed "
            "0.19.2 a ZeRO-Init model is no longer cast to bf16 as a whole, so PEFT's LoRA adapters, kept in "
            "fp32 (autocast_adapter_dtype=True), sit beside bf16 base weights. Give every trainable parameter "
            "the model's dtype: get_peft_model(model, config, autocast_adapter_dtype=False), or cast the adapters "
            "(model.to(torch.bfloat16)) before the trainer; or pin deepspeed<0.19.2 until a release fixes the "
            "buffers (deepspeedai/DeepSpeed#8072), and upgrade TRL (huggingface/trl#6091 does this for its "
            "trainers).",
        )
    return (
        "Megatron-Core's own async checkpoint save (deprecated: the warning above) lost its writer: the spawned "
        "process that writes the checkpoint failed (its traceback follows), and the ranks wait on a save that "
        "never finishes" + on_ranks(hits),
        "Read the writer's traceback below the 'Process SpawnProcess-N:' line for its error. MCore's async save "
        "(async_strategy='mcore') writes from another process: stage the tensors to the CPU in the training "
        "process before the async save (SkyRL's async_save_prestage_to_cpu, NovaSky-AI/SkyRL#1960), use NVRx's "
        "async save instead (async_strategy='nvrx', pip install nvidia-resiliency-ext), or save synchronously "
        "(drop --async-save) until then.",
    )
