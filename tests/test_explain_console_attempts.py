"""The console output of a job torchrun restarted (--max-restarts): torch 2.13 prints no line at its default level
when it restarts a worker group, so explain read the attempts as one run and led with the first attempt's error,
not naming the later ones (the --log-dir folder's attempt_N folders were already read apart). torchrun's "failed
(exitcode: …) local_rank: … (pid: …) of binary: …", once per failed group, ends each attempt. Found running a
2-rank gloo job whose rank 1 fails differently on each of 3 attempts; read from a real torchrun's console, recorded
(fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again), and as printed."""

from __future__ import annotations

import io
import os
from pathlib import Path
from unittest.mock import patch

from helpers import torchrun_two_ranks
from recorded import recorded

from torchdoctor.explain.diagnose import explain

SCRIPT = """
import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
if dist.get_rank() == 1:
    if attempt == 0:
        raise ValueError("planted on the first attempt")
    raise KeyError("planted_on_the_second")
dist.all_reduce(torch.ones(3))
"""


def _read(text: str):
    return explain(["-"], stdin=io.BytesIO(text.encode()))


def run(folder: Path) -> str:
    # torch 2.13's restarted gloo workers can read the previous attempt's addresses from the rendezvous store it
    # shares with them (pytorch/pytorch#135712) and fail to connect: not sharing it keeps the planted errors
    with patch.dict(os.environ, {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}):
        done = torchrun_two_ranks(folder, SCRIPT, "--max-restarts", "1")
    console = done.stdout + done.stderr
    assert done.returncode != 0 and "planted_on_the_second" in console, console[-2000:]
    return console


RECORDED_RUNS = {"console_attempts_restarted": run}


def test_a_restarted_jobs_console_is_read_one_attempt_at_a_time():
    console = recorded("console_attempts_restarted")
    assert "planted_on_the_second" in console, console[-2000:]
    found = _read(console)
    assert found[0].summary.startswith("attempt 1 (the last): rank 1 failed first: KeyError"), found[
        0
    ].summary
    firsts = [f for f in found if "ValueError: planted on the first attempt" in f.summary]
    assert firsts and firsts[0].summary.startswith("attempt 0: "), [f.summary for f in found]


FAILED = "E1130 13:50:52.720000 {agent} torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) local_rank: {local} (pid: {pid}) of binary: /usr/bin/python\n"


def attempt(error: str, agent: int = 16145, pid: int = 16183) -> str:
    return (
        "[default1]:[rank1]: Traceback (most recent call last):\n"
        '[default1]:[rank1]:   File "/job/train.py", line 9, in <module>\n'
        "[default1]:[rank1]:     step()\n"
        f"[default1]:[rank1]: {error}\n" + FAILED.format(agent=agent, local=1, pid=pid)
    )


def test_two_group_failures_with_errors_between_are_two_attempts_the_last_first():
    found = _read(attempt("ValueError: first") + attempt("KeyError: 'second'", pid=16213))
    assert found[0].summary.startswith("attempt 1 (the last): ") and "KeyError" in found[0].summary
    assert any(f.summary.startswith("attempt 0: ") and "ValueError: first" in f.summary for f in found)


def test_errors_after_the_last_group_failure_are_one_more_attempt():
    # the last attempt did not end in a failed group: torchrun was stopped while it ran
    found = _read(attempt("ValueError: first") + "[default1]:[rank1]: OSError: planted while it ran\n")
    assert found[0].summary.startswith("attempt 1 (the last): "), found[0].summary


def test_one_group_failure_is_one_run_without_attempt_labels():
    found = _read(attempt("ValueError: only"))
    assert all("attempt" not in f.summary for f in found), [f.summary for f in found]


def test_two_agents_lines_for_one_failure_are_not_two_attempts():
    # a log of two nodes: each node's torchrun (another pid) reports the same failure once
    text = attempt("ValueError: on node 0") + FAILED.format(agent=9001, local=0, pid=512)
    found = _read(text)
    assert all("attempt" not in f.summary for f in found), [f.summary for f in found]


def test_one_torchrun_reporting_twice_with_nothing_between_is_one_attempt():
    found = _read(attempt("ValueError: only") + FAILED.format(agent=16145, local=0, pid=16182))
    assert all("attempt" not in f.summary for f in found), [f.summary for f in found]


# Reproduced on this torch (2.13) with the restarting job above, without TORCH_DISABLE_SHARE_RDZV_TCP_STORE: the
# restarted attempts' gloo connected to the port of the first attempt's rank 1 ("Connection closed by peer
# [127.0.0.1]:39845" there) and failed in init_process_group, which explain read as a network interface or a
# firewall. Not every restart reads the stale address, so the lines are as that run printed them.
MESH = (
    "[default0]:RuntimeError: Gloo connectFullMesh failed with [/__w/pytorch/pytorch/third_party/gloo/gloo/"
    "transport/tcp/pair.cc:152] timed out connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:39845$0\n"
)


def test_a_restarted_attempt_that_cannot_connect_names_the_shared_rendezvous_store():
    restarted = (
        "[default0]:Traceback (most recent call last):\n"
        '[default0]:  File "/job/train.py", line 5, in <module>\n'
        '[default0]:    dist.init_process_group("gloo")\n'
        + MESH
        + FAILED.format(agent=16145, local=0, pid=16212)
    )
    found = _read(attempt("ValueError: first") + restarted)
    assert found[0].id == "log.network_interface" and found[0].summary.startswith("attempt 1 (the last): ")
    assert (
        "a restarted attempt" in found[0].summary and "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1" in found[0].fix
    )


def test_the_same_line_in_an_attempt_N_folder_reads_the_same(tmp_path):
    for number, text in (("0", attempt("ValueError: first")), ("1", MESH)):
        (tmp_path / f"attempt_{number}" / "0").mkdir(parents=True)
        (tmp_path / f"attempt_{number}" / "0" / "stderr.log").write_text(text)
    found = explain([str(tmp_path)])[0]
    assert "a restarted attempt" in found.summary and "TORCH_DISABLE_SHARE_RDZV_TCP_STORE" in found.fix


def test_the_line_in_a_run_never_restarted_is_the_network_not_the_store():
    found = _read(MESH)[0]
    assert found.id == "log.network_interface" and "TORCH_DISABLE_SHARE_RDZV_TCP_STORE" not in found.fix
    assert "restarted" not in found.summary
