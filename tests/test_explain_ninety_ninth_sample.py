"""The ninety-ninth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4767-4816)."""

from __future__ import annotations

import pytest
from explaining import certain_saying, explained, filled, read

pytestmark = pytest.mark.usefixtures("every_message_seen")

OVER_4GIB = "OverflowError: " + filled("system:pickle-bytes-over-4gib") + "\n"

# a DataLoader starting its workers by spawn (Windows) hands each the dataset pickled by multiprocessing's
# reduction.dump, which took protocol 3 before Python 3.8
SPAWNED_WORKERS = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 120, in <module>\n'
    "    for i, (x, y) in enumerate(loader):\n"
    '  File "C:\\Anaconda3\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 279, in __iter__\n'
    "    return _MultiProcessingDataLoaderIter(self)\n"
    '  File "C:\\Anaconda3\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 719, in __init__\n'
    "    w.start()\n"
    '  File "C:\\Anaconda3\\lib\\multiprocessing\\popen_spawn_win32.py", line 89, in __init__\n'
    "    reduction.dump(process_obj, to_child)\n"
    '  File "C:\\Anaconda3\\lib\\multiprocessing\\reduction.py", line 60, in dump\n'
    "    ForkingPickler(file, protocol).dump(obj)\n"
)

TORCH_SAVE = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/project/train.py", line 200, in save_checkpoint\n'
    '    torch.save({"model": model.state_dict(), "features": features}, path)\n'
    '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 619, in save\n'
    "    _save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)\n"
    '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 831, in _save\n'
    "    pickler.dump(obj)\n"
)


# fairseq#2166: the error line alone (the thread's title); the maintainer: PyTorch's DataLoader pickled the large
# numpy arrays, pyarrow's shared store avoids it
def test_the_error_line_alone_names_the_size_limit_and_every_place_that_pickles():
    found = certain_saying(
        OVER_4GIB,
        "pickle_size_limit",
        ["bytes object over 4 GiB", "protocol older than 4"],
        ["Python 3.8", "pyarrow", "pickle_protocol=4", "protocol=4"],
    )
    assert "another process" not in found.summary


def test_the_train_log_reads_as_the_size_limit():
    read("4770.txt", "pickle_size_limit")


def test_dataloader_workers_started_by_spawn_are_named_as_the_pickling_place():
    certain_saying(
        SPAWNED_WORKERS + OVER_4GIB,
        "pickle_size_limit",
        ["to hand it to another process"],
        ["Python 3.8", "mmap_mode='r'", "multiprocessing_context='fork'"],
    )


def test_torch_save_is_named_with_its_protocol_argument():
    found = certain_saying(
        TORCH_SAVE + OVER_4GIB, "pickle_size_limit", ["by torch.save"], ["pickle_protocol=4"]
    )
    assert "Python 3.8" not in found.fix


def test_a_string_over_4gib_reads_the_same_way():
    certain_saying(
        "OverflowError: " + filled("system:pickle-string-over-4gib") + "\n",
        "pickle_size_limit",
        ["a string over 4 GiB"],
        ["protocol=4"],
    )


# detectron2 logs the size of the dataset it serialises for its workers: a healthy line, no refusal
def test_a_logged_serialized_dataset_size_is_not_the_limit():
    found = explained(
        "[04/20 03:38:33 d2.data.common]: Serializing 27826 elements to byte tensors and concatenating them all ...\n"
        "[04/20 03:39:07 d2.data.common]: Serialized dataset takes 17001.56 MiB\n"
    )
    assert found.id != "log.pickle_size_limit", found.summary
