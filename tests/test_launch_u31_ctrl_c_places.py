"""A hang stopped with Ctrl-C under `torchdoctor launch`: the launch said only "torchdoctor: interrupted", where
torchrun's ranks print their KeyboardInterrupt tracebacks (found for session 31 with accelerate's loop, rank 1's
dataset stuck in a read). Each rank now says where its script was. The script is pytorch/examples' DDP tutorial
reduced as test_explain_u30_ctrl_c_places has it, run by a real launch whose process group is sent SIGINT as a
terminal sends it."""

from __future__ import annotations

from helpers import launch_interrupted_once_hanging
from test_explain_u30_ctrl_c_places import SCRIPT


def test_a_hang_stopped_with_ctrl_c_under_launch_on_this_torch_says_where_each_rank_was(tmp_path):
    returncode, output = launch_interrupted_once_hanging(tmp_path, SCRIPT)
    assert returncode == 130 and "torchdoctor: interrupted" in output, output[-3000:]
    assert "torchdoctor: rank 1 was interrupted at train.py:15 in __getitem__: time.sleep(3600)" in output, (
        output
    )
    assert "torchdoctor: rank 0 was interrupted at train.py:2" in output, output
