"""The seventy-eighth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3717-3766)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# webdataset/gopen.py gopen_error, the __default__ of gopen_schemes: raise ValueError(f"{url}: no gopen handler
# defined"); s3 has no entry in gopen_schemes
def test_a_shard_url_webdatasets_gopen_has_no_handler_for():
    found = reads(
        "ValueError: s3://team-data/laion/train-000123.tar: no gopen handler defined\n",
        "url_scheme_unsupported",
        "certain",
    )
    assert "s3://" in found.summary and "s3://team-data/laion/train-000123.tar" in found.summary
    assert "pipe:aws s3 cp s3://team-data/laion/train-000123.tar -" in found.fix
    assert "gopen_schemes['s3']" in found.fix and "fsspec" in found.fix


# the same refusal re-raised with the URL as the exception's second argument, for Azure's scheme
def test_the_gopen_refusal_names_the_scheme_it_was_given():
    found = reads(
        "ValueError: ('az://corpus/shards/shard-000007.tar: no gopen handler defined', "
        "'az://corpus/shards/shard-000007.tar')\n",
        "url_scheme_unsupported",
        "certain",
    )
    assert "az://" in found.summary and "gopen_schemes['az']" in found.fix


# webdataset/gopen.py gopen with enforce_security: a refusal of local files, not a scheme without a handler
def test_gopens_security_refusal_is_not_a_missing_handler():
    found = explained("ValueError: gopen: unsafe_gopen is False, cannot open local files\n")
    assert found.id != "log.url_scheme_unsupported", found.summary


# CPython's OSError for EXDEV (Objects/exceptions.c, glibc's strerror) from os.replace of a checkpoint written to /tmp
def test_a_checkpoint_renamed_across_filesystems():
    found = reads(
        '  File "/opt/app/train.py", line 88, in save\n'
        "    os.replace(tmp_path, save_path)\n"
        "OSError: [Errno 18] Invalid cross-device link: '/tmp/tmpq1w2e3/last.ckpt' -> '/mnt/runs/exp4/last.ckpt'\n",
        "cross_device_rename",
        "certain",
    )
    assert "/tmp/tmpq1w2e3/last.ckpt -> /mnt/runs/exp4/last.ckpt" in found.summary
    assert "shutil.move" in found.fix and "tempfile.mkstemp(dir=" in found.fix


# the same rename with another errno: the source is gone, not on another filesystem
def test_a_rename_whose_source_is_missing_is_not_a_cross_device_rename():
    found = explained(
        "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpq1w2e3/last.ckpt' -> "
        "'/mnt/runs/exp4/last.ckpt'\n"
    )
    assert found.id != "log.cross_device_rename", found.summary


# HDF5 src/H5Bcache.c "wrong B-tree signature" as h5py shows it, beside the user's words that the file is opened in
# the Dataset's __init__ and that opening it in __getitem__ runs
def test_an_hdf5_read_error_with_the_handle_opened_in_init_is_the_shared_handle():
    found = reads(
        "KeyError: 'Unable to open object (wrong B-tree signature)'\n"
        "The h5py.File is created in __init__ of my Dataset; creating it in __getitem__ instead works.\n",
        "dataset_handle_fork",
        "likely",
    )
    assert "__getitem__" in found.fix and "damaged" in found.summary


# the same message from h5py.File's own __init__ frame (opening a file), nothing about workers: a damaged file too
def test_the_same_hdf5_error_through_h5pys_own_init_frame_is_not_read_as_the_shared_handle():
    found = explained(
        '  File "/usr/lib/python3/dist-packages/h5py/_hl/group.py", line 357, in __getitem__\n'
        "    oid = h5o.open(self.id, self._e(name), lapl=self._lapl)\n"
        '  File "/usr/lib/python3/dist-packages/h5py/_hl/files.py", line 567, in __init__\n'
        "KeyError: 'Unable to open object (wrong B-tree signature)'\n"
    )
    assert found.id != "log.dataset_handle_fork", found.summary
