"""The forty-first sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1867-1876)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


def traceback(code: str, error: str) -> str:
    """A training script's traceback ending on ``code`` (its source line) and ``error``."""
    return (
        "Traceback (most recent call last):\n"
        '  File "train_rrdbnet.py", line 22, in <module>\n'
        f"    {code}\n"
        f"{error}\n"
    )


# CPython 3.6's import_from: the name only (Lornatang/ESRGAN-PyTorch#22, torch 1.4 without torch.cuda.amp)
BARE_TORCH = traceback("from torch.cuda import amp", "ImportError: cannot import name 'amp'")
# the same line for a name the releases' table has: NumPy 2.0 removed float_ (api_history.tsv)
BARE_TABLE = traceback("from numpy import float_, int_", "ImportError: cannot import name 'float_'")
# MMEngine 0.x's build_from_cfg around ConfigDict's AttributeError (open-mmlab/mmsegmentation#2584, backticks gone)
CONFIG_KEY = (
    "AttributeError: class Mask2FormerHead in mmseg/models/decode_heads/mask2former_head.py: 'ConfigDict' object "
    "has no attribute 'transformerlayers'\n"
)
# the same wrapper around CPython's TypeError for a key the class does not take
CONFIG_KEYWORD = (
    "TypeError: class `RTMDetHead` in mmdet/models/dense_heads/rtmdet_head.py: RTMDetHead.__init__() got an "
    "unexpected keyword argument 'exp_on_reg'\n"
)


@pytest.mark.parametrize(
    ("log", "confidence", "fix_holds", "summary_holds"),
    [
        pytest.param(
            BARE_TORCH,
            "likely",
            ("pip show torch", "torch.cuda.amp"),
            "torch.cuda has no amp",
            id="bare torch",
        ),
        pytest.param(BARE_TABLE, "certain", ("numpy",), "float_", id="bare, in the table"),
        pytest.param(
            CONFIG_KEY, "likely", ("dev-3.x", "mminstall.txt"), "'transformerlayers'", id="config key"
        ),
        pytest.param(
            CONFIG_KEYWORD, "likely", ("mim install 'mmdet==",), "'exp_on_reg'", id="config keyword"
        ),
    ],
)
def test_the_release_the_code_or_config_was_written_for_is_read(log, confidence, fix_holds, summary_holds):
    found = lead(log)
    assert found.id == "log.dependency_version" and found.details["confidence"] == confidence
    assert all(text in found.fix for text in fix_holds) and summary_holds in found.summary
    if confidence == "likely":
        assert found.summary.startswith("likely:") and " or " in found.summary  # the other reading is named


# near-misses: the project's own modules and configs, or the line without what makes it a release's
@pytest.mark.parametrize(
    "log",
    [
        # a relative import of the project's own module
        traceback("from .utils import amp", "ImportError: cannot import name 'amp'"),
        # a module of the project's own, not a package of the tables or libraries
        traceback("from mytools.cuda import amp", "ImportError: cannot import name 'amp'"),
        # the import line names another name than the one refused
        traceback("from torch.cuda import amp", "ImportError: cannot import name 'autocast'"),
        # a script reading its own config, outside MMEngine's build_from_cfg
        "AttributeError: 'ConfigDict' object has no attribute 'work_dir'\n",
    ],
)
def test_a_near_miss_is_not_read_as_another_release(log):
    found = lead(log)
    assert found.id != "log.dependency_version"
