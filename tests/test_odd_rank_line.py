"""The launch names the rank the others waited for only where it knows where every rank that started was: with
rank 3 of 4 silent (it crashed, or no line it was on was the user's), ranks 0 and 2 in a barrier and rank 1 asleep
do not single rank 1 out, as rank 3 may have been elsewhere too (launch/stopped_places.py, hang/odd_rank.py)."""

from __future__ import annotations

from torchdoctor.hang.odd_rank import collective_at
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


def test_a_function_named_like_a_collective_is_not_one(tmp_path):
    """functools.reduce, torch.gather and a tensor's scatter share a collective's name: a rank on such a line is
    elsewhere, not in a collective of its own (with two ranks in two collectives nothing would be said;
    hang/odd_rank.collective_at)."""
    for elsewhere in (
        "train.py:8 in <module>: total = functools.reduce(add, parts)",
        "train.py:8 in <module>: picked = torch.gather(logits, 1, index)",
        "train.py:8 in <module>: out = x.scatter(1, index, src)",
        "train.py:8 in <module>: reduce(add, parts)",
    ):
        line = _run(tmp_path, {0: BARRIER, 1: elsewhere}, range(2))
        assert "rank 1 was not in it" in line, (elsewhere, line)


def test_a_collective_through_an_alias_or_accelerate_is_one():
    for place, call in (
        ("train.py:9 in f: torch.distributed.all_reduce(t)", "all_reduce"),
        ("train.py:9 in f: tdist.broadcast(t, 0)", "broadcast"),
        ("train.py:9 in f: all_gather(out, t)", "all_gather"),
        ("train.py:9 in f: loss = self.accelerator.gather(loss)", "gather"),
        ("train.py:9 in f: dist.all_reduce(x.gather(1, i))", "all_reduce"),
    ):
        assert collective_at(place) == call, place


PLACES = (
    "torchdoctor: rank 0 was interrupted at train.py:9 in <module>: dist.barrier()\n"
    "torchdoctor: rank 1 was interrupted at train.py:8 in <module>: time.sleep(600)\n"
    "torchdoctor: rank 2 was interrupted at train.py:9 in <module>: dist.barrier()\n"
)


def test_explain_names_the_rank_only_where_the_launch_did():
    """explain reads the places a log shows, not how many ranks started: rank 3 of 4 may have said nothing (it
    crashed), so the rank outside the barrier is named only where the launch, which knew every started rank,
    named it too (explain/kinds/watchdog_report._stopped_places)."""
    from explaining import explained

    alone = explained(PLACES + "torchdoctor: interrupted\n")
    assert alone.id == "log.launch_interrupted" and "likely the one" not in alone.summary, alone.summary
    said = (
        "torchdoctor: ranks 0, 2 were waiting in barrier and rank 1 was not in it (train.py:8 in <module>: "
        "time.sleep(600)): if the run had stopped moving, rank 1 is likely the one they waited for.\n"
    )
    named = explained(PLACES + said + "torchdoctor: interrupted\n")
    assert named.id == "log.launch_interrupted", named.summary
    assert "rank 1 was not in it" in named.summary and "rank 1 is likely the one" in named.summary, (
        named.summary
    )
