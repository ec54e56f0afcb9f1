"""A library's bug its own history says a later release fixed, read beside or instead of what its message says.

kinds/fixed_bugs.py says which messages a package's own commits fixed and in which release; this module puts that
reading into a finding: as the lead (likely) of an error no kind covers where the package's users cannot cause the
message (`lead`), and as the reading after what the message says otherwise (`second_reading`, for the finding a
kind read on the error that stopped the run; `beside_unrecognised`, for an error named as it is). Never certain,
and never where the log prints a release of that package at or past the fix.
"""

from __future__ import annotations

from torchdoctor.explain import first_failure
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.kinds import fixed_bugs
from torchdoctor.findings import Finding


def lead(raised: Raised, facts: dict, details: dict) -> Finding | None:
    """``log.library_version_bug`` (likely) when ``raised`` is a fixed message its users cannot cause, raised in
    the package's own frame; ``details``: the exception's, to which the row's facts are added. None otherwise."""
    found = fixed_bugs.reading(raised, facts)
    if found is None or not found[1]:
        return None
    row, _, stated = found
    sentence, fix = fixed_bugs.words(row, stated)
    details.update(
        package=row.package, fixed_in=row.fixed, fixed_by=row.pr, alternatives=["log.dependency_version"]
    )
    summary = f"likely: {raised.text()} raised in {row.package}'s own code: {sentence}"
    details["raised_in"] = str(raised.raised_in)
    if raised.frame is not None and raised.frame != raised.raised_in:
        details["frame"] = str(raised.frame)  # the user's call that led there
        fix += f"\n{first_failure.REACHED} {first_failure.where(raised)}."
    return Finding("log.library_version_bug", "fail", summary, details, fix)


# kinds whose reading of an exception an installed package's own frame raised already says that package's release
# is at fault (platform_limits.py: its code uses a name only Unix has): the fixed bug is that same cause, its release
# named in the reading, not a second cause after it
RELEASE_AT_FAULT = ("unix_only_module",)


def second_reading(draft, kind: str, o, ctx, raised: list[Raised]) -> None:
    """The lead finding read on the error that stopped the run names the package's fixed bug after its own
    reading where that error is a message the package's history says it fixed. A certain reading stays as it is
    unless the log prints a release older than the fix: the fixed bug raised the message for some of its
    values only (accelerate#2383 refused an XPU, while a device named 'gpu0' is the script's mistake in every
    release), so without the release the kind's own evidence decides."""
    if not o.causes or kind != o.causes[0] or o.first is None or o.initiating is not None:
        return
    found = fixed_bugs.reading(o.first, ctx.facts)
    if found is None:
        return
    row, _, stated = found
    if draft.details.get("confidence") == "certain" and not stated:
        return
    sentence, fix = fixed_bugs.words(row, stated)
    if kind in RELEASE_AT_FAULT and draft.details.get("facts", {}).get("raised_in_package") == row.package:
        draft.summary += f"; {sentence}"
        draft.details["fixed_in"] = f"{row.package} {row.fixed} ({row.pr})"
        draft.details.setdefault("alternatives", []).append("log.library_version_bug")  # the same, by kind
        draft.fix = f"{fix}\n{draft.fix}"  # the release that fixed it first, then the reading's own
        return
    if draft.details.get("confidence") == "certain":
        draft.details["confidence"] = "likely"
        draft.summary = f"likely: {draft.summary}"
    draft.summary += f"; or a bug of {row.package}: {sentence}"
    others = draft.details.setdefault("alternatives", [])
    if "log.library_version_bug" not in others:
        others.append("log.library_version_bug")
    draft.details["fixed_in"] = f"{row.package} {row.fixed} ({row.pr})"
    draft.fix += f"\nIf it is not that but a bug of {row.package}: {fix}"


def beside_unrecognised(
    raised: Raised, facts: dict, summary: str, details: dict, fix: str
) -> tuple[str, str]:
    """(summary, fix) of an error named as it is, with the package's fixed bug named after it where the history
    knows the message (a message its users can cause too, so not instead of it)."""
    found = fixed_bugs.reading(raised, facts)
    if found is None:
        return summary, fix
    row, _, stated = found
    sentence, row_fix = fixed_bugs.words(row, stated)
    others = details.setdefault("alternatives", [])
    if "log.library_version_bug" not in others:
        others.append("log.library_version_bug")
    details["fixed_in"] = f"{row.package} {row.fixed} ({row.pr})"
    return (
        f"{summary}; or a bug of {row.package}: {sentence}",
        f"{fix}\nIf it is a bug of {row.package}: {row_fix}",
    )
