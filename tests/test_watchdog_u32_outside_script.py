"""A run that succeeds is not called hung while a rank is outside its script: a library's clean-up of an object the
script leaves (here weakref.finalize, as writers and loggers flush) runs as the script's names go, after its last
line and before the rank's note that it returned, with no line of the script on the stack. The watchdog stopped
such a run ("not in a collective", the only frames runpy's and the clean-up's; seen in session 31 as a rank whose
only frame was runpy.run_path, reproduced for session 32)."""

from __future__ import annotations

import pytest
from helpers import launch_two_ranks

pytestmark = pytest.mark.processes

SCRIPT = """
import time, weakref
import torch, torch.distributed as dist

dist.init_process_group("gloo")
total = torch.ones(1)
for step in range(3):
    dist.all_reduce(total)
weakref.finalize(total, time.sleep, 5)
print(f"trained {dist.get_rank()}", flush=True)  # one write: the two ranks share the console
"""


def test_a_clean_up_after_the_scripts_last_line_is_not_a_hang(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    assert "torchdoctor: hang" not in output, output[-3000:]
    assert returncode == 0 and "trained 0" in output and "trained 1" in output, output[-3000:]
