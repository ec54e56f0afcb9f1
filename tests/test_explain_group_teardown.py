"""A distributed call after this process destroyed its process group, found by planting it in pytorch/examples'
DDP tutorial (multigpu_torchrun.py, 2 gloo ranks under torchrun: rank 0 calls destroy_process_group, then both
call barrier). torch's "Default process group has not been initialized" under the "[rank0]:" prefix that
init_process_group's excepthook adds is that, not a script started without a launcher. Read from a real process
on this torch, and as printed."""

from __future__ import annotations

import io

import pytest
from explaining import explained
from rank_runner import run_script

from torchdoctor.explain.diagnose import explain

SCRIPT = """
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
    dist.destroy_process_group()
    dist.barrier()


main()
"""


def test_a_barrier_after_destroy_process_group_on_this_torch_is_the_destroyed_group(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    done = run_script([str(script)], timeout=60)
    assert done.returncode != 0 and "[rank0]: ValueError: Default process group" in done.stderr, done.stderr
    found = explain(["-"], stdin=io.BytesIO(done.stderr.encode()))[0]
    assert found.id == "log.process_group_destroyed", (found.summary, done.stderr[-2000:])
    assert (
        "destroy_process_group" in found.summary and "on every rank, after the last collective" in found.fix
    )


PREFIXED = "[rank0]: ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n"


@pytest.mark.usefixtures("every_message_seen")
@pytest.mark.parametrize("line", [PREFIXED, "[default0]:" + PREFIXED])
def test_torchs_rank_prefix_on_the_message_reads_as_a_destroyed_group_likely(line):
    found = explained(line)
    assert found.id == "log.process_group_destroyed" and found.details["confidence"] == "likely"
    assert "log.not_launched_distributed" not in (
        f.id for f in explain(["-"], stdin=io.BytesIO(line.encode()))
    )


@pytest.mark.parametrize(
    "line",
    [
        # no prefix: a plain python process, or a call before init_process_group
        PREFIXED.removeprefix("[rank0]: "),
        # torchrun's --tee prefix alone: launched, but the process never made its group
        "[default0]:" + PREFIXED.removeprefix("[rank0]: "),
    ],
)
def test_the_message_without_torchs_prefix_is_not_a_destroyed_group(line):
    found = explained(line)
    assert found.id == "log.not_launched_distributed", found.summary


def test_a_spawned_dataloader_workers_call_is_named_beside_it():
    found = explained(
        "[rank0]: ValueError: Caught ValueError in DataLoader worker process 0.\n"
        "[rank0]: Original Traceback (most recent call last):\n" + PREFIXED
    )
    assert found.id == "log.process_group_destroyed"
    assert "log.not_launched_distributed" in found.details.get("alternatives", []), found.summary
