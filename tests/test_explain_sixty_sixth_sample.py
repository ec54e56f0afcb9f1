"""The sixty-sixth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3117-3166)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# torch/csrc/utils/tensor_new.cpp infer_scalar_type: TORCH_CHECK(false, "Could not infer dtype of ", tp_name)
def test_a_dict_given_to_torch_tensor_reads_as_a_column_of_records():
    found = reads(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in __getitem__\n'
        "    return {k: torch.tensor(v) for k, v in row.items()}\n"
        "RuntimeError: Could not infer dtype of dict\n",
        "column_not_tensorizable",
        "likely",
    )
    assert "dict" in found.summary and "remove_columns" in found.fix


def test_another_type_torch_cannot_infer_is_not_a_column_of_records():
    found = explained("RuntimeError: Could not infer dtype of Image\n")
    assert found.id != "log.column_not_tensorizable"


def test_a_dict_told_beside_monais_transforms_is_not_a_column_of_records():
    found = explained(
        "RuntimeError: Could not infer dtype of dict after EnsureChannelFirst in my monai Compose\n"
    )
    assert found.id != "log.column_not_tensorizable"


# libraries/liblmdb/mdb.c mdb_strerror, raised by py-lmdb's err_set as "mdb_put: ..."
def test_lmdbs_full_map_reads_as_a_map_size_too_small():
    found = reads(
        '  File "tools/create_lmdb.py", line 88, in write\n'
        "    txn.put(key, value)\n"
        "lmdb.MapFullError: mdb_put: MDB_MAP_FULL: Environment mapsize limit reached\n",
        "lmdb_map_full",
        "certain",
    )
    assert "map_size" in found.fix


def test_another_lmdb_error_is_not_a_full_map():
    found = explained("lmdb.ReadonlyError: mdb_put: Permission denied\n")
    assert found.id != "log.lmdb_map_full"


# CPython's AttributeError on the trimesh.Scene trimesh.load returns for a file of several meshes
def test_a_scene_without_vertices_reads_as_a_mesh_loaded_as_a_scene():
    found = reads(
        '  File "data/shapes.py", line 51, in __getitem__\n'
        "    points = mesh.vertices\n"
        "AttributeError: 'Scene' object has no attribute 'vertices'\n",
        "mesh_loaded_as_scene",
        "likely",
    )
    assert "force='mesh'" in found.fix


def test_a_scene_without_another_attribute_is_not_a_mesh_loaded_as_a_scene():
    found = explained("AttributeError: 'Scene' object has no attribute 'render_frame'\n")
    assert found.id != "log.mesh_loaded_as_scene"


# zarr-python 3's src/zarr/storage/__init__.py: no Store, BaseStore, DirectoryStore... of zarr 2 (or a zarr too
# old for the name: likely)
def test_zarr2s_store_missing_from_zarr_storage_reads_as_zarr_3():
    found = reads(
        '  File "/usr/lib/python3.11/site-packages/zarrdataset/_imageloaders.py", line 25, in <module>\n'
        "AttributeError: module 'zarr.storage' has no attribute 'DirectoryStore'\n",
        "dependency_version",
        "likely",
    )
    assert "zarr 3" in found.summary and "zarr<3" in found.fix


def test_zarr2s_store_imported_from_zarr_storage_reads_the_same():
    found = reads(
        "ImportError: cannot import name 'BaseStore' from 'zarr.storage' "
        "(/usr/lib/python3.11/site-packages/zarr/storage/__init__.py)\n",
        "dependency_version",
        "likely",
    )
    assert "zarr<3" in found.fix


def test_a_zarr_3_store_missing_is_not_read_as_zarr_3():
    found = explained("AttributeError: module 'zarr.storage' has no attribute 'LocalStore'\n")
    assert "zarr 3" not in found.summary


# miditok/utils/utils.py detect_chords, 2.1.0-2.1.6: unknown chords kept with chord_unknown unset; the vocabulary
# (miditok/midi_tokenizer.py) has Chord_ tokens for config.chord_maps only
def test_miditoks_unknown_chord_token_reads_as_that_release_bug():
    found = reads(
        '  File "/usr/lib/python3.10/site-packages/miditok/midi_tokenizer.py", line 412, in _events_to_tokens\n'
        "    ids = [self.vocab[token] for token in tokens]\n"
        "KeyError: 'Chord_C:ukn3'\n",
        "library_version_bug",
        "likely",
    )
    assert "2.1.7" in found.summary and "pip install -U miditok" in found.fix


def test_a_known_chord_missing_from_the_vocabulary_is_not_that_bug():
    found = explained("KeyError: 'Chord_C:maj'\n")
    assert "MidiTok" not in found.summary
