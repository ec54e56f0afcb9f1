"""pytorch/examples' tensor-parallel example (distributed/tensor_parallelism/tensor_parallel_example.py, commit
77f55b912142e11fcfdf5b530231fb9c52f181e8, BSD-3-Clause: a ToyModel of two Linear layers, ColwiseParallel then
RowwiseParallel, on a 1-D mesh), shortened as test_explain_u30_tp_inputs has it, run on 2 CPU ranks under plain
torchrun (no --debug), rank 1 given a batch of 16 rows where rank 0 has 20. gloo's size check aborts rank 1 in C++
with no Python traceback, and explain named neither the user's line nor the tensor-parallel layer (left by session
30; checked for session 31): rank 0's "Connection reset by peer" traceback names both. The job's console is
recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

from pathlib import Path

from explaining import explained
from helpers import torchrun_two_ranks
from recorded import recorded
from test_explain_u30_tp_inputs import SCRIPT

from torchdoctor.explain.kinds.gather_shapes import TP_SAME_INPUT


def run(folder: Path) -> str:
    done = torchrun_two_ranks(folder, SCRIPT)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    return output


RECORDED_RUNS = {"u31_tp_plain_gloo": run}


def test_tp_ranks_given_batches_of_different_sizes_under_torchrun_name_the_line_and_the_tp_layer():
    output = recorded("u31_tp_plain_gloo")
    assert "op.preamble.length <= op.nbytes" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.rank_divergence", found.summary
    assert "rank 0 was in a collective at" in found.summary and "model(inp).sum().backward()" in found.summary
    assert "tensor-parallel (DTensor) layer" in found.summary
    assert found.fix.startswith(TP_SAME_INPUT) and found.details["frame"].endswith(":23 in <module>"), (
        found.fix
    )
