"""torch.save and torch.load refusing what they were handed (kinds/torch_load_calls.py), each message as
torch/serialization.py prints it, and a near-miss of another cause that must not read as it."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


LOAD_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/proj/test.py", line 50, in main\n'
    "    model.load_state_dict(torch.load(args.checkpoint))\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/serialization.py", line 548, in _load\n'
    "    _check_seekable(f)\n"
)


# _check_seekable: torch.load(None), an argument left unset (nnzhan/Graph-WaveNet#22, IdoSpringer/ERGO#1)
def test_torch_load_of_none_names_the_unset_path():
    found = reads(
        LOAD_TRACE
        + "AttributeError: 'NoneType' object has no attribute 'seek'. You can only torch.load from a file "
        "that is seekable. Please pre-load the data into a buffer like io.BytesIO and try to load from it instead.\n",
        "torch_load_not_seekable",
        "certain",
    )
    assert "None" in found.summary and "--checkpoint" in found.fix


# the same check on a stream (dreamquark-ai/tabnet#163: a zip member on Python 3.6)
def test_torch_load_of_a_stream_says_to_buffer_it():
    found = reads(
        "io.UnsupportedOperation: seek. You can only torch.load from a file that is seekable. Please pre-load the "
        "data into a buffer like io.BytesIO and try to load from it instead.\n",
        "torch_load_not_seekable",
        "certain",
    )
    assert "io.BytesIO" in found.fix and "None" not in found.summary


# _legacy_load: a torch older than 1.6 meeting the zip format (Shimingyi/MotioNet#23, mahmoodlab/CLAM#128)
def test_a_zip_checkpoint_in_an_old_torch_says_to_upgrade():
    found = reads(
        '  File "/root/anaconda3/envs/psp_env/lib/python3.6/site-packages/torch/serialization.py", line 599, in '
        "_load\n"
        '    raise RuntimeError("{} is a zip archive (did you mean to use torch.jit.load()?)".format(f.name))\n'
        "RuntimeError: ./checkpoints/wild_gt_tcc.pth is a zip archive (did you mean to use torch.jit.load()?)\n",
        "checkpoint_newer_format",
        "certain",
    )
    assert "./checkpoints/wild_gt_tcc.pth" in found.summary
    assert "1.6" in found.fix and "_use_new_zipfile_serialization=False" in found.fix


# torch 1.6+ on a file that is no zip (a truncated download) is another check, not this one
def test_a_broken_zip_is_not_an_old_torch():
    found = explained(
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory\n"
    )
    assert found.id != "log.checkpoint_newer_format", found.summary


# _save: a view of another dtype saved beside its base (pytorch/pytorch#91325)
def test_saving_dtype_views_says_to_clone():
    found = reads(
        '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 853, in _save\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Cannot save multiple tensors or storages that view the same data as different types\n",
        "save_dtype_views",
        "certain",
    )
    assert ".clone()" in found.fix


# load(mmap=True) on a legacy or broken file (pytorch/executorch#5030, unslothai/unsloth#570): only likely
def test_mmap_on_a_file_not_in_the_zip_format_is_likely():
    found = reads(
        "RuntimeError: mmap can only be used with files saved with `torch.save(_use_new_zipfile_serialization=True), "
        "please torch.save your checkpoint with this option in order to use mmap.\n",
        "mmap_load_refused",
        "likely",
    )
    assert "Git LFS" in found.fix and "without mmap" in found.fix


# the older check of the path's type (pytorch/pytorch#116103): a pathlib.Path refused
def test_mmap_with_a_path_object_says_to_pass_a_string():
    found = reads(
        "ValueError: f must be a string filename in order to use mmap argument\n",
        "mmap_load_refused",
        "certain",
    )
    assert "str(path)" in found.fix


# weights_only's refusal is another cause on the same torch.load call
def test_weights_only_is_not_an_mmap_refusal():
    found = explained(
        "_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint.\n"
    )
    assert found.id not in ("log.mmap_load_refused", "log.torch_load_not_seekable"), found.summary
