"""The hang report `torchdoctor launch --watchdog` printed, read back from the console output it went to.

A run the watchdog stopped leaves its verdict on the console (``torchdoctor: hang: no progress for 20s. Where
every rank is:``, each rank's place, then ``Culprit: rank(s) 1 at train.py:26; rank(s) 0 wait because of it.``
and the folder of full stacks). A log of that run handed to `explain` says it again: the rank that held the
others up, its line, and the folder whose stacks `explain FOLDER` reads (`log.hang_verdict`, the finding a kept
watchdog folder gives). The failed-job form of the same line (``torchdoctor: failed: ...``, "What each rank
left") is not read here: the rank's own traceback in the log is its cause.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, has_fact

FAMILY = "NCCL and collectives"

R = re.compile

HEAD = "torchdoctor: hang: no progress for "
CULPRIT = "Culprit: rank(s) "
FOLDER = R(r"Full stacks: (?P<folder>\S+?)/rank\*\.stack")
# the ranks' flight records compared (explain/flight_recorder/findings.py), a line of the report when no rank
# is the culprit: "process group 0 (default_pg): collective #2 has different operations on different ranks:
# rank 0: scatter #2 [2, 16] Float (tp.py:96 in <module>); rank 1: broadcast #2 [32] Float (tp.py:96 in <module>)."
MISMATCH = R(
    r"collective #(?P<mismatch_seq>\d+) has (?P<mismatch_kind>different (?:operations|sizes|dtypes)) on different "
    r"ranks: (?P<mismatch>[^\n]{1,600}?)\.?$",
    re.M,
)
# the folder is said a few lines below the report's head, after the verdict, and so is the mismatch: read from
# anywhere in the log
CONTEXT = (("Full stacks: ", FOLDER), (" on different ranks: ", MISMATCH))


def _hang(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    seconds = first(hits, "timeout")
    culprits, where = first(hits, "culprits"), first(hits, "where")
    waiting, folder = first(hits, "waiting"), first(hits, "folder") or ctx.facts.get("folder")
    after = f" after {seconds} s without progress" if seconds else ""
    if culprits:
        summary = (
            f"torchdoctor's watchdog stopped a hang{after}: rank(s) {culprits}"
            + (f" at {where}" if where else "")
            + " held the others up"
            + (f"; rank(s) {waiting} waited for it" if waiting else "")
        )
        fix = (
            f"Look at what rank(s) {culprits} did"
            + (f" at {where}" if where else "")
            + " that the others did not: the report above names the collective the others waited in and "
            "whether the line sits under a condition on the rank (an evaluation, a save or a data step only "
            "some ranks take, a loop of another length, an exception caught on one rank)."
        )
    elif ctx.facts.get("mismatch"):
        # no rank is the odd one out, but their flight records show where their calls part ways
        summary = (
            f"torchdoctor's watchdog stopped a hang{after}: the ranks entered collective "
            f"#{ctx.facts['mismatch_seq']} with {ctx.facts['mismatch_kind']}: {ctx.facts['mismatch']}"
        )
        fix = (
            "Every rank of a group must make the same collective calls in the same order, with the same sizes and "
            "dtypes. The report names each rank's call and line: look between them for what differs per rank (a "
            "condition on the rank, a setting or plan read per rank, such as a parallelize_plan or a model built "
            "differently, or a loop of another length)."
        )
    else:
        summary = f"torchdoctor's watchdog stopped a hang{after}; its report names no single rank that held the others up"
        fix = (
            "Read the report above: every rank is waiting inside collectives (a deadlock of their order, a "
            "peer's network or device) or no rank was seen in one; `--watchdog` with a longer time tells a slow "
            "step from a hang."
        )
    if folder:
        fix += f" `torchdoctor explain {folder}` reads the full stacks and flight-recorder dumps again while that folder is kept."
    return summary, fix


HANG_VERDICT = Recogniser(
    kind="hang_verdict",
    title="a hang torchdoctor's watchdog stopped",
    anchors=(HEAD, CULPRIT),
    templates=("torchdoctor:hang-no-progress-for", "torchdoctor:culprit-ranks-wait-because-of-it"),
    span=2,
    # the failed job's culprit line: its cause is the rank's own traceback in the log
    reject=R(r"What each rank left: "),
    facts=(
        R(r"torchdoctor: hang: no progress for (?P<timeout>\d+(?:\.\d+)?)s\."),
        R(
            r"Culprit: rank\(s\) (?P<culprits>\d[\d,\- ]*?)(?: at (?P<where>\S+:\d+))?"
            r"(?:; rank\(s\) (?P<waiting>\d[\d,\- ]*?) wait because of it)?\.(?:\n|$)"
        ),
        FOLDER,
    ),
    # our own report's head or its culprit line beside the folder it names: nothing else prints them
    confirm=lambda hits, ctx: has_fact("timeout")(hits, ctx) or has_fact("folder")(hits, ctx),
    describe=_hang,
)

RECOGNISERS = (HANG_VERDICT,)
