"""The seventy-sixth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3617-3666)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# flash-attn csrc/flash_attn/flash_api.cpp mha_varlen_fwd: batch_size = cu_seqlens_q.numel() - 1, then
# CHECK_SHAPE(cu_seqlens_k, batch_size + 1), which prints #x " must have shape (" #__VA_ARGS__ ")"
def test_flash_attns_varlen_keys_offsets_are_a_release_of_the_packing_code():
    found = reads(
        '  File "/opt/venv/lib/python3.12/site-packages/flash_attn/flash_attn_interface.py", line 170, in '
        "_flash_attn_varlen_forward\n"
        "    out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.varlen_fwd(\n"
        "RuntimeError: cu_seqlens_k must have shape (batch_size + 1)\n",
        "library_version_bug",
        "likely",
    )
    assert "cu_seqlens_k" in found.summary and "position_ids" in found.summary
    assert "transformers" in found.fix and "1-D int32" in found.fix


# the same macro on the queries' offsets: cu_seqlens_q.numel() - 1 is the batch, so only a tensor that is not 1-D
def test_flash_attns_varlen_query_offsets_say_a_batch_dimension_was_kept():
    found = reads(
        "RuntimeError: cu_seqlens_q must have shape (batch_size + 1)\n", "library_version_bug", "likely"
    )
    assert "not a 1-D tensor" in found.summary


# the same function's dtype check (TORCH_CHECK(cu_seqlens_q.dtype() == torch::kInt32, "cu_seqlens_q must have dtype
# int32")): the caller's offsets in int64, no release's boundaries
def test_flash_attns_offsets_dtype_check_is_not_the_shape_reading():
    found = explained("RuntimeError: cu_seqlens_q must have dtype int32\n")
    assert "sequence boundaries" not in found.summary and "batch_size + 1" not in found.fix, found.summary


# torchtune/datasets/_chat.py (and _alpaca.py, _instruct.py, _text_completion.py, ...): packed=True with
# tokenizer.max_seq_len None raises ValueError("PackedDataset requires a max_seq_len to be set on the tokenizer.")
def test_torchtunes_packed_dataset_without_max_seq_len_is_the_configs_arguments():
    found = reads(
        '  File "/home/user/torchtune/torchtune/datasets/_chat.py", line 184, in chat_dataset\n'
        "    raise ValueError(\n"
        "ValueError: PackedDataset requires a max_seq_len to be set on the tokenizer.\n",
        "library_arguments",
        "certain",
    )
    assert "tokenizer.max_seq_len" in found.fix and "packed=False" in found.fix


# torchtune/datasets/_packed.py PackedDataset._pack: f"Dataset sample is too long ({seq_len} > {self.max_seq_len}). "
# "Please set `split_across_pack=True` or increase `max_seq_len`." (max_seq_len is set, a sample exceeds it)
def test_torchtunes_sample_too_long_for_the_pack_is_not_the_missing_max_seq_len():
    found = explained(
        "ValueError: Dataset sample is too long (9000 > 8192). Please set `split_across_pack=True` or increase "
        "`max_seq_len`.\n"
    )
    assert "tokenizer was built without max_seq_len" not in found.fix, found.summary


# aten/src/ATen/ExpandUtils.cpp infer_size_impl under a rotary embedding's product (transformers' modeling_llama.py
# apply_rotary_pos_emb: q_embed = (q * cos) + (rotate_half(q) * sin)), the sequence split over two ranks
def test_a_rotary_product_off_by_a_whole_factor_is_a_sequence_split_across_ranks():
    found = reads(
        '  File "/usr/lib/python3/site-packages/transformers/models/llama/modeling_llama.py", line 276, in '
        "apply_rotary_pos_emb\n"
        "    q_embed = (q * cos) + (rotate_half(q) * sin)\n"
        "RuntimeError: The size of tensor a (4096) must match the size of tensor b (1024) at non-singleton "
        "dimension 2\n",
        "broadcast_size_mismatch",
        "likely",
    )
    assert "4 times" in found.summary and "rank's share" in found.summary
    assert "sequence_parallel" in found.fix and "slice cos/sin" in found.fix


def test_a_rotary_product_off_by_one_position_is_not_a_split():
    found = explained(
        '  File "/usr/lib/python3/site-packages/transformers/models/llama/modeling_llama.py", line 206, in '
        "apply_rotary_pos_emb\n"
        "    q_embed = (q * cos) + (rotate_half(q) * sin)\n"
        "RuntimeError: The size of tensor a (3999) must match the size of tensor b (4000) at non-singleton "
        "dimension 2\n"
    )
    assert found.id == "log.broadcast_size_mismatch" and "rank's share" not in found.summary, found.summary


def test_a_whole_factor_outside_a_rotary_embedding_is_a_plain_broadcast():
    found = explained(
        "RuntimeError: The size of tensor a (2048) must match the size of tensor b (1024) at non-singleton "
        "dimension 0\n"
    )
    assert found.id == "log.broadcast_size_mismatch" and "rank's share" not in found.summary, found.summary
