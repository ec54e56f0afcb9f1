"""pytorch/examples' minGPT-ddp (distributed/minGPT-ddp/mingpt/main.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause) with rank 1 fetching its data before ddp_setup's
init_process_group, a fetch that never ends. Started as `torchdoctor launch ... train.py`, the ranks' frames say
"train.py": `explain` on the kept folder, run from another folder, could not read the line, so it lost the condition
on the rank and the culprit's line the watchdog had named (found for session 32). The script is ddp_setup with the
fetch on 2 gloo ranks."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers import launch_two_ranks

from torchdoctor.hang.folder import folder_finding

pytestmark = pytest.mark.processes

SCRIPT = """
import os, time
import torch.distributed as dist

def ddp_setup():
    if os.environ["RANK"] == "1":
        time.sleep(600)
    dist.init_process_group(backend="gloo")

ddp_setup()
dist.destroy_process_group()
"""


def test_explain_on_the_folder_from_elsewhere_reads_the_scripts_lines_as_the_watchdog_did(tmp_path):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "2")
    kept = re.search(r"Full stacks: (\S+)/rank\*\.stack", output)
    assert returncode != 0 and kept, output[-3000:]
    try:
        assert "Culprit: rank(s) 1 at train.py:7;" in output, output[-3000:]
        assert Path.cwd() != tmp_path
        found = folder_finding(Path(kept[1]))
    finally:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert found.details["culprits"] == [1], found.summary
    assert found.details["where"] == {"file": str(tmp_path / "train.py"), "line": 7}, found.details
    assert """line 6: `if os.environ["RANK"] == "1":`""" in found.summary + found.fix, found.summary
