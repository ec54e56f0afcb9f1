"""accelerate's gather of tensors whose shape differs between ranks (sequences padded per batch) ends, on gloo,
in gloo's "op.preamble.length <= op.nbytes. 28 vs 20" and a SIGABRT: explain said the ranks ran different
collectives and named NCCL settings, where every rank ran the same gather and the fix is
accelerator.pad_across_processes. Found gathering each rank's input ids in accelerate's examples/nlp_example.py;
read from a real 2-rank torchrun on this torch, and as printed."""

from __future__ import annotations

import io

import pytest
from explaining import explained
from helpers import VENV_TORCHRUN, torchrun_two_ranks

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


@pytest.mark.skipif(VENV_TORCHRUN is None, reason="torchrun")
def test_an_uneven_gather_on_two_gloo_ranks_names_pad_across_processes(tmp_path):
    done = torchrun_two_ranks(tmp_path, SCRIPT)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-2000:]
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
