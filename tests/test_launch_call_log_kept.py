"""The watchdog's call log (``rank<N>.calls``) outlives the straggler watch standing down. Under ``launch
--watchdog`` the straggler watch runs where rank 0's judge gets a core of its own; where it does not, the watch
stands down after its first window and puts back the collectives it wrapped. It was started before the call log
and so had wrapped torch's own functions: the call log's wrappers went with them, every later collective was
unnoted, and a failed job lost its sizes (session 43, pytorch/examples' DDP tutorial with an all_gather of the last
batch's predictions, 32 rows on rank 0 and 31 on rank 1: "rank 1 died without a Python error ... gloo aborted it",
where the shapes and the fix are now said; ``explain`` of the kept folder read it as a warning, for no rank is
blamed, and exited 0: it is the job's failure). One core for the whole job, so that no core is spare."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

SCRIPT = """
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(15):  # past the straggler watch's first window of 10 steps, where it stands down
    opt.zero_grad(); model(torch.randn(8, 4)).sum().backward(); opt.step()
preds = torch.zeros(4 - rank)  # rank 1's last batch is one short
gathered = [torch.zeros_like(preds) for _ in range(2)]
dist.all_gather(gathered, preds)
dist.destroy_process_group()
"""


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity"), reason="one core for the job: Linux's sched_setaffinity"
)
def test_a_failed_jobs_sizes_are_read_after_the_straggler_watch_stood_down(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    core = min(os.sched_getaffinity(0))
    done = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "launch", "--standalone", "--nproc-per-node", "2",
         "--watchdog", "30", "train.py"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, capture_output=True, text=True,
        timeout=120, cwd=tmp_path, preexec_fn=lambda: os.sched_setaffinity(0, {core}),
    )  # fmt: skip
    output = done.stdout + done.stderr
    kept = re.search(r"What each rank left: (\S+)/rank\*", output)
    # the kept folder read again: a failure, though no rank is blamed (it was a warning, exit status 0)
    explained = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "explain", kept[1] if kept else str(tmp_path / "none")],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if kept:  # the folder the failed job's report names, kept for the user: not for a test
        shutil.rmtree(kept[1], ignore_errors=True)
    assert done.returncode != 0, output[-3000:]
    assert "has different sizes on different ranks" in output, output[-3000:]
    assert "all_gather #" in output and "[4] Float (train.py:11 in <module>)" in output, output[-3000:]
    assert "[3] Float (train.py:11 in <module>)" in output, output[-3000:]
    assert explained.returncode == 1 and "has different sizes on different ranks" in explained.stdout, (
        explained.stdout + explained.stderr
    )
