"""A rank that returns early (before the training loop) while the other waits in DDP's all-reduce: given the
--log-dir folder, explain said only "a peer closed the connection; the cause is not in this log" and told the user
to pass the folder they had passed. Every rank's log is there and the peer's shows no error: that is the
finding. Found by planting `if rank == 1: return` in pytorch/examples' DDP tutorial (multigpu_torchrun.py);
read from a real 2-rank torchrun, its --log-dir recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs
it again), and as printed."""

from __future__ import annotations

from pathlib import Path

from helpers import torchrun_two_ranks
from recorded import recorded_folder

from torchdoctor.explain.diagnose import explain

SCRIPT = """
import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
if os.environ["RANK"] == "1":
    raise SystemExit(0)  # this rank leaves early, without an error
dist.all_reduce(torch.ones(3))
"""

CLOSED = (
    "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
    "closed by peer [127.0.0.1]:2443. This is typically caused by a remote worker crashing.\n"
)


def run(folder: Path) -> Path:
    done = torchrun_two_ranks(folder, SCRIPT, "--log-dir", str(folder / "runs"))
    assert done.returncode != 0, (done.stdout + done.stderr)[-2000:]
    return folder / "runs"  # what the test read: torchrun's --log-dir, one folder a rank


RECORDED_RUNS = {"quiet_peer_log_dir": run}


def test_a_log_dir_where_the_peer_shows_no_error_says_so():
    found = explain([str(recorded_folder("quiet_peer_log_dir"))])[0]
    assert found.id == "log.peer_closed", found.summary
    assert "the log of rank 1 is here and shows no error" in found.summary and "fewer collective" in found.fix


def test_rank_folders_as_written_name_the_quiet_rank(tmp_path):
    for rank, text in (("0", CLOSED), ("1", "[GPU1] Epoch 0 | Batchsize: 32 | Steps: 32\n")):
        (tmp_path / "attempt_0" / rank).mkdir(parents=True)
        (tmp_path / "attempt_0" / rank / "stderr.log").write_text(text)
    found = explain([str(tmp_path)])[0]
    assert found.id == "log.peer_closed" and "rank 1 is here and shows no error" in found.summary


def test_a_peer_whose_log_shows_its_error_is_not_called_quiet(tmp_path):
    for rank, text in (("0", CLOSED), ("1", "[rank1]: ValueError: planted on rank 1\n")):
        (tmp_path / "attempt_0" / rank).mkdir(parents=True)
        (tmp_path / "attempt_0" / rank / "stderr.log").write_text(text)
    found = explain([str(tmp_path)])
    assert all("shows no error" not in f.summary for f in found), [f.summary for f in found]


def test_a_peer_whose_log_shows_only_a_timeout_is_not_called_quiet(tmp_path):
    """A peer that timed out (a victim's error, no cause) still shows an error: explain said of a console where
    rank 1 printed gloo's recv timeout that 'the log of rank 1 is here and shows no error'."""
    timed_out = (
        "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
        "1800000ms for recv operation to complete\n"
    )
    (tmp_path / "console.log").write_text(CLOSED + timed_out)
    found = explain([str(tmp_path / "console.log")])
    # rank 1 gave up on its recv and closed its connections: rank 0's closed connection follows its timeout
    assert [f.id for f in found][:2] == ["log.collective_timeout", "log.peer_closed"], [f.id for f in found]
    assert all("shows no error" not in f.summary for f in found), [f.summary for f in found]
