"""A rank that ends itself (``os._exit``, a SIGKILL to itself) under ``launch --watchdog --log-dir``: the report
the launcher writes there names it, and ``torchdoctor explain LOG_DIR`` reads that report back. torchrun writes
no rank's log into --log-dir without ``--tee``, so the report (and, since session 43, the watchdog's folder kept
beside it) is all there is; it said "rank 1 ended itself with
os._exit(3) at ...", which explain did not know: "no known failure recognised" (session 43, pytorch/examples'
DDP tutorial with rank 1 leaving mid-epoch). It is now worded as every rank that died without a Python error
is, and read as one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from helpers import launch_two_ranks

SCRIPT = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
for step in range(100):
    if rank == 1 and step == 3:
        os._exit(3)  # a bad record: give up
    dist.all_reduce(torch.ones(2))
dist.destroy_process_group()
"""


def test_explain_reads_the_report_of_a_rank_that_ended_itself(tmp_path):
    logs = tmp_path / "logs"
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "30", "--log-dir", str(logs))
    assert returncode != 0, output[-3000:]
    assert "rank 1 died without a Python error (it ended itself with os._exit(3)) at train.py:7" in output, (
        output[-3000:]
    )
    explained = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "explain", str(logs)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    kept = re.search(r"What each rank left: (\S+)/rank\*", output)
    if kept:
        shutil.rmtree(kept[1], ignore_errors=True)
    said = explained.stdout
    assert explained.returncode == 1, said + explained.stderr
    # the folder kept in the log dir (session 43) leads with the same verdict; the report alone reads as rank_died
    assert "os._exit(3)" in said and "train.py:7" in said, said
    assert "(log.hang_verdict)" in said or "(log.rank_died)" in said, said
    # the report alone (the folder gone): read back as a rank that died, with its line
    from torchdoctor.explain.diagnose import explain

    for folder in logs.glob("torchdoctor-watchdog-*"):
        shutil.rmtree(folder)
    (lead, *_) = explain([str(logs)])
    assert lead.id == "log.rank_died" and "os._exit(3)" in lead.summary, (lead.id, lead.summary)
