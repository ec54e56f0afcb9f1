"""How a list of ranks is written, everywhere torchdoctor prints one: ``0-2, 5``.

Three or more consecutive ranks fold into a range, so a thousand ranks fit on a line and two stay plain
(``0, 1``). ``who`` puts the word in front (``rank 3``, ``ranks 0-2``); ``grouped`` writes one line per run of
neighbouring ranks that have the same value, as debug mode's messages list shapes and call sites.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

FOLD_FROM = 3  # consecutive ranks from this many on are written as a range


def _runs(ranks: list[int], same=lambda a, b: True) -> list[list[int]]:
    """``ranks`` (sorted) cut into runs of consecutive ranks for which ``same(first, rank)`` holds."""
    runs: list[list[int]] = []
    for rank in ranks:
        if runs and rank == runs[-1][-1] + 1 and same(runs[-1][0], rank):
            runs[-1].append(rank)
        else:
            runs.append([rank])
    return runs


def _run_text(run: list[int]) -> list[str]:
    if len(run) >= FOLD_FROM:
        return [f"{run[0]}-{run[-1]}"]
    return [str(rank) for rank in run]


def ranks_text(ranks: Iterable[int]) -> str:
    """The ranks, sorted, each once, three or more consecutive ones as a range.

    >>> ranks_text([5, 0, 1, 2, 7, 8])
    '0-2, 5, 7, 8'
    """
    return ", ".join(part for run in _runs(sorted(set(ranks))) for part in _run_text(run))


def who(ranks: Iterable[int], one: str = "rank", many: str | None = None) -> str:
    """``"rank 3"`` or ``"ranks 0-2"``; ``one``/``many`` name something else (``"node"``, ``"Process"``,
    ``"Processes"``).

    >>> who([2, 0, 1])
    'ranks 0-2'
    """
    ranks = set(ranks)
    word = one if len(ranks) == 1 else (many or one + "s")
    return f"{word} {ranks_text(ranks)}"


def grouped(values: Mapping[int, str], one: str = "Process", many: str = "Processes") -> list[str]:
    """``Process r: value`` per rank, three or more consecutive ranks with the same value on one line.

    >>> grouped({0: "a", 1: "a", 2: "a", 3: "b"})
    ['Processes 0-2: a', 'Process 3: b']
    """
    lines = []
    for run in _runs(sorted(values), lambda first, rank: values[rank] == values[first]):
        if len(run) >= FOLD_FROM:
            lines.append(f"{who(run, one, many)}: {values[run[0]]}")
        else:
            lines += [f"{one} {rank}: {values[rank]}" for rank in run]
    return lines
