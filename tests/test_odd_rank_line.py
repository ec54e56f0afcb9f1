"""The launch names the rank the others waited for only where it knows where every rank that started was: with
rank 3 of 4 silent (it crashed, or no line it was on was the user's), ranks 0 and 2 in a barrier and rank 1 asleep
do not single rank 1 out, as rank 3 may have been elsewhere too (launch/stopped_places.py, hang/odd_rank.py)."""

from __future__ import annotations

from torchdoctor.launch.stopped_places import odd_rank_line

BARRIER = "train.py:9 in <module>: dist.barrier()"
ASLEEP = "train.py:8 in <module>: time.sleep(600)"


def _run(folder, said: dict[int, str], started: range) -> str:
    for rank in started:
        (folder / f"started.{rank}.{4000 + rank}").touch()
    for rank, place in said.items():
        (folder / f"said.{rank}").write_text(place)
    return odd_rank_line(folder)


def test_every_rank_known_names_the_one_outside_the_barrier(tmp_path):
    line = _run(tmp_path, {0: BARRIER, 1: ASLEEP, 2: BARRIER}, range(3))
    assert line.startswith("torchdoctor: ranks 0, 2 were waiting in barrier and rank 1 was not in it"), line


def test_a_started_rank_that_said_nothing_names_nobody(tmp_path):
    assert _run(tmp_path, {0: BARRIER, 1: ASLEEP, 2: BARRIER, 3: ""}, range(4)) == ""
