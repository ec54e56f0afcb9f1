"""Another reading's fix is joined to the sentence that names it ("If it is not that but <title>: <fix>"): the fix,
written to stand as a sentence of its own, goes on that sentence in lower case where its first word is an ordinary
one ("When ...", "Check ..."), never where it is a name (NCCL, SyncBatchNorm, pip, torch.load), and a title with a
colon of its own is followed by a dash, so that the sentence has one colon before the fix. Rendered for every
kind's alternatives and every kind's title as a rival."""

from __future__ import annotations

import re

import pytest
from explaining import lead

from torchdoctor.explain.kinds import BY_KIND, RECOGNISERS
from torchdoctor.explain.verdict import if_not_that

ALTERNATIVES = [(r.kind, a.kind, a.title, a.fix) for r in RECOGNISERS for a in r.also]
RIVALS = [(kind, kind, r.title, f"See log.{kind} below.") for kind, r in BY_KIND.items() if r.title]
# an ordinary word capitalised to start a sentence, as the fixes start ("When", "Check", "A")
ORDINARY = re.compile(r"[A-Z][a-z]*(?![\w.(_'’-])")


@pytest.mark.parametrize(("kind", "other", "title", "fix"), ALTERNATIVES + RIVALS)
def test_a_second_readings_fix_goes_on_the_sentence_that_names_it(kind, other, title, fix):
    line = if_not_that(title, fix)
    head, seam, rest = line.partition(title)
    assert head == "If it is not that but " and seam == title
    joined = rest[2:]  # after ": " or " —"
    assert rest[:2] in (": ", " —"), (kind, other, line)
    assert joined.strip()[1:] == fix[1:], (kind, other, line)  # the fix whole, but its first letter
    assert not ORDINARY.match(joined.strip()), (kind, other, joined[:40])
    # one colon before the fix: the title's own, or the seam's
    assert line[: len(line) - len(joined)].count(": ") == 1, (kind, other, line[:200])
    assert line.endswith(".") and f"{title}." not in line, (
        kind,
        other,
    )  # no title's full stop before the seam


def test_names_keep_their_case():
    assert (
        if_not_that("x", "NCCL_P2P_DISABLE=1 first.") == "If it is not that but x: NCCL_P2P_DISABLE=1 first."
    )
    assert if_not_that("x", "SyncBatchNorm needs it.").endswith(": SyncBatchNorm needs it.")
    assert if_not_that("x", "A smaller batch.").endswith(": a smaller batch.")


def test_a_real_logs_second_reading_reads_as_one_sentence():
    # train 845: a missing data folder, the checkpoint folder as its one other reading
    found = lead("845.txt")
    assert (
        "If it is not that but a checkpoint, pretrained weights or a config file at that path: if the path"
        in (found.fix)
    ), found.fix
