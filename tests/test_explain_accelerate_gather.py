"""accelerate's gather of tensors whose shape differs between ranks (sequences padded per batch) ends, on gloo,
in gloo's "op.preamble.length <= op.nbytes. 28 vs 20" and a SIGABRT: explain said the ranks ran different
collectives and named NCCL settings, where every rank ran the same gather and the fix is
accelerator.pad_across_processes. Found gathering each rank's input ids in accelerate's examples/nlp_example.py;
read from a real 2-rank torchrun's console, recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it
again), and as printed."""

from __future__ import annotations

import io
from pathlib import Path

from explaining import explained
from helpers import torchrun_two_ranks
from recorded import recorded

from torchdoctor.explain.diagnose import explain

SCRIPT = """
import torch
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
ids = torch.ones(2, 5 + 2 * accelerator.process_index)  # each rank's batch padded to its own longest
print(accelerator.gather(ids).shape)
"""

GLOO = (
    "[default0]:terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
    "[default0]:  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
    "op.preamble.length <= op.nbytes. 28 vs 20. Received data size doesn't match expected size. Is there a "
    "distributed collective mismatch in your code?\n"
)
FRAMES = (
    '[default1]:[rank1]:   File "/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 355, in '
    "_gpu_gather_one\n"
    "[default1]:[rank1]:     torch.distributed.all_gather(output_tensors, tensor)\n"
)


def run(folder: Path) -> str:
    done = torchrun_two_ranks(folder, SCRIPT)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-2000:]
    return output


RECORDED_RUNS = {"accelerate_gather": run}


def test_an_uneven_gather_on_two_gloo_ranks_names_pad_across_processes():
    output = recorded("accelerate_gather")
    found = explain(["-"], stdin=io.BytesIO(output.encode()))[0]
    assert found.id == "log.rank_divergence", (found.summary, output[-3000:])
    assert "NCCL" not in found.summary
    # the gather's frames are in the log only when the rank that got the reset printed its traceback before
    # torchrun stopped it (a race: in some runs the aborting rank's SIGTERM comes first); without them the log
    # does not say whose gather it was, and explain does not claim accelerate's
    if "accelerate/utils/operations.py" in output:
        assert "in accelerate's gather" in found.summary and "pad_across_processes" in found.fix
    else:
        assert "accelerate" not in found.summary


def test_the_lines_as_printed_name_the_gather_and_not_nccl():
    found = explained(FRAMES + GLOO)
    assert found.id == "log.rank_divergence"
    assert "accelerate's gather" in found.summary and "pad_across_processes" in found.fix
    assert "log.nccl_env_value" not in found.details.get("alternatives", [])


def test_gloos_size_check_without_accelerate_is_not_its_gather():
    found = explained(GLOO)
    assert found.id == "log.rank_divergence"
    assert "accelerate" not in found.summary and "pad_across_processes" not in found.fix
    assert (
        "Decide on one rank and broadcast the decision" in found.fix
    )  # the ranks may have branched: no telling


# gather_for_metrics in an eval loop over batches split by hand (a Subset per rank of 11 samples, batch_size=4, no
# accelerator.prepare of the DataLoader), under plain torchrun on 2 gloo ranks (session 32): the last batch held 2
# samples on rank 0 and 1 on rank 1. The lead said "Decide on one rank and broadcast the decision": every rank
# made the same call, with its own batch's size. The lines as that run printed them.
UNEVEN_LAST_BATCH = (
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
    "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
    "op.preamble.length <= op.nbytes. 8 vs 4. Received data size doesn't match expected size. Is there a "
    "distributed collective mismatch in your code?\n"
    "[rank0]: Traceback (most recent call last):\n"
    '[rank0]:   File "/tmp/n32/gfm_manual.py", line 18, in <module>\n'
    "[rank0]:     pred, y = accelerator.gather_for_metrics((pred, y))\n"
    '[rank0]:   File "/venv/lib/python3.11/site-packages/accelerate/accelerator.py", line 3151, in '
    "gather_for_metrics\n"
    "[rank0]:     data = self.gather(input_data)\n"
    '[rank0]:   File "/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 355, in '
    "_gpu_gather_one\n"
    "[rank0]:     torch.distributed.all_gather(output_tensors, tensor)\n"
)


def test_gather_for_metrics_over_an_uneven_last_batch_leads_with_preparing_the_dataloader_not_a_decision():
    found = explained(UNEVEN_LAST_BATCH)
    assert found.id == "log.rank_divergence"
    assert "in accelerate's gather: the ranks' tensors differ in shape" in found.summary
    assert "an uneven last batch" in found.fix and "accelerator.prepare(model, loader)" in found.fix
    assert "pad_across_processes(t, dim=0)" in found.fix
    assert "Decide on one rank" not in found.fix and "branch that not every rank takes" not in found.fix


# Lightning's bug-report model (examples/pytorch/bug_report/bug_report_model.py) on 2 CPU ranks under torchrun,
# `self.all_gather(torch.ones(2, self.global_rank + 3))` planted in its validation_step: the same gloo check
LIGHTNING_FRAMES = (
    '[default1]:[rank1]:   File "/venv/lib/python3.11/site-packages/lightning/fabric/utilities/distributed.py", '
    "line 247, in _all_gather_ddp_if_available\n"
    "[default1]:[rank1]:     gathered_tensors = all_gather(tensor, group)\n"
)


def test_lightnings_all_gather_of_different_shapes_names_its_own_fix():
    found = explained(LIGHTNING_FRAMES + GLOO.replace("28 vs 20", "16 vs 12"))
    assert found.id == "log.rank_divergence"
    assert (
        "Lightning's all_gather" in found.summary and "self.all_gather(torch.tensor(x.shape[d]" in found.fix
    )
    assert "pad_across_processes" not in found.fix
    assert "Decide on one rank" not in found.fix  # every rank made that gather
