"""A known failure names the line of the user's code its traceback came through, as an unknown one does: the
fix ends "Your code reached it at train.py:42 in main: loss.backward()." (details: ``frame``, ``code``). Only
for a cause, only from a traceback that shows a frame of the user's (the real run: test_explain_collective_faults)."""

import io

import pytest
from explaining import explained

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")

READY_TWICE = (
    "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following "
    "reasons: 1) Use of a module parameter outside the `forward` function.\n"
)
THROUGH_THE_USERS_CODE = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/train.py", line 42, in main\n'
    "    loss.backward()\n"
    '  File "/usr/lib/python3.11/site-packages/torch/_tensor.py", line 521, in backward\n'
    "    torch.autograd.backward(\n" + READY_TWICE
)


def test_a_known_error_names_the_users_line_its_traceback_came_through():
    found = explained(THROUGH_THE_USERS_CODE)
    assert found.id == "log.ddp_ready_twice"
    assert (
        found.details["frame"] == "/home/me/train.py:42 in main"
        and found.details["code"] == "loss.backward()"
    )
    assert (
        found.fix.splitlines()[-1] == "Your code reached it at /home/me/train.py:42 in main: loss.backward()."
    )


def test_a_known_error_without_a_traceback_names_no_line():
    found = explained(READY_TWICE)
    assert found.id == "log.ddp_ready_twice" and "frame" not in found.details
    assert "Your code reached it" not in found.fix


def test_a_traceback_only_through_libraries_names_no_line_of_the_users():
    only_torch = THROUGH_THE_USERS_CODE.replace(
        "/home/me/train.py", "/usr/lib/python3.11/site-packages/torch/x.py"
    )
    found = explained(only_torch)
    assert found.id == "log.ddp_ready_twice" and "Your code reached it" not in found.fix


def test_a_line_far_from_the_traceback_is_not_said_to_come_through_it():
    # the traceback of another error, and the known message forty lines below it
    other = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/train.py", line 7, in <module>\n'
        "    import wandb\n"
        "ModuleNotFoundError: No module named 'wandb'\n"
    )
    text = other + "step\n" * 40 + READY_TWICE
    found = [f for f in explain(["-"], stdin=io.BytesIO(text.encode())) if f.id == "log.ddp_ready_twice"]
    assert found and "Your code reached it" not in found[0].fix
