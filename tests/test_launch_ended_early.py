"""A rank that ends while the others still train (fewer batches): `torchdoctor launch` names it after the run.

Rank 0 waits in DDP's gradient all-reduce, inside ``backward()`` (C++: no Python collective debug mode could
wrap), and fails on gloo's closed connection when rank 1's script returns; torchrun's summary blames rank 0.
What each worker noted as its script ended (``rank<N>.done``, the watchdog's own note) names rank 1.
"""

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

from torchdoctor.explain.diagnose import explain
from torchdoctor.hang import supervise
from torchdoctor.hang.failure import ended_early, failure_verdict

# pytorch/examples' distributed/ddp-tutorial-series/multigpu_torchrun.py, cut to its loop, on CPU and gloo;
# rank 1 has fewer batches. With JOIN, the loop runs under DDP's `model.join()`, as its fix says.
UNEVEN = textwrap.dedent(
    """
    import contextlib, os, sys
    import torch
    import torch.nn.functional as F
    from torch.distributed import destroy_process_group, init_process_group
    from torch.nn.parallel import DistributedDataParallel as DDP

    init_process_group(backend="gloo")
    rank = int(os.environ["RANK"])
    model = DDP(torch.nn.Linear(20, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    batches = [(torch.rand(8, 20), torch.rand(8, 1)) for _ in range(6 if rank == 0 else 3)]
    with model.join() if "--join" in sys.argv else contextlib.nullcontext():
        for source, targets in batches:
            optimizer.zero_grad()
            loss = F.mse_loss(model(source), targets)
            loss.backward()
            optimizer.step()
    destroy_process_group()
    """
)


def launch(*args):
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", "launch", "--nproc-per-node", "2", *args],
        capture_output=True, text=True, env=dict(os.environ, COLUMNS="200"), timeout=120,
    )  # fmt: skip


def test_a_rank_that_ends_while_the_other_trains_is_named_by_launch_debug(tmp_path):
    script = tmp_path / "uneven.py"
    script.write_text(UNEVEN)
    result = launch("--debug", str(script))
    assert result.returncode == 1, result.stderr
    said = result.stderr.split("torchdoctor: failed: ")[-1]
    assert said.startswith(
        "rank 1 ended while rank 0 still trained: rank 1's script returned (exit status 0)"
    )
    assert (
        "rank 0 was in collective #" in said and "backward() (under DDP, the gradients' all-reduce)" in said
    )
    assert f"at {script}:17 in <module>, inside the loop at {script}:14-18" in said, said
    assert "DistributedSampler(drop_last=True)" in said and "`with model.join():`" in said
    assert "Culprit: rank(s) 1" in said
    # the console output read back: the verdict leads, the survivor's lost peer and torchrun's summary follow
    found = explain(["-"], stdin=io.BytesIO(result.stderr.encode()))
    assert found[0].id == "log.ranks_ended_early", [(f.id, f.summary) for f in found]
    assert found[0].summary.startswith("likely: rank 1 ended while rank 0 still trained")
    assert f"The loop rank 1 left is at {script}:" in found[0].fix
    assert all(f.details.get("consequence_of") == "log.ranks_ended_early" for f in found[1:]), found


def test_uneven_batches_under_model_join_finish_and_launch_says_nothing(tmp_path):
    script = tmp_path / "uneven.py"
    script.write_text(UNEVEN)
    result = launch("--debug", str(script), "--join")
    assert result.returncode == 0, result.stderr
    assert "torchdoctor:" not in result.stderr


# -- the verdict itself, from the files the workers leave ----------------------------------------------------


def _done(folder, rank, **said):
    (folder / f"rank{rank}.done").write_text(json.dumps(said) if said else "")


PEER_GONE = "RuntimeError: [gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:30593."


def test_a_rank_that_returned_while_the_other_lost_its_peer_is_the_culprit(tmp_path):
    _done(tmp_path, 0, error=PEER_GONE, frames=[["/x/train.py", 9, "main"]], collectives=10)
    _done(tmp_path, 1, collectives=7)
    found = ended_early(tmp_path, [0, 1])
    assert found.kind == "ended_early" and found.culprits == [1]
    assert found.text.startswith(
        "rank 1 ended while rank 0 still trained: rank 1's script returned (exit status 0), after 7 "
        "collectives of the default group; rank 0 was in collective #10 of the default group at "
        "/x/train.py:9 in main, and failed as its consequence (Connection closed by peer)."
    )
    assert failure_verdict(tmp_path).text == found.text  # the watchdog's verdict of a failed job says it too


def test_the_culprits_place_is_the_loop_it_left_never_the_survivors_line_alone(tmp_path):
    # a save under `if rank == 0:` (pytorch/examples' FSDP2 example): rank 1 never ran line 4, so the culprit line
    # names no place of rank 1's ("Culprit: rank(s) 1 at example.py:109" said rank 0's line was rank 1's)
    script = tmp_path / "train.py"
    script.write_text("for step in range(3):\n    train(step)\nif rank == 0:\n    save(model)\n")
    _done(tmp_path, 0, error=PEER_GONE, frames=[[str(script), 4, "<module>"]], collectives=4)
    _done(tmp_path, 1, collectives=3)
    found = ended_early(tmp_path, [0, 1])
    assert f"rank 0 was in collective #4 of the default group at {script}:4" in found.text
    # the place is the condition both ranks ran and only rank 0 entered (u30), not rank 0's line inside it
    assert f"a call made under a condition on the rank at {script}:3 (`if rank == 0:`)" in found.text
    assert supervise.failed_lines(found)[-1] == f"Culprit: rank(s) 1 at {script}:3."
    # where the survivor waited inside a loop, that loop is the one the culprit left: its place
    _done(tmp_path, 0, error=PEER_GONE, frames=[[str(script), 2, "<module>"]], collectives=2)
    found = ended_early(tmp_path, [0, 1])
    assert supervise.failed_lines(found)[-1] == f"Culprit: rank(s) 1 at {script}:1."


def test_the_collective_without_a_users_line_reads_whole(tmp_path):
    torch_c10d = "/venv/site-packages/torch/distributed/distributed_c10d.py"
    _done(tmp_path, 0, error=PEER_GONE, frames=[[torch_c10d, 4394, "all_gather_single"]], collectives=271)
    _done(tmp_path, 1, collectives=270)
    assert (
        "#271 of the default group, torch.distributed.all_gather_single, and failed as its consequence"
        in (ended_early(tmp_path, [0, 1]).text)
    )


def test_the_users_line_is_kept_under_a_library_more_than_twelve_frames_deep():
    # FSDP2's forward hooks put 12 frames of torch between the user's `model(x)` and the all-gather it waits on
    from torchdoctor.hang.source import Frame
    from torchdoctor.hang.worker import FRAMES_KEPT, _kept

    library = "/venv/lib/python3.11/site-packages/torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py"
    users = [Frame("/home/me/train.py", line, "main") for line in (40, 41)]
    frames = [Frame("<frozen runpy>", 1, "_run_code"), *users] + [Frame(library, n, "f") for n in range(14)]
    assert _kept(frames) == users + frames[-FRAMES_KEPT:]


def test_sys_exit_is_said_with_its_status(tmp_path):
    _done(tmp_path, 0, error=PEER_GONE)
    _done(tmp_path, 1, exit_status=3)
    assert "rank 1's script called sys.exit(3) (exit status 3);" in ended_early(tmp_path, [0, 1]).text


@pytest.mark.parametrize(
    "ranks, codes",
    [
        ([0, 1, 2], None),  # rank 2 left nothing: killed, perhaps; nobody can say who came first
        ([0, 1, 2], {2: -9}),  # killed by SIGKILL: that is the story, not the rank that returned
    ],
)
def test_no_claim_when_a_rank_left_nothing(tmp_path, ranks, codes):
    _done(tmp_path, 0, error=PEER_GONE)
    _done(tmp_path, 1)
    assert ended_early(tmp_path, ranks, codes) is None


def test_a_rank_stopped_by_torchrun_after_the_failure_is_no_cause(tmp_path):
    _done(tmp_path, 0, error=PEER_GONE)
    _done(tmp_path, 1)
    assert ended_early(tmp_path, [0, 1, 2], {2: -15}).culprits == [1]


def test_no_claim_when_a_rank_failed_with_an_error_of_its_own(tmp_path):
    _done(tmp_path, 0, error="ValueError: bad batch")
    _done(tmp_path, 1)
    assert ended_early(tmp_path, [0, 1]) is None
