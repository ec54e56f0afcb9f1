"""An NCCL watchdog timeout in a log that holds one rank: explain said "Every rank in this log waited in it: the
one that did not arrive is not in this log", which reads oddly of one rank and is wrong for a job of one rank,
where no rank can be late (left open by session 29; checked for session 30). Read on recorded logs: the H200's
one-rank timeout (tests/fixtures/gpu/nccl-timeout.txt, benchmarks/gpu/nccl_hang.py: an all_reduce queued behind a
spinning kernel) and a public issue's rank 3 (tests/fixtures/logs/002_nccl_watchdog_timeout.txt, SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from torchdoctor.explain.diagnose import explain

FIXTURES = Path(__file__).parent / "fixtures"


def _lead(path: Path):
    (found, *_) = explain([str(path)])
    assert found.id == "log.nccl_watchdog_timeout", found.summary
    return found


def test_rank_0_alone_in_the_log_says_the_late_rank_is_elsewhere_or_a_one_rank_job_had_none():
    found = _lead(FIXTURES / "gpu" / "nccl-timeout.txt")
    assert "Only rank 0 is in this log" in found.summary and "Every rank in this log" not in found.summary
    assert "in a job of one rank no rank can be late" in found.summary
    assert "world size 1" in found.fix


def test_rank_3_alone_says_the_late_rank_is_in_another_ranks_log_and_no_one_rank_job():
    found = _lead(FIXTURES / "logs" / "002_nccl_watchdog_timeout.txt")
    assert "Only rank 3 is in this log" in found.summary and "another rank's log" in found.summary
    assert "job of one rank" not in found.summary and "world size 1" not in found.fix


def test_several_ranks_waiting_still_say_every_rank_in_the_log():
    found = _lead(FIXTURES / "torch" / "watchdog-timeout-allreduce-600000ms.txt")
    assert "Every rank in this log waited in it" in found.summary
