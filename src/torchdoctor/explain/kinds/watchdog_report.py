"""The hang report `torchdoctor launch --watchdog` printed, read back from the console output it went to.

A run the watchdog stopped leaves its verdict on the console (``torchdoctor: hang: no progress for 20s. Where
every rank is:``, each rank's place, then ``Culprit: rank(s) 1 at train.py:26; rank(s) 0 wait because of it.``
and the folder of full stacks). A log of that run handed to `explain` says it again: the rank that held the
others up, its line, and the folder whose stacks `explain FOLDER` reads (`log.hang_verdict`, the finding a kept
watchdog folder gives). The failed-job form of the same line (``torchdoctor: failed: ...``, "What each rank
left") is not read here: the rank's own traceback in the log is its cause.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, has_fact

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

HEAD = "torchdoctor: hang: no progress for "
CULPRIT = "Culprit: rank(s) "
FOLDER = R(r"Full stacks: (?P<folder>\S+?)/rank\*\.stack")
# the folder is said a few lines below the report's head, after the verdict: read from anywhere in the log
CONTEXT = (("Full stacks: ", FOLDER),)


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
