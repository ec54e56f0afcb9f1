"""Debug mode checks torch's functional collectives, which tensor parallelism and DTensor call
(``torch.distributed._functional_collectives``): before, two ranks asking a DTensor's full tensor from
different placements (an all-gather on one, an all-reduce on the other) hung in gloo until killed; now both
raise at once, naming the two operations and each rank's line. In this process: the wrapping; real job:
tests/straggler_tensor_parallel.py (DIVERGE=1) on 2 gloo ranks under ``torchdoctor launch --debug``."""

import os
import subprocess
import sys
from pathlib import Path

import torch
import torch.distributed._functional_collectives as funcol

from torchdoctor.distributed import debug, functional
from torchdoctor.distributed.messages import mismatch_message

SCRIPT = Path(__file__).parent / "straggler_tensor_parallel.py"
FUNCOL = "torch.distributed._functional_collectives"


def test_enable_wraps_the_functional_collectives_and_wait_tensor_and_disable_puts_them_back():
    names = [*functional.collectives(funcol), "wait_tensor"]
    assert {"all_reduce", "all_gather_single", "reduce_scatter_single"} <= set(names)
    originals = {name: getattr(funcol, name) for name in names}
    debug.enable()
    try:
        assert all(getattr(funcol, name).__torchdoctor_original__ is originals[name] for name in names)
    finally:
        debug.disable()
    assert all(getattr(funcol, name) is originals[name] for name in names)


def test_a_functional_all_gather_on_another_dimension_is_named_as_a_dimension_mismatch():
    names = functional.parameters(funcol.all_gather_single)
    entries = {
        rank: {
            "operation": f"{FUNCOL}.all_gather_single",
            "site": "train.py:9 in main",
            **functional.describe(functional.arguments(names, (torch.ones(4, 2), dim, None), {}), names),
        }
        for rank, dim in ((0, 0), (1, 1))
    }
    message = mismatch_message(entries)
    assert "due to dimension mismatches" in message
    assert "  - Process 0: 0\n  - Process 1: 1" in message


def test_ranks_asking_a_dtensors_full_tensor_from_different_placements_both_name_the_two_collectives(
    tmp_path,
):
    done = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "launch", "--standalone", "--nproc-per-node", "2", "--debug",
         str(SCRIPT)],
        env={**os.environ, "DIVERGE": "1", "STEPS": "6", "TORCHDOCTOR_DEBUG_TIMEOUT": "30"},
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode != 0
    for rank in (0, 1):
        said = [
            line.split(": ", 1)[1] for line in done.stderr.splitlines() if line.startswith(f"[rank{rank}]: ")
        ]
        text = "\n".join(said)
        assert "processes called different operations at the same point" in text, done.stderr[-3000:]
        assert f"  - Process 0: `{FUNCOL}.all_gather_single`" in text, text
        assert f"  - Process 1: `{FUNCOL}.all_reduce`" in text, text
        assert "  - Process 0: " in text and "straggler_tensor_parallel.py:74 in main" in text, text
