"""One answer to "which frame is the user's code": debug mode's call site, the hang report's frames and the
flight recorder's call agree on a frame from an installed package, the user's file and torchdoctor itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import accelerate
import numpy
import pytest
import transformers

import torchdoctor
from torchdoctor.distributed.call_site import call_site
from torchdoctor.hang.places import where_it_is
from torchdoctor.hang.source import user_call
from torchdoctor.hang.stacks import RankStack, frames_of

PROBE = "def probe(call_site, frames_of, here):\n    return call_site(), frames_of(here())\n"


def installed(module) -> str:
    return os.path.realpath(module.__file__)


def deepspeed_like(tmp_path: Path) -> str:
    """A package in a site-packages folder that debug mode's old list of six did not know."""
    path = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "deepspeed" / "comm" / "comm.py"
    path.parent.mkdir(parents=True)
    path.write_text(PROBE)
    return str(path)


def users_script(tmp_path: Path) -> str:
    path = tmp_path / "train.py"
    path.write_text(PROBE)
    return str(path)


def verdicts(file: str) -> dict[str, bool]:
    """Whether each product takes a frame of ``file``, called from this (user's) test, for the user's."""
    namespace: dict = {}
    exec(compile(PROBE, file, "exec"), namespace)  # the frame of probe() is a frame of ``file``
    site, frames = namespace["probe"](call_site, frames_of, sys._getframe)
    _, shown = where_it_is(RankStack(0, frames=frames))
    return {
        "debug mode": site.rsplit(":", 2)[0] in (file, os.path.relpath(file)),
        "hang report": shown[0].file == file,
        "flight recorder": user_call(frames).file == file,
    }


@pytest.mark.parametrize(
    "where, user",
    [
        (lambda tmp: installed(transformers), False),
        (lambda tmp: installed(accelerate), False),
        (lambda tmp: installed(numpy), False),
        (deepspeed_like, False),
        (lambda tmp: os.path.realpath(torchdoctor.__file__), False),
        (users_script, True),
    ],
    ids=["transformers", "accelerate", "numpy", "deepspeed", "torchdoctor", "users-script"],
)
def test_debug_mode_and_the_hang_report_agree_on_whose_frame_it_is(tmp_path, where, user):
    said = verdicts(where(tmp_path))
    assert said == dict.fromkeys(said, user)


def test_debug_mode_names_the_users_line_past_the_library():
    namespace: dict = {}
    exec(compile(PROBE, installed(transformers), "exec"), namespace)
    site, _ = namespace["probe"](call_site, frames_of, sys._getframe)
    assert site.endswith(" in test_debug_mode_names_the_users_line_past_the_library")
    assert "test_user_frames.py:" in site
