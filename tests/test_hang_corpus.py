"""The culprit, not the victims: a few representative faults of the planted-fault corpus (tests/hang_faults),
each a real gloo job under `torchdoctor launch --watchdog`; the whole corpus is benchmarks/hang_corpus.py."""

import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torchdoctor.hang.calls import read_calls
from torchdoctor.hang.collect import START_ANSWER, silence
from torchdoctor.hang.failure import exit_codes
from torchdoctor.hang.flight_records import has_flight_recorder, read_flight_records
from torchdoctor.hang.folder import folder_verdict
from torchdoctor.hang.report import verdict
from torchdoctor.hang.source import Frame
from torchdoctor.hang.stacks import RankStack

FLIGHT_RECORDER = has_flight_recorder(torch._C._distributed_c10d)  # torch 2.4 has none to dump
FAULTS = Path(__file__).parent / "hang_faults"
sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
from hang_corpus import header, take_away  # noqa: E402 - the corpus's own reading of a fault's header


def run_fault(cli, name: str, watchdog: str = "4"):
    """Run one planted fault; its header, the launcher's stderr, the folder it kept and its verdict.json."""
    script = FAULTS / f"{name}.py"
    planted = header(script)
    result = cli(
        "launch", "--nproc-per-node", str(planted["ranks"]), "--watchdog", watchdog, str(script), timeout=200
    )
    kept = re.search(r"(?:Full stacks|What each rank left): (\S+)/rank\*", result.stderr)
    assert kept, result.stderr[-3000:]
    folder = Path(kept[1])
    return script, planted, result, folder, json.loads((folder / "verdict.json").read_text())


@pytest.fixture
def kept():
    folders = []
    yield folders
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_barrier_under_a_condition_two_frames_up_is_blamed_on_the_condition(cli, cli_here, kept):
    script, planted, result, folder, found = run_fault(cli, "snapshot_frames_up")
    kept.append(folder)
    assert result.returncode == 1
    # the culprit: rank 0, at the condition two frames above the barrier, not at the barrier itself. With the
    # flight recorder, a mismatch at one collective; without one (torch 2.4), the noted calls and the stacks
    # show the ranks in different collectives, an order
    kinds = ("mismatch",) if FLIGHT_RECORDER else ("mismatch", "order")
    assert found["culprits"] == [planted["culprit"]] and found["kind"] in kinds, found
    assert found["where"] == {"file": str(script), "line": planted["line"]}
    assert "`if self.gpu_id == 0 and epoch % self.save_every == 0:" in result.stderr
    assert (
        f"Culprit: rank(s) 0 at {script}:{planted['line']}; rank(s) 1, 2 wait because of it." in result.stderr
    )
    # the same verdict after the fact, from the folder, with explain (its `main`, here: reading a folder needs
    # no process of its own, and this one has already imported what explain reads it with)
    explained = cli_here("explain", "--json", str(folder))
    hang = next(f for f in json.loads(explained.stdout)["findings"] if f["id"] == "log.hang_verdict")
    assert hang["details"]["culprits"] == [0] and hang["details"]["where"]["line"] == planted["line"]
    # and with evidence taken away: a stack gone, dumps gone or cut for half of the ranks
    for how in ("stacks", "dumps", "cut"):
        copy = take_away(folder, planted["ranks"], how, seed=0)
        kept.append(copy)
        _, _, again = folder_verdict(copy)
        assert again.culprits in ([], [0]), (how, again)


def test_a_stopped_rank_is_named_as_stopped_not_its_victims(cli, kept):
    _, planted, result, folder, found = run_fault(cli, "frozen_rank")
    kept.append(folder)
    assert found["culprits"] == [planted["culprit"]]
    # a stopped process runs nothing until it is continued: it is not waited for past START_ANSWER
    assert f"rank 1: did not answer within {START_ANSWER:g}s: its process is stopped" in result.stderr
    assert "kill -CONT" in result.stderr


def test_a_killed_rank_is_the_culprit_of_the_failed_job_not_torchruns_first_observed(cli, kept):
    script, planted, result, folder, found = run_fault(cli, "dead_rank_kill")
    kept.append(folder)
    assert result.returncode != 0 and found["kind"] == "failed"
    assert found["culprits"] == [1] and found["where"] == {"file": str(script), "line": planted["line"]}
    assert "rank 1 died without a Python error (killed by SIGKILL" in result.stderr
    # the others are its consequence: each failed after it (lost its peer), or torchrun stopped it first
    after = re.search(r"(Ranks? [\d, ]+) failed after it, as its consequence", result.stderr)
    stopped = re.search(r"torchrun stopped (ranks? [\d, ]+)", result.stderr)
    named = [int(r) for m in (after, stopped) if m for r in re.findall(r"\d+", m.group(1))]
    assert sorted(named) == [0, 2], result.stderr
    # after the fact too; also where torchrun stopped ranks 0 and 2 before they could raise (no rank*.done):
    # only torchrun's summary, kept in the folder, tells them from ranks that died on their own
    assert folder_verdict(folder)[2].culprits == [1]
    codes = exit_codes((folder / "torchrun.exits").read_text())
    assert codes[1] == -9 and sorted(codes) == [0, 1, 2], codes
    for rank in (0, 2):
        if codes[rank] == -15:  # stopped by torchrun: as if before it could raise
            (folder / f"rank{rank}.done").unlink(missing_ok=True)
    assert folder_verdict(folder)[2].culprits == [1]


def test_a_rank_that_does_not_answer_is_described_by_its_process_state():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        sleeper.send_signal(signal.SIGSTOP)
        for _ in range(100):
            if "stopped" in silence(sleeper.pid):
                break
            subprocess.run(["sleep", "0.05"])
        assert "its process is stopped" in silence(sleeper.pid)
        assert f"kill -CONT {sleeper.pid}" in silence(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert silence(sleeper.pid) == "the process had already exited"


def test_when_every_rank_waits_in_the_same_collective_no_rank_is_blamed(tmp_path):
    import importlib.util
    import os

    torch_dir = importlib.util.find_spec("torch").submodule_search_locations[0]
    script = tmp_path / "train.py"
    script.write_text("import torch.distributed as dist\ndist.all_reduce(x)\n")
    inside = [
        Frame(str(script), 2, "<module>"),
        Frame(os.path.join(torch_dir, "distributed", "distributed_c10d.py"), 3252, "all_reduce"),
    ]
    found = verdict([RankStack(r, 10 + r, "h", list(inside)) for r in range(4)])
    assert found.culprits == [] and found.kind == "all_inside"


def test_evidence_that_does_not_read_is_named_with_its_reason(tmp_path):
    (tmp_path / "rank0.fr").write_bytes(b"\x80\x04not a pickle at all")
    (tmp_path / "rank1.fr-none").write_text("torch.distributed was never used")
    (tmp_path / "rank2.calls").write_text("{not json")
    notes: dict = {}
    assert read_flight_records(tmp_path, notes) == {}
    assert "its dump rank0.fr was not read" in notes[0][0]
    assert notes[1] == ["it wrote no dump: torch.distributed was never used"]
    assert "its call sites rank2.calls were not read" in notes[2][0]
    with pytest.raises(ValueError):
        read_calls(tmp_path / "rank2.calls")


def test_a_digest_row_that_does_not_read_is_refused_by_name_not_unpacked_wrongly():
    from torchdoctor.explain.flight_recorder.digest import from_digest

    with pytest.raises(ValueError, match="a digest row of process group 0 is not 8 fields"):
        from_digest({"rank": 1, "collectives": {"0": [[3, "all_reduce"]]}})


@pytest.mark.timeout(300)  # a launch that imports torch on 2 ranks: minutes on a loaded 2-core machine
def test_a_rank_stuck_in_destroy_process_group_past_its_unfinished_call_is_the_culprit(cli, kept):
    # rank 1's unwaited async all_reduce pairs with rank 0's barrier as collective #4; gloo's teardown waits
    # for it forever. Each rank's call sits under the same `if rank == 1: ... else:`, so the condition alone
    # cannot tell the sides apart; the stacks can: rank 1 went past #4 (its call returned unfinished) into the
    # teardown, while rank 0 still waits inside its barrier.
    script, planted, result, folder, found = run_fault(cli, "stuck_teardown")
    kept.append(folder)
    assert (
        "inside destroy_process_group, which waits for this rank's collectives still in flight"
        in result.stderr
    )
    assert "collective #4 has different operations on different ranks: rank 0: barrier #4" in result.stderr
    assert f"rank 1: all_reduce #4 [4] Float ({script}:{planted['line'] + 1} in main)" in result.stderr
    assert "Rank 1 went past collective #4 without it completing" in result.stderr
    assert found["culprits"] == [planted["culprit"]] and found["kind"] == "mismatch"
    assert found["where"] == {"file": str(script), "line": planted["line"]}
    # rank 0's dump cut in half, then gone: what rank 0 called at #4 is unknown, but rank 1's stack still
    # shows it went past its unfinished #4 into the teardown while rank 0 waits in a barrier
    dump = folder / "rank0.fr"
    if not FLIGHT_RECORDER:  # torch 2.4 writes no dump to take away
        return
    dump.write_bytes(dump.read_bytes()[: dump.stat().st_size // 2])
    for _ in ("cut", "gone"):
        _, _, again = folder_verdict(folder)
        assert again.culprits == [1] and again.where.line == planted["line"], again.text
        assert "went past collective #4 without it completing" in again.text
        dump.unlink(missing_ok=True)


# torchrun's own lines at the end of a failed 2-rank job (dead_rank_exit, 2026-11-25): the agent's log line names
# rank 1's exit code before the summary lists rank 0, stopped by torchrun, then rank 1
TORCHRUN_TAIL = """\
E1125 00:15:13.274000 22363 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 3) local_rank: 1 (pid: 22452) of binary: /work/main/.venv/bin/python
ChildFailedError: 
============================================================
/work/wt/launchfix/tests/hang_faults/dead_rank_exit.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-25_00:15:13
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 22451)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 22451
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-25_00:15:13
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : 3 (pid: 22452) 
  error_file: <N/A>
============================================================
"""  # noqa: W291 - torchrun's trailing spaces, as it wrote them


def test_each_rank_gets_its_own_exit_code_from_torchruns_summary_not_the_next_entrys():
    from torchdoctor.hang.failure import exit_codes

    # rank 0 was stopped by torchrun (a victim): were it given no code, it would be blamed with rank 1
    assert exit_codes(TORCHRUN_TAIL) == {0: -15, 1: 3}


def test_a_rank_that_skips_a_call_under_its_condition_is_blamed_not_read_as_another_order(cli, kept):
    # rank 1 skips the metric all_reduce under `if rank != 1:`; the others' next call is the one rank 1 made in its
    # place. That read as "the same collectives in another order", no rank blamed (found again in session 43): a
    # swap has both calls under the condition's two branches, here only one is under it
    script, planted, result, folder, found = run_fault(cli, "skip_same_frame")
    kept.append(folder)
    assert found["kind"] == "mismatch" and found["culprits"] == [planted["culprit"]], found
    assert found["where"] == {"file": str(script), "line": planted["line"]}, found
