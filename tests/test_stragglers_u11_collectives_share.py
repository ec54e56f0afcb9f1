"""The straggler summary says when the collectives themselves take most of the step on every rank (session 41: two
namespace hosts joined by a link throttled to 20 mbit, the collectives 98-99% of a 4.2 s step on both ranks, and
the summary named nobody, rightly, but said nothing of the link either). It says so, with what measures the links,
only then: none of the kept healthy or planted runs (their collectives 0-68% of the step) gets the line."""

import json
from pathlib import Path

from torchdoctor.stragglers.summary import DOMINATE, summary_lines
from torchdoctor.stragglers.window import judge_window

KEPT = Path(__file__).parent / "fixtures" / "stragglers"


def summary_of(name: str) -> list[str]:
    verdicts = []
    for line in (KEPT / name / "stragglers-windows.jsonl").read_text().splitlines():
        kept = json.loads(line)
        verdicts.append(judge_window(int(kept["window"]), {int(r): f for r, f in kept["ranks"].items()}))
    return summary_lines(verdicts, [])


def test_a_slow_link_between_two_hosts_is_said_to_bound_the_step():
    lines = summary_of("slow-link-20mbit-2-hosts")
    (said,) = [line for line in lines if "the collectives take" in line]
    assert said.startswith(
        "  the collectives take 98%-99% of the step on every rank, waiting for peers left out"
    )
    assert "measure the links between the 2 hosts: `torchdoctor net --bench`" in said
    assert "`torchdoctor net --find-bad`" in said


def test_no_kept_run_whose_collectives_take_less_says_it():
    for run in sorted(p.name for p in KEPT.iterdir() if p.is_dir() and p.name != "slow-link-20mbit-2-hosts"):
        assert not any("the collectives take" in line for line in summary_of(run)), run
    # every rank's share counts: lagged-leaver-two-modes' rank 1 spent 68% there, its peer 22%
    assert 0.22 < DOMINATE < 0.98
