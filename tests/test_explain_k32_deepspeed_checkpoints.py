"""DeepSpeed's checkpoint converters and the universal checkpoint's loader refusing a folder
(kinds/deepspeed_checkpoint_files.py): the catalog's templates filled in as DeepSpeed prints them, inside the
tracebacks zero_to_fp32.py / ds_to_universal.py / a resumed run raise them in (DeepSpeed is not installed here, and
its converters read files only a DeepSpeed engine writes), each beside a near miss that must not read as it."""

from __future__ import annotations

import pytest
from explaining import explained, filled, leads_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

ZERO_TO_FP32 = (
    "Traceback (most recent call last):\n"
    '  File "/scratch/run7/checkpoints/zero_to_fp32.py", line 760, in <module>\n'
    "    convert_zero_checkpoint_to_fp32_state_dict(args.checkpoint_dir, args.output_dir)\n"
    '  File "/scratch/run7/checkpoints/zero_to_fp32.py", line 137, in parse_model_states\n'
    '    raise ValueError(f"{{file}} is not a model state checkpoint")\n'
    "ValueError: {message}\n"
)

DS_TO_UNIVERSAL = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/deepspeed/checkpoint/ds_to_universal.py", line 1012, in main\n'
    "    _extract_zero3_autoep_fragments(args, ds_checkpoint)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/deepspeed/checkpoint/ds_to_universal.py", line 743, in _load\n'
    "    raise {error}(msg)\n"
    "{error}: {message}\n"
)


def test_a_file_no_engine_wrote_in_the_tag_folder():
    message = filled(
        "deepspeed:is-not-model-state-checkpoint", "/scratch/run7/checkpoints/global_step500/model_states.pt"
    )
    found = leads_with(
        ZERO_TO_FP32.format(message=message),
        "deepspeed_checkpoint_files",
        "certain",
        ["global_step500/model_states.pt", "zero_to_fp32.py", "'latest'"],
    )
    assert "raise ValueError" not in found.summary, found.summary


def test_a_rank_whose_files_another_node_kept():
    message = filled("deepspeed:missing-zero-optimizer-checkpoint-for-rank", "12")
    leads_with(
        DS_TO_UNIVERSAL.format(error="FileNotFoundError", message=message),
        "deepspeed_checkpoint_files",
        "certain",
        ["rank 12", "shared", "global_step<N>"],
    )


def test_files_of_two_saves_in_one_folder():
    message = filled(
        "deepspeed:duplicate-zero-rank-in-files-and",
        "3",
        "optimizer",
        "bf16_zero_pp_rank_3_mp_rank_00_optim_states.pt",
        "zero_pp_rank_3_mp_rank_00_optim_states.pt",
    )
    leads_with(
        DS_TO_UNIVERSAL.format(error="ValueError", message=message),
        "deepspeed_checkpoint_files",
        "certain",
        ["Duplicate ZeRO rank 3", "two saves", "new tag per save"],
    )


def test_files_renamed_by_hand():
    message = filled(
        "deepspeed:cannot-parse-zero-rank-from-checkpoint", "/ckpt/global_step9/rank3_optim_states.pt"
    )
    leads_with(
        DS_TO_UNIVERSAL.format(error="ValueError", message=message),
        "deepspeed_checkpoint_files",
        "certain",
        ["rank3_optim_states.pt", "zero_pp_rank_<dp>_mp_rank_<tp>_optim_states.pt"],
    )


def test_a_checkpoint_without_universal_info():
    message = filled("deepspeed:required-state-is-missing-in-checkpoint", "universal_checkpoint_info")
    leads_with(
        f"AssertionError: {message}\n",
        "deepspeed_checkpoint_files",
        "certain",
        ["universal_checkpoint_info", "zero_to_fp32.py"],
    )


def test_another_libraries_checkpoint_file_is_not_deepspeeds():
    found = explained("ValueError: /data/model.safetensors is not a valid checkpoint file\n")
    assert found.id != "log.deepspeed_checkpoint_files", found.summary


def test_a_universal_checkpoint_into_a_model_of_other_shapes_is_likely():
    message = filled(
        "deepspeed:load-checkpoint-dst-numel-src-numel", "word_embeddings.weight", "51511296", "51462144"
    )
    leads_with(
        f"AssertionError: {message}\n",
        "universal_checkpoint_target",
        "likely",
        ["word_embeddings.weight", "51511296", "51462144", "same model config"],
    )


def test_a_vocabulary_padded_smaller_than_the_checkpoints():
    message = filled("deepspeed:vocab-tensor-padded-size-loaded-universal", "50304", "50432")
    leads_with(
        f"AssertionError: {message}\n",
        "universal_checkpoint_target",
        "certain",
        ["50304 < loaded universal size 50432", "make-vocab-size-divisible-by"],
    )


def test_experts_that_the_ep_size_does_not_divide():
    message = filled("deepspeed:num-experts-not-divisible-by-ep", "8", "3")
    leads_with(
        f"ValueError: {message}\n", "universal_checkpoint_target", "certain", ["(8)", "(3)", "ep_size"]
    )


def test_heads_not_divisible_by_a_tensor_parallel_size_is_not_an_expert_layout():
    found = explained("AssertionError: num_attention_heads (12) not divisible by tp_size (5)\n")
    assert found.id != "log.universal_checkpoint_target", found.summary
