"""One way to write a list of ranks, wherever torchdoctor prints one."""

from __future__ import annotations

from torchdoctor.rank_list import grouped, ranks_text, who


def test_three_or_more_neighbours_fold_two_stay_plain():
    assert ranks_text([5, 0, 1, 2, 3, 7, 8]) == "0-3, 5, 7, 8"
    assert ranks_text([1, 0]) == "0, 1"
    assert ranks_text([2, 2, 2]) == "2"
    assert ranks_text([]) == ""
    assert ranks_text(r for r in range(1000) if r != 517) == "0-516, 518-999"


def test_who_puts_the_word_in_front():
    assert who([3]) == "rank 3"
    assert who([3, 3]) == "rank 3"
    assert who([2, 0, 1]) == "ranks 0-2"
    assert who([1, 3], "node") == "nodes 1, 3"
    assert who([4], "Process", "Processes") == "Process 4"
    assert who([4, 5], "Process", "Processes") == "Processes 4, 5"


def test_grouped_folds_neighbours_with_the_same_value():
    assert grouped({0: "a", 1: "a", 2: "a", 3: "b"}) == ["Processes 0-2: a", "Process 3: b"]
    assert grouped({0: "a", 1: "a", 3: "a"}) == ["Process 0: a", "Process 1: a", "Process 3: a"]
    assert grouped({0: "a", 1: "b", 2: "a", 3: "a", 4: "a"}) == [
        "Process 0: a",
        "Process 1: b",
        "Processes 2-4: a",
    ]
