"""`torchdoctor launch --stragglers` on the loops users train with, as they are: transformers' `Trainer`
(accelerate's wrapped optimizer) and Lightning's `Trainer` (its optimizer closure), real models built from
configs, and a plain loop over FSDP2's `fully_shard` on a DeviceMesh (its collectives started async_op=True on
the mesh's own group, timed from their waits), 2 gloo ranks, rank 1's batches 10 ms slower to build from batch
60 (tests/straggler_frameworks.py). The step is found from the optimizer's step with nothing added to the script; the slow rank is named for its
input, its victim never."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "straggler_frameworks.py"


@pytest.mark.parametrize("loop", ["trainer", "lightning", "fsdp2"])
def test_a_slow_collate_on_one_rank_is_named_input_in_a_frameworks_own_loop(tmp_path, loop):
    env = {
        **os.environ,
        "LOOP": loop,
        "SLOW_RANK": "1",
        "SLOW_MS": "10",
        "STEPS": "140",
        "OUT": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "launch", "--standalone", "--nproc-per-node", "2",
         "--stragglers", "--stragglers-dir", str(tmp_path / "stragglers"), str(SCRIPT)],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("torchdoctor: straggler: ")]
    assert lines and all(line.startswith("torchdoctor: straggler: rank 1 ") for line in lines), done.stderr[
        -3000:
    ]
    assert "input pipeline (next() " in lines[0], lines
    assert "139 steps on 2 ranks; held back by rank 1 (input" in done.stderr, done.stderr[-3000:]
    report = json.loads((tmp_path / "stragglers" / "stragglers.json").read_text())
    (straggler,) = [f for f in report["findings"] if f["id"] == "dist.straggler"]
    assert {(v["rank"], v["cause"]) for v in straggler["details"]["verdicts"]} == {(1, "input")}
