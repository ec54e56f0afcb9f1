"""DeepSpeed checkpoints its converters and loaders cannot put back together: files missing, mixed or renamed.

DeepSpeed writes one checkpoint as a folder per tag (``global_step<N>/``), one file per rank (``zero_pp_rank_<dp>_
mp_rank_<tp>_optim_states.pt``, ``*_model_states.pt``), and a ``latest`` file naming the tag. ``zero_to_fp32.py``
(``deepspeed/utils/zero_to_fp32.py``), ``ds_to_universal.py`` (``deepspeed/checkpoint/ds_to_universal.py``), the
universal checkpoint's loader (``deepspeed/checkpoint/universal_checkpoint.py``) and ZeRO-1/2's elastic load
(``runtime/zero/stage_1_and_2.py``) refuse a folder whose files do not belong together, as DeepSpeed 0.6-0.19
print it: a rank's file missing (a node's local disk, a save cut short), files of two saves side by side, names
changed by hand, a file no engine wrote; and a universal checkpoint loaded into a model or a layout it does not fit.
Each message names its own cause, but the shape one, which a model built another way prints as well (likely).
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "checkpoints and pretrained models"

_RANK_FILES_MISSING = (
    "Every rank writes its own files into the tag's folder (global_step<N>/zero_pp_rank_<dp>_mp_rank_<tp>_optim_"
    "states.pt and *_model_states.pt): on several nodes without a shared filesystem each node holds only its own "
    "ranks' files, and a save cut short (a rank killed, a disk full) leaves some out. Copy every node's "
    "global_step<N>/ files into one folder (or save to a filesystem all nodes share: save_checkpoint(save_dir) on "
    "a shared path), or convert / resume from an earlier tag every rank wrote; pass the checkpoint folder that "
    "holds 'latest' (or the global_step<N> folder itself)."
)

_TWO_SAVES = (
    "The folder holds files of two saves: a tag saved again over part of an older one, files copied from two runs, "
    "or a bf16_zero_pp_rank_* and a zero_pp_rank_* file for the same rank. Keep one save's files: delete the "
    "tag's folder and save it again, or use a tag every rank wrote once (save_checkpoint(dir, tag=f'global_step"
    "{step}') with a new tag per save)."
)

_RENAMED = (
    "DeepSpeed reads each rank from the file's name as it wrote it: zero_pp_rank_<dp>_mp_rank_<tp>_optim_states.pt "
    "(bf16_zero_pp_rank_... for the bf16 optimizer) and zero_pp_rank_<dp>_mp_rank_<tp>_model_states.pt. Give the "
    "files back their names, and move any other *_optim_states.pt / *_model_states.pt out of the tag's folder."
)

CONVERTER_REFUSALS: tuple[tuple[str, str], ...] = (
    # zero_to_fp32.py parse_model_states: a *_model_states.pt without DeepSpeed's buffer_names
    (
        "is not a model state checkpoint",
        "zero_to_fp32.py reads every *_model_states.pt of the tag's folder, and the file named was not written by a "
        "DeepSpeed engine's save_checkpoint (no buffer_names: a converted, copied or another tool's file). Run it on "
        "the folder save_checkpoint wrote (the one holding 'latest', with global_step<N>/ inside), and move the "
        "other *_model_states.pt files out of global_step<N>/.",
    ),
    # ds_to_universal.py / zero_to_fp32.py on a ZeRO-3 AutoEP checkpoint (0.19.5+)
    (
        "zero_to_fp32 does not support AutoEP ZeRO-3 partition-native checkpoints",
        "Convert an AutoEP ZeRO-3 checkpoint with DeepSpeed's expert-aware converter instead: python -m "
        "deepspeed.checkpoint.ds_to_universal --input_folder <ckpt>/global_step<N> --output_folder <out>, then load "
        "it with the universal checkpoint loader.",
    ),
    (
        "Stage 3 universal checkpoint conversion with AutoEP is not supported",
        "ds_to_universal cannot convert this ZeRO-3 AutoEP checkpoint: load it back with the same topology it was "
        "saved with (the same number of GPUs, the same ep_size and ZeRO stage 3) through engine.load_checkpoint.",
    ),
    # ds_to_universal.py _check_for_required_state (0.12.6+)
    (
        "state is missing in checkpoint. Verify that client creates this state",
        "ds_to_universal converts checkpoints whose client state records universal_checkpoint_info (how each "
        "parameter is split over the tensor-parallel ranks): Megatron-DeepSpeed writes it, and recent DeepSpeed "
        "releases write it for AutoTP models; a plain ZeRO checkpoint has none. Consolidate it with zero_to_fp32.py "
        "(python <ckpt>/zero_to_fp32.py <ckpt> <out>) and load the weights into a new run, or resume with the "
        "same number of GPUs; or save with training code that records it.",
    ),
    # ds_to_universal.py: the ranks read from the files' names (0.14.5+, 0.19.5+)
    ("Cannot parse ZeRO rank from checkpoint file name", _RENAMED),
    ("Cannot parse ZeRO-3 tp/dp ranks from checkpoint file name", _RENAMED),
    ("Cannot parse dp_rank", _RENAMED),
    # ds_to_universal.py: a rank's files missing (0.19.5+)
    ("Missing ZeRO optimizer checkpoint for rank", _RANK_FILES_MISSING),
    ("Missing ZeRO-3 checkpoint file for tp_rank=", _RANK_FILES_MISSING),
    ("ZeRO-3 checkpoint model/optimizer rank sets do not match", _RANK_FILES_MISSING),
    ("ZeRO-3 checkpoint has no model/optimizer rank files", _RANK_FILES_MISSING),
    # files of two saves: ds_to_universal.py's merge, stage_1_and_2.py's elastic load
    ("All shards must have the same step value", _TWO_SAVES),
    ("State dicts of all partitions must have the same step value", _TWO_SAVES),
    ("Duplicate ZeRO rank", _TWO_SAVES),
    ("ZeRO-3 model/optimizer tp_degree or dp_degree mismatch", _TWO_SAVES),
)

DEEPSPEED_CHECKPOINT_FILES = refusal_recogniser(
    kind="deepspeed_checkpoint_files",
    title="a DeepSpeed checkpoint folder whose files do not belong together",
    refusals=CONVERTER_REFUSALS,
    templates=(
        "deepspeed:is-not-model-state-checkpoint",  # utils/zero_to_fp32.py
        "deepspeed:zero-to-fp32-does-not-support",
        "deepspeed:stage-universal-checkpoint-conversion-with-autoep",  # checkpoint/ds_to_universal.py
        "deepspeed:required-state-is-missing-in-checkpoint",
        "deepspeed:cannot-parse-zero-rank-from-checkpoint",
        "deepspeed:cannot-parse-zero-tp-dp-ranks",
        "deepspeed:cannot-parse-dp-rank-from",
        "deepspeed:cannot-parse-dp-rank-and-mp",
        "deepspeed:missing-zero-optimizer-checkpoint-for-rank",
        "deepspeed:missing-zero-checkpoint-file-for-tp",
        "deepspeed:zero-checkpoint-model-optimizer-rank-sets",
        "deepspeed:zero-checkpoint-has-no-model-optimizer",
        "deepspeed:all-shards-must-have-the-same",
        "deepspeed:state-dicts-of-all-partitions-must",  # runtime/zero/stage_1_and_2.py
        "deepspeed:duplicate-zero-rank-in-files-and",
        "deepspeed:zero-model-optimizer-tp-degree-or",
    ),
)

_SHAPES = (
    "The model this run built does not have the parameter's size the checkpoint holds (the message names it and "
    "both sizes): build it from the same model config as the saved run (hidden size, layers, vocabulary size and "
    "its padding), with the tensor-parallel size the universal checkpoint can be split to (sizes divisible by it); "
    "a parameter renamed or added since the save shows the same way."
)

UNIVERSAL_REFUSALS: tuple[tuple[str, str], ...] = (
    # checkpoint/universal_checkpoint.py load_hp_checkpoint_state (0.9.5+)
    ("!= src numel", _SHAPES),
    (
        "Vocab tensor padded size",
        "The new run pads the vocabulary to fewer rows than the universal checkpoint holds: use the same tokenizer "
        "(vocabulary size) as the saved run, and the same padding (Megatron-DeepSpeed pads to a multiple of "
        "--make-vocab-size-divisible-by x the tensor-parallel size: keep them so the padded size is at least the "
        "checkpoint's).",
    ),
    (
        "not divisible by ep_size",
        "Each expert-parallel rank holds num_experts / ep_size experts: choose an ep_size that divides the model's "
        "number of experts (the message names both), in the MoE layer (deepspeed.moe.layer.MoE(..., ep_size=)) or "
        "the config's expert_parallel section.",
    ),
)

UNIVERSAL_CHECKPOINT_TARGET = refusal_recogniser(
    kind="universal_checkpoint_target",
    title="a DeepSpeed universal checkpoint loaded into a model or layout it does not fit",
    refusals=UNIVERSAL_REFUSALS,
    templates=(
        "deepspeed:load-checkpoint-dst-numel-src-numel",  # checkpoint/universal_checkpoint.py
        "deepspeed:load-checkpoint-dst-tensor-numel-src",
        "deepspeed:vocab-tensor-padded-size-loaded-universal",
        "deepspeed:num-experts-not-divisible-by-ep",
    ),
    # a model built from another config, or one renamed since: the sizes differ either way
    several=("!= src numel",),
)

RECOGNISERS = (DEEPSPEED_CHECKPOINT_FILES, UNIVERSAL_CHECKPOINT_TARGET)
