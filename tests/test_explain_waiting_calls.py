"""A rank left waiting in a collective its peer never made, the peer ending without an error: explain said only
"a peer closed the connection … the peer finished without an error", without the line the waiting rank was on,
which says which collective the other rank skipped. Found by planting, in pytorch/examples' FSDP2 example
(distributed/FSDP2, 2 gloo ranks), `if rank == 0: checkpointer.save(...)` around the save that gathers the full
state dict (DTensor.full_tensor(), a collective), and in its DDP example (distributed/ddp) a no_sync() on rank 0
only: the waiting rank's traceback names checkpoint.py's `full_param = sharded_param.full_tensor()` and
`loss_fn(outputs, labels).backward()`. Read from real 2-rank torchrun runs, recorded (fixtures/recorded_runs/;
benchmarks/recorded_runs.py runs them again), and as printed."""

from __future__ import annotations

import io
from functools import partial
from pathlib import Path

import pytest
from helpers import torchrun_two_ranks
from recorded import recorded_folder

from torchdoctor.explain.diagnose import explain

GATHER_ON_RANK_0 = """
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor

dist.init_process_group("gloo")
mesh = init_device_mesh("cpu", (2,))
weight = distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)])


def save(sharded):
    full = sharded.full_tensor()
    torch.save(full, "/dev/null")


if dist.get_rank() == 0:
    save(weight)
dist.destroy_process_group()
"""

NO_SYNC_ON_RANK_0 = """
import contextlib
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Linear(4, 2))
for step in range(2):
    accumulate = dist.get_rank() == 0 and step == 0
    with model.no_sync() if accumulate else contextlib.nullcontext():
        loss = model(torch.ones(3, 4)).sum(); loss.backward()
dist.destroy_process_group()
"""


def _waiting(script: str, folder: Path) -> Path:
    """``script`` on 2 gloo ranks under torchrun with a --log-dir: the folder ``folder/job`` holding the --log-dir
    folder ``logs`` and the console ``console.txt`` (stdout, then stderr)."""
    for attempt in range(2):
        # on a loaded machine gloo now and then aborts the waiting rank instead ("terminate called without an
        # active exception", SIGABRT, no traceback of the rank's): torch's timing, not what is read here; once
        # more in a fresh folder, and a second abort fails the recording
        job = folder / f"job{attempt}"
        job.mkdir()
        done = torchrun_two_ranks(job, script, "--log-dir", str(job / "logs"))
        console = done.stdout + done.stderr
        if "Connection closed by peer" in console:
            break
    assert done.returncode != 0 and "Connection closed by peer" in console, done.stderr[-2000:]
    (job / "train.py").unlink()  # the script is in this module; the recording is what the job left
    (job / "console.txt").write_text(console, encoding="utf-8")
    return job


RECORDED_RUNS = {
    "waiting_calls_full_tensor_on_rank_0": partial(_waiting, GATHER_ON_RANK_0),
    "waiting_calls_no_sync_on_rank_0": partial(_waiting, NO_SYNC_ON_RANK_0),
}


@pytest.mark.parametrize(
    ("recording", "line", "advice"),
    [
        (
            "waiting_calls_full_tensor_on_rank_0",
            "full = sharded.full_tensor()",
            "Gathering a full state dict is a collective",
        ),
        # rank 1 waits in its second step's forward (DDP's bucket rebuild) or backward, as the ranks' timing goes
        ("waiting_calls_no_sync_on_rank_0", "loss = ", "no_sync() on every rank or on none"),
    ],
    ids=["full_tensor_on_rank_0", "no_sync_on_rank_0"],
)
def test_the_waiting_ranks_line_is_named_on_two_gloo_ranks(recording, line, advice):
    job = recorded_folder(recording)
    console = (job / "console.txt").read_text(encoding="utf-8")
    assert "Connection closed by peer" in console, console[-2000:]
    for given in (str(job / "logs"), "-"):
        found = explain([given], stdin=_bytes(console))[0]
        assert found.id == "log.peer_closed", found.summary
        assert "was waiting in the collective made at" in found.summary and line in found.summary, (
            found.summary
        )
        assert "train.py:" in found.summary, found.summary
        assert "train.py:" in found.details["frame"] and advice in found.fix, found.fix


def _bytes(text: str) -> io.BytesIO:
    return io.BytesIO(text.encode())


# a rank's log as torchrun --tee prints it: rank 0 waited in the collective of its own line 12, rank 1 quiet
WAITED = (
    "[rank0]: Traceback (most recent call last):\n"
    '[rank0]:   File "/job/train.py", line 12, in save\n'
    "[rank0]:     full = model.state_dict()\n"
    '[rank0]:   File "/venv/lib/python3.11/site-packages/torch/distributed/fsdp/api.py", line 80, in state_dict\n'
    "[rank0]:     return gather(x)\n"
    "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
    "closed by peer [127.0.0.1]:2443. This is typically caused by a remote worker crashing.\n"
)


def _folder(tmp_path, rank_0: str, rank_1: str):
    for rank, text in (("0", rank_0), ("1", rank_1)):
        (tmp_path / "attempt_0" / rank).mkdir(parents=True)
        (tmp_path / "attempt_0" / rank / "stderr.log").write_text(text)
    return explain([str(tmp_path)])


def test_a_quiet_peer_names_the_line_the_other_rank_waited_on(tmp_path):
    found = _folder(tmp_path, WAITED, "epoch 0 done\n")[0]
    assert found.id == "log.peer_closed" and "/job/train.py:12 in save" in found.summary, found.summary
    assert "Gathering a full state dict is a collective" in found.fix


def test_a_wait_in_another_call_gets_no_state_dict_or_backward_advice(tmp_path):
    found = _folder(tmp_path, WAITED.replace("model.state_dict()", "dist.all_reduce(t)"), "done\n")[0]
    assert "/job/train.py:12 in save" in found.summary
    assert "state dict" not in found.fix and "no_sync" not in found.fix


def test_a_peer_that_failed_with_its_own_error_is_not_said_to_have_skipped_the_call(tmp_path):
    # the peer raised: its error leads, and the waiting rank's line is not offered as a call it never made
    found = _folder(tmp_path, WAITED, "[rank1]: ValueError: planted on rank 1\n")
    assert found[0].id != "log.peer_closed"
    assert all("never made that call" not in f.fix for f in found), [f.fix for f in found]


def test_one_ranks_log_alone_does_not_say_the_peer_skipped_the_call():
    # only the waiting rank's output, no torchrun summary: the peer may as well have crashed
    found = explain(["-"], stdin=_bytes(WAITED))[0]
    assert found.id == "log.peer_closed" and "never made that call" not in found.fix, found.fix


# Found on the no_sync run's console: a traceback header (it ends in ":") is read with the two lines after it (the
# first frame and its source line), which were then missing from the lines above the next ones, so an exception
# whose line follows a source line ending in ":" (`if ...:`) lost the traceback's first frame: the user's own
# line, where it is the only one (a script's <module>), and the library's frame was named instead.
def test_a_tracebacks_first_frame_is_kept_when_the_innermost_source_line_ends_in_a_colon():
    found = explain(
        ["-"],
        stdin=_bytes(
            "Traceback (most recent call last):\n"
            '  File "/job/train.py", line 3, in <module>\n'
            "    main()\n"
            '  File "/venv/lib/python3.11/site-packages/foo/bar.py", line 10, in run\n'
            "    if check(x):\n"
            "ValueError: planted\n"
        ),
    )[0]
    assert found.details["frame"] == "/job/train.py:3 in <module>", found.summary
