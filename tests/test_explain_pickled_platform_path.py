"""A pathlib Path of another operating system unpickled from a saved file (kinds/checkpoint.py's
PICKLED_PLATFORM_PATH): CPython's "cannot instantiate 'WindowsPath' on your system"."""

from __future__ import annotations

import pathlib
import pickle
import sys
import traceback

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

OTHER = "PosixPath" if sys.platform == "win32" else "WindowsPath"


def _unpickled_from_the_other_system() -> str:
    """What this Python prints unpickling a Path made on the other system: pickle keeps the concrete class's
    name, so a file saved there loads one here (the class is looked up by name, as on the other machine)."""
    blob = pickle.dumps(pathlib.PurePosixPath("runs/exp1"), protocol=0).replace(b"PurePosixPath", OTHER.encode())
    try:
        pickle.loads(blob)
    except Exception:  # NotImplementedError before 3.12, pathlib.UnsupportedOperation after
        return traceback.format_exc()
    raise AssertionError(f"{OTHER} was made on {sys.platform}")


def test_this_pythons_own_error_reads_as_a_path_pickled_elsewhere():
    log = _unpickled_from_the_other_system()
    assert f"cannot instantiate '{OTHER}' on your system" in log, log
    found = explained(log)
    assert found.id == "log.pickled_platform_path", found.summary
    assert found.details["confidence"] == "likely"  # nothing in it says torch.load or pickle was the caller
    assert f"pathlib {OTHER} was unpickled" in found.summary and "str(path)" in found.fix


# as torch.load prints it for ultralytics/yolov5 weights trained on Windows and loaded on Linux
def test_through_torch_load_it_is_certain_and_names_the_class_to_map():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "detect.py", line 12, in <module>\n'
        '    model = torch.load("best.pt", map_location="cpu")["model"]\n'
        '  File "/usr/local/lib/python3.10/site-packages/torch/serialization.py", line 1026, in load\n'
        "    return _load(opened_zipfile,\n"
        '  File "/usr/local/lib/python3.10/site-packages/torch/serialization.py", line 1438, in _load\n'
        "    result = unpickler.load()\n"
        '  File "/usr/lib/python3.10/pathlib.py", line 962, in __new__\n'
        '    raise NotImplementedError("cannot instantiate %r on your system"\n'
        "NotImplementedError: cannot instantiate 'WindowsPath' on your system\n"
    )
    assert found.id == "log.pickled_platform_path" and found.details["confidence"] == "certain", found.summary
    assert "pathlib.WindowsPath = pathlib.PosixPath" in found.fix and "detect.py:12" in found.fix


# fastai/fastai#1482 (tests/fixtures/corpus/train/7225.txt): quoted in prose, data pickled on Linux read on Windows
def test_quoted_in_a_sentence_it_names_the_windows_side():
    found = explained(
        "I have trained models in Linux system. But when i try to load the data_lm.pkl on windows, i get the below "
        "error:\n\n'cannot instantiate 'PosixPath' on your system'\n"
    )
    assert found.id == "log.pickled_platform_path", found.summary
    assert "on Windows" in found.summary and "pathlib.PosixPath = pathlib.WindowsPath" in found.fix
