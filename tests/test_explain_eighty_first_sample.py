"""The eighty-first sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3867-3916)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# CPython's traceback through transformers' save_pretrained into safetensors/torch.py save_file (which calls
# _flatten and _tobytes, where safetensors refuses shared and non-contiguous tensors), the log cut after that frame
SAVE_INTO_SAFETENSORS = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/finetune.py", line 212, in <module>\n'
    "    model.save_pretrained(args.output_dir)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/transformers/modeling_utils.py", line 3034, in save_pretrained\n'
    '    safe_save_file(shard, os.path.join(save_directory, shard_file), metadata={"format": "pt"})\n'
    '  File "/opt/conda/lib/python3.11/site-packages/safetensors/torch.py", line 286, in save_file\n'
)


def test_a_save_cut_off_inside_safetensors_save_file_is_likely_its_refusal():
    found = reads(SAVE_INTO_SAFETENSORS, "safetensors_save_refused", "likely")
    assert "save_file" in found.summary and "contiguous" in found.fix and "save_model" in found.fix


# the same traceback with safetensors' own ValueError after it (safetensors/torch.py _tobytes) is read from the
# message, certain, naming the tensor
def test_the_same_save_with_its_error_line_is_the_message_reading():
    found = reads(
        SAVE_INTO_SAFETENSORS + "    serialize_file(_flatten(tensors), filename, metadata=metadata)\n"
        "ValueError: You are trying to save a non contiguous tensor: `encoder.block.0.layer.0.SelfAttention.q.weight` "
        "which is not allowed. It either means you are trying to save tensors which are reference of each other in "
        "which case it's recommended to save only the full tensors, and reslice at load time, or simply call "
        "`.contiguous()` on your tensor to pack it before saving.\n",
        "safetensors_save_refused",
        "certain",
    )
    assert "SelfAttention.q.weight" in found.summary


# a traceback that ends in safetensors' load_file (a checkpoint being read, not written) is no refused save
def test_a_traceback_ending_in_safetensors_load_file_is_not_a_refused_save():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/workspace/infer.py", line 40, in <module>\n'
        "    state = load_file(args.weights)\n"
        '  File "/opt/conda/lib/python3.11/site-packages/safetensors/torch.py", line 311, in load_file\n'
    )
    assert found.id != "log.safetensors_save_refused", found.summary


# serialize_file's own error after the save_file frame (a full disk) is read from its line, not as a refusal
def test_a_full_disk_under_save_file_is_not_a_refused_tensor():
    found = explained(
        SAVE_INTO_SAFETENSORS + "    serialize_file(_flatten(tensors), filename, metadata=metadata)\n"
        "safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: StorageFull, "
        'message: "No space left on device" })\n'
    )
    assert found.id != "log.safetensors_save_refused", found.summary


# torch/distributed/_shard/sharded_tensor/api.py ShardedTensor.__setstate__, raised while torch.load unpickles a
# sharded state dict in a process without a default process group
def test_a_sharded_tensor_loaded_without_a_process_group_is_a_checkpoint_not_consolidated():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "/workspace/convert_to_hf.py", line 57, in <module>\n'
        '    state = torch.load(args.checkpoint, map_location="cpu")\n'
        '  File "/opt/conda/lib/python3.11/site-packages/torch/serialization.py", line 1360, in load\n'
        "    return _load(\n"
        '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/_shard/sharded_tensor/api.py", line 1215, '
        "in __setstate__\n"
        "    raise RuntimeError(\n"
        'RuntimeError: Need to initialize default process group using "init_process_group" before loading '
        "ShardedTensor\n",
        "sharded_checkpoint_not_consolidated",
        "likely",
    )
    assert "FULL_STATE_DICT" in found.fix and "init_process_group" in found.fix


# torch/distributed/distributed_c10d.py _get_default_group: a collective or query with no process group at all is
# not a sharded checkpoint
def test_no_default_process_group_elsewhere_is_not_a_sharded_checkpoint():
    found = explained(
        "ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n"
    )
    assert found.id != "log.sharded_checkpoint_not_consolidated", found.summary
