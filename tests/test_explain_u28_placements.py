"""Ranks that hung in one DTensor call made with different placements: distribute_tensor(weight, mesh, [Shard(0)])
on rank 0 and [Replicate()] on rank 1 (placements read per rank) is a scatter on one and a broadcast on the other,
at the same line. Found on 2 gloo ranks under torchdoctor launch --debug --watchdog 20: the report named both calls
and the line, and explain said to look between them for a condition on the rank, where there is none: the call's
own arguments differ. The watchdog's report as it printed it."""

from explaining import explained

REPORT = """\
torchdoctor: hang: no progress for 20s. Where every rank is:

rank 0 (pid 31420, vm): waiting in torch.distributed.scatter
    place.py:14 in <module>: w = distribute_tensor(weight, mesh, placements)
rank 1 (pid 31421, vm): waiting in torch.distributed.broadcast
    place.py:14 in <module>: w = distribute_tensor(weight, mesh, placements)

process group 0 (default_pg): collective #1 has different operations on different ranks: rank 0: scatter #1 [2, 4, 4] Float (place.py:14 in <module>); rank 1: broadcast #1 [8, 4] Float (place.py:14 in <module>).
Which side is the odd one out cannot be told: The ranks call collectives in a different order: every rank of a group must make the same calls in the same order. Look at each rank's line above for a condition on the rank between them.
Full stacks: /tmp/torchdoctor-watchdog-x1/rank*.stack, flight-recorder dumps: /tmp/torchdoctor-watchdog-x1/rank*.fr. The run was stopped.
"""


def test_a_scatter_and_a_broadcast_at_one_line_name_the_dtensor_placements():
    found = explained(REPORT)
    assert found.id == "log.hang_verdict", found.summary
    assert (
        "at one line, place.py:14" in found.fix and "Shard(dim) scatters, Replicate() broadcasts" in found.fix
    )


def test_calls_at_one_line_of_other_operations_say_to_print_the_arguments():
    found = explained(REPORT.replace("scatter #1 [2, 4, 4]", "all_reduce #1 [2, 4, 4]"))
    assert "at one line, place.py:14" in found.fix and "Print them on each rank" in found.fix
    assert "Replicate()" not in found.fix


def test_calls_at_different_lines_say_nothing_of_one_line():
    found = explained(
        REPORT.replace("Float (place.py:14 in <module>); rank 1", "Float (place.py:12 in <module>); rank 1")
    )
    assert found.id == "log.hang_verdict" and "at one line" not in found.fix, found.fix
