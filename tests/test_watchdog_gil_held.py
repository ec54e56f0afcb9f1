"""A rank whose main thread holds the GIL in C code writes its stack (faulthandler, from C) but never its
flight-recorder dump (a Python thread writes it): the launcher stops waiting for the dump once the stack came
and no Python thread of the rank began to answer, while a rank that began answering gets the whole wait."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from torchdoctor.hang import collect
from torchdoctor.hang.collect import START_ANSWER, collect_stacks
from torchdoctor.hang.worker import DUMP_SIGNAL
from torchdoctor.process_state import started_at

# a rank as `prepare_worker` leaves it, without its sampler thread (no Python thread answers: the GIL's holder in
# C code is stood for by a sleep), or with a thread that begins its answer and writes "no dump" late
RANK = """
import faulthandler, json, os, pathlib, sys, threading, time
folder, answers = pathlib.Path(sys.argv[1]), sys.argv[2] == "answers"
stack = open(folder / "rank0.stack", "w")
faulthandler.register({signal}, file=stack, all_threads=True, chain=False)
request = folder / "flight-recorder.request"

def answer():
    while not request.exists():
        time.sleep(0.05)
    (folder / "rank0.counts").write_text("{{}}")
    time.sleep({late})
    (folder / "rank0.fr-none").write_text("late")

if answers:
    threading.Thread(target=answer, daemon=True).start()
(folder / "ready").write_text(str(threading.main_thread().ident))
time.sleep(60)
"""
LATE = (
    START_ANSWER + 1.0
)  # seconds a rank that began answering takes to finish: past the cut, within the wait


def _rank(tmp_path, answers: bool) -> subprocess.Popen:
    script = textwrap.dedent(RANK).format(signal=int(DUMP_SIGNAL), late=LATE)
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path), "answers" if answers else "silent"]
    )
    for _ in range(200):
        if (tmp_path / "ready").exists():
            break
        time.sleep(0.05)
    meta = {"rank": 0, "pid": child.pid, "started": started_at(child.pid)}
    (tmp_path / "rank0.json").write_text(
        json.dumps({**meta, "main_thread": int((tmp_path / "ready").read_text())})
    )
    return child


@pytest.fixture
def polls(monkeypatch):
    """How many times `collect_stacks` looked for the answers (each look sleeps 0.1 s first)."""
    count, sleep = [0], time.sleep
    monkeypatch.setattr(
        collect.time, "sleep", lambda seconds: (count.__setitem__(0, count[0] + 1), sleep(seconds))
    )
    return count


def test_the_dump_of_a_rank_whose_python_threads_do_not_run_is_not_waited_for_past_its_stack(tmp_path, polls):
    child = _rank(tmp_path, answers=False)
    try:
        [stack] = collect_stacks(tmp_path, wait=10.0)
    finally:
        child.kill()
        child.wait()
    assert stack.frames and stack.frames[-1].function == "<module>", stack
    assert polls[0] < 5.0 / 0.1, f"{polls[0]} looks: the 10 s wait went on after the stack came"
    assert any("did not begin its flight-recorder dump" in e for e in stack.evidence), stack.evidence


def test_a_rank_that_began_to_answer_gets_the_whole_wait_for_its_dump(tmp_path, polls):
    child = _rank(tmp_path, answers=True)
    try:
        [stack] = collect_stacks(tmp_path, wait=10.0)
    finally:
        child.kill()
        child.wait()
    assert stack.frames and stack.evidence == []
    assert (tmp_path / "rank0.fr-none").exists(), f"given up after {polls[0]} looks, before its late answer"
