"""torchdoctor's own refusal to start a run, read back from the console it went to.

``torchdoctor launch`` checks the rendezvous before torchrun starts (launch/preflight.py: the host resolves, its
port is free on the node that hosts it, the others reach it, the socket interfaces exist) and stops with one line,
``torchdoctor: error: SUMMARY; FIX`` (exit status 1); every command refuses bad input the same way (``torchdoctor:
error: ...``, exit status 2). On a job of several nodes that node's console then holds that line and nothing else
of note, while the other nodes wait for it: `explain` said "no known failure recognised" on it (a rendezvous host
in no /etc/hosts of one node, an interface only the other nodes have). The line is the verdict of a check that
ran on that node, so it is said again as it stands, the fix after its ``; ``.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


# what launch's checks before the start speak of (preflight: the rendezvous host resolves, its port is free, the
# others reach it, the socket interfaces exist); any other refusal is of a command's input (`check --only sys.nope`,
# a missing file given to explain), which holds up no other node
_RENDEZVOUS_CHECK = re.compile(
    r"rendezvous|interface|\bport\b|\bresolve|\breach|_SOCKET_IFNAME", re.IGNORECASE
)


def _refused(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    line = first(hits, "refusal", "").strip()
    said, _, fix = line.partition("; ")
    if not _RENDEZVOUS_CHECK.search(said):
        return (
            f"torchdoctor refused its input: {line}",
            "Change what the line names and run the command again.",
        )
    summary = f"torchdoctor refused to start the run on this node: {said}"
    if not fix:
        return summary, "Change what the line names and start the command again."
    fix = fix[:1].upper() + fix[1:].rstrip(".")
    return summary, (
        f"{fix}. On several nodes the other nodes wait at the rendezvous for this one until their timeout: "
        "start it again on this node once fixed (the same command line on every node)."
    )


REFUSED = Recogniser(
    kind="torchdoctor_refused",
    title="torchdoctor refused to start the run",
    anchors=("torchdoctor: error: ",),
    templates=("torchdoctor:launch-check-failed", "torchdoctor:refused-bad-input"),
    match=R(r"^torchdoctor: error: (?P<refusal>[^\n]{1,1000})$", re.M),
    describe=_refused,
)

RECOGNISERS = (REFUSED,)
