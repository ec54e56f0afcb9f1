"""Rank 0's judge in a process of its own (`torchdoctor.stragglers.judge`): a real judge process reading a real
TCPStore, fed the windows of a real run kept by the sweep (tests/fixtures/stragglers/SOURCES.md). It says the
same verdicts as judging in rank 0 did, writes the files, and stops without a word when rank 0 is gone. The
live launches of tests/test_stragglers.py go through it end to end."""

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import torch.distributed as dist
from rank_runner import run_script

from torchdoctor.stragglers import judge
from torchdoctor.stragglers.aggregate import judge_kept
from torchdoctor.stragglers.record import end_key, window_key
from torchdoctor.stragglers.watch import _a_core_to_spare

KEPT = Path(__file__).parent / "fixtures" / "stragglers" / "input-5pc-rank0" / "stragglers-windows.jsonl"
PREFIX = "torchdoctor/test-run/0"


def job_store() -> dist.TCPStore:
    """A job's store, as torchrun's agent holds it: this test process is its server."""
    return dist.TCPStore(
        "127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=timedelta(seconds=30)
    )


def publish_the_kept_run(store: dist.TCPStore) -> int:
    """Set every window of the kept run as its ranks did, and their end marks; how many windows."""
    windows = [json.loads(line) for line in KEPT.read_text().splitlines()]
    prefixed = dist.PrefixStore(PREFIX, store)
    for window in windows:
        for rank, payload in window["ranks"].items():
            prefixed.set(window_key(window["window"], int(rank)), json.dumps(payload))
    for rank in (0, 1):
        prefixed.set(end_key(rank), json.dumps({"last_window": windows[-1]["window"], "steps": 500}))
    return len(windows)


@pytest.mark.parametrize("start", [judge.start, judge.start_fresh], ids=["fork", "fresh"])
def test_the_judge_process_says_what_judging_in_rank_0_said_and_writes_the_files(
    tmp_path, monkeypatch, start
):
    # forked from rank 0 before its script (the launcher's RANK says it is rank 0) or a fresh interpreter (once
    # the process group says so)
    # at the ranks' own priority here: what it says is under test, not that it yields (the next test); niced
    # below a suite that keeps both cores busy, it waited 82 s for a CPU in CI (2026-11-30)
    monkeypatch.setattr(judge, "NICENESS", 0)
    store = job_store()
    windows = publish_the_kept_run(store)
    stderr = tmp_path / "rank0.stderr"
    said = []
    with open(stderr, "wb") as rank0_stderr:
        process = start(str(tmp_path / "out"), rank0_stderr.fileno())  # before the process group
        judge.connect(process, "127.0.0.1", store.port, PREFIX, 2)  # once it exists
        judge.finish(process, said.append, timeout=120)
    text = stderr.read_text()
    verdicts = [line for line in text.splitlines() if line.startswith("torchdoctor: straggler: ")]
    expected = judge_kept(KEPT).said
    assert said == [] and process.returncode == 0, text
    assert len(verdicts) == len(expected) >= 4, text
    assert all(line.startswith("torchdoctor: straggler: rank 0 ") and "input" in line for line in verdicts), (
        text
    )
    assert "medians over" in text  # the summary per rank follows the verdicts
    kept = (tmp_path / "out" / "stragglers-windows.jsonl").read_text().splitlines()
    assert len(kept) == windows and json.loads(kept[0])["ranks"].keys() == {"0", "1"}
    assert (tmp_path / "out" / "stragglers.json").exists()
    assert not dist.PrefixStore(PREFIX, store).check([window_key(0, 0)])  # read windows are deleted


def test_the_judge_yields_to_the_ranks_and_stops_without_a_word_when_rank_0_is_gone(tmp_path):
    store = job_store()  # nothing published: the judge polls it until it is told more
    stderr = tmp_path / "judge.stderr"
    rank0 = subprocess.Popen(  # a rank 0 that starts its judge, then is killed before the run is over
        [sys.executable, "-c",
         "import sys; from torchdoctor.stragglers import judge\n"
         f"p = judge.start(None, open({str(stderr)!r}, 'wb').fileno())\n"
         f"judge.connect(p, '127.0.0.1', {store.port}, {PREFIX!r}, 2)\n"
         "print(p.pid, flush=True); import time; time.sleep(120)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        pid = int(rank0.stdout.readline())
        time.sleep(1)
        assert running(pid), "the judge did not start"
        assert niceness(pid) == min(19, niceness(rank0.pid) + judge.NICENESS)  # the ranks come first
        os.kill(rank0.pid, signal.SIGKILL)
        rank0.wait(timeout=30)
        deadline = time.monotonic() + 30
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(pid), f"the judge (pid {pid}) outlived rank 0 by 30 s"
    finally:
        rank0.kill()
        rank0.wait(timeout=30)
    assert stderr.read_text() == ""


def test_a_judge_that_cannot_start_its_work_is_named_by_rank_0_with_its_status():
    said = []
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"], stdin=subprocess.PIPE)
    process.wait(timeout=30)
    judge.finish(process, said.append, timeout=30)
    assert said == [
        f"torchdoctor: stragglers: the judge (pid {process.pid}) exited with status 3: no summary "
        "(its reason, if it gave one, is above)"
    ]


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (an exited one not yet reaped is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_the_windows_go_to_the_jobs_tcpstore_under_the_runs_own_prefix_where_the_judge_finds_them():
    # a real process group (gloo, env:// rendezvous: the job's store is a TCPStore under torch's prefixes) in a
    # process of its own; what a rank sets, a client of the TCPStore reads under the judge's prefix
    code = (
        "import json, os, torch.distributed as dist\n"
        "from torchdoctor.stragglers import watch\n"
        "dist.init_process_group('gloo', rank=0, world_size=1)\n"
        "store, address = watch._windows_store(dist, dist.distributed_c10d._get_default_store())\n"
        "store.set('probe', 'set by the rank')\n"
        "host, port, prefix = address\n"
        "client = dist.TCPStore(host, port, is_master=False, wait_for_workers=False)\n"
        "print(json.dumps([prefix, dist.PrefixStore(prefix, client).get('probe').decode()]))\n"
    )
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "0", "TORCHELASTIC_RUN_ID": "job-7"}
    env["TORCHELASTIC_RESTART_COUNT"] = "2"
    done = run_script(["-c", code], env=env, timeout=120)  # forked where torch is imported: its own process
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["torchdoctor/job-7/2", "set by the rank"]


def niceness(pid: int) -> int:
    """Process ``pid``'s nice value (/proc/PID/stat, field 19)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_rank_0_of_several_starts_its_judge_before_the_process_group_and_lets_it_go_if_none_comes():
    # torchrun's RANK and WORLD_SIZE say this is rank 0 of two, one rank per node (a core to spare for the
    # judge): the judge starts with the watch (its torch import over before the first steps); the script ends
    # without a process group: the judge is let go
    code = (
        "import torchdoctor\n"
        "from torchdoctor.stragglers import watch\n"
        "torchdoctor.watch_for_stragglers()\n"
        "print(watch._state['judge'].pid if 'judge' in watch._state else None, flush=True)\n"
    )
    for rank, started in (("0", True), ("1", False)):
        env = {"RANK": rank, "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "1"}  # one rank per node
        done = run_script(["-c", code], env=env, timeout=120)  # forked where torch is imported
        assert done.returncode == 0 and done.stderr == "", done.stderr
        pid = done.stdout.split()[-1]
        assert (pid != "None") == started, done.stdout
        if started:
            assert not running(int(pid)), "rank 0 ended, its judge did not"


def test_a_judge_told_nothing_exits_at_once_without_a_word(tmp_path):
    stderr = tmp_path / "judge.stderr"
    with open(stderr, "wb") as descriptor:
        process = judge.start(None, descriptor.fileno())
        judge.stop(process)
    assert process.returncode == 0 and stderr.read_text() == ""


def test_the_forked_judge_leaves_rank_0s_output_and_exit_handlers_to_rank_0():
    # rank 0 with output not yet written (stdout to a pipe is block-buffered) and an exit handler: the judge,
    # forked from it, writes none of that output and runs none of them, and leaves without a word when told
    # nothing; rank 0's imports are the fork's (no torch imported again)
    code = (
        "import atexit, os, sys\n"
        "from torchdoctor.stragglers import judge\n"
        "print('rank 0 was here')\n"
        "atexit.register(lambda: os.write(2, b'rank 0 exits\\n'))\n"
        "p = judge.start(None, sys.stderr.fileno())\n"
        "judge.stop(p)\n"
        "sys.stderr.write(f'judge {p.pid} status {p.returncode}\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "rank 0 was here\n"  # once: the fork's copy is never written
    lines = done.stderr.splitlines()
    assert lines[0].endswith(" status 0") and lines[1:] == ["rank 0 exits"], done.stderr  # rank 0's, once


def test_the_judge_gets_a_process_of_its_own_only_where_a_core_is_left_beyond_one_per_rank():
    cores = len(os.sched_getaffinity(0))
    assert not _a_core_to_spare({"LOCAL_WORLD_SIZE": str(cores)}, 64)  # every core has its rank: the thread
    assert not _a_core_to_spare({}, cores)  # no LOCAL_WORLD_SIZE: the world size is all on this machine
    assert _a_core_to_spare({"LOCAL_WORLD_SIZE": str(cores - 1)}, 64) == (cores > 1)
    assert _a_core_to_spare({"LOCAL_WORLD_SIZE": "not a number"}, 1) == (cores > 1)
