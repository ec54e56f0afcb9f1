"""pytorch/examples' minGPT-ddp (distributed/minGPT-ddp/mingpt/main.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with its ddp_setup passing world_size=3 to
init_process_group on a launch of 2 ranks: both wait in the rendezvous for a third. The watchdog said "the ranks
agree and none is behind, so the device or the network is suspected" and sent the user to `torchdoctor net`
(found for session 32). The script is ddp_setup alone on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import launch_two_ranks

pytestmark = pytest.mark.processes

SCRIPT = """
import os
import torch.distributed as dist

def ddp_setup():
    dist.init_process_group(backend="gloo", world_size=3, rank=int(os.environ["RANK"]))

ddp_setup()
dist.destroy_process_group()
"""


def test_every_rank_waiting_in_init_process_group_names_the_world_size_it_passes(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    if kept:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "torchdoctor: hang" in output, output[-3000:]
    assert "device or the network is suspected" not in output, output[-3000:]
    assert "every rank (2) waits in torch.distributed.init_process_group at train.py:6" in output, output[
        -3000:
    ]
    assert "The call passes world_size, rank itself" in output and "must make world_size 2" in output
