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
    blob = pickle.dumps(pathlib.PurePosixPath("runs/exp1"), protocol=0).replace(
        b"PurePosixPath", OTHER.encode()
    )
    try:
        pickle.loads(blob)
    except NotImplementedError:  # pathlib.UnsupportedOperation (3.13+) is one too
        return traceback.format_exc()
    raise AssertionError(f"{OTHER} was made on {sys.platform}")


def test_this_pythons_own_error_reads_as_a_path_pickled_elsewhere():
    log = _unpickled_from_the_other_system()
    assert f"cannot instantiate '{OTHER}' on your system" in log, log
    found = explained(log)
    assert found.id == "log.pickled_platform_path", found.summary
    # its own traceback shows the caller: pickle.loads (the frame above pathlib's), as conclusive as torch.load's
    assert found.details["confidence"] == "certain"
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


# the same error from the user's own line making the other system's class is no saved file: not this reading, nor
# made certain by a torch.load elsewhere in the log (the error's own traceback decides)
OWN_CALL = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/prep.py", line 9, in <module>\n'
    "    root = WindowsPath(args.data_dir)\n"
    '  File "/usr/lib/python3.10/pathlib.py", line 962, in __new__\n'
    '    raise NotImplementedError("cannot instantiate %r on your system"\n'
    "NotImplementedError: cannot instantiate 'WindowsPath' on your system\n"
)


def test_the_users_own_windowspath_call_is_not_a_pickled_path():
    for log in (OWN_CALL, "resuming: ckpt = torch.load(args.resume)\n" + OWN_CALL):
        found = explained(log)
        assert found.id != "log.pickled_platform_path", found.summary


def test_a_torch_load_elsewhere_in_the_log_does_not_make_a_quoted_error_certain():
    found = explained(
        "state = torch.load('ckpt.pt') worked on Linux; on Windows loading data_lm.pkl fails:\n"
        "NotImplementedError: cannot instantiate 'PosixPath' on your system\n"
    )
    assert found.id == "log.pickled_platform_path" and found.details["confidence"] == "likely", found.summary


# a notebook's traceback (IPython's "File path:line, in function" frames): torch.load's frames there, certain; the
# cell's own WindowsPath(...) call, no reading of this kind
def test_a_notebooks_traceback_shows_the_load_or_the_cells_own_call():
    pathlib_frame = (
        "File /usr/lib/python3.10/pathlib.py:962, in Path.__new__(cls, *args, **kwargs)\n"
        '--> 962     raise NotImplementedError("cannot instantiate %r on your system"\n'
        "\n"
        "NotImplementedError: cannot instantiate 'WindowsPath' on your system\n"
    )
    loaded = (
        "NotImplementedError                       Traceback (most recent call last)\n"
        "Cell In[3], line 2\n"
        '----> 2 model = torch.load("best.pt", map_location="cpu")\n'
        "\n"
        "File /usr/local/lib/python3.10/site-packages/torch/serialization.py:1438, in _load(zip_file, map_location)\n"
        "-> 1438 result = unpickler.load()\n"
        "\n"
    )
    made = (
        "NotImplementedError                       Traceback (most recent call last)\n"
        "Cell In[3], line 2\n"
        '----> 2 root = WindowsPath("C:/data")\n'
        "\n"
    )
    found = explained(loaded + pathlib_frame)
    assert found.id == "log.pickled_platform_path" and found.details["confidence"] == "certain", found.summary
    assert explained(made + pathlib_frame).id != "log.pickled_platform_path"
