"""A library refusing a setting, as data: the table of refusals one recogniser knows.

A library refusing a setting, as data: a table of the refusals one recogniser knows, each row (its sign, what
went wrong, the fix), or (its sign, the fix) where the recogniser says what went wrong once for the whole table.

A row's sign is how the log shows that refusal: the named group its recogniser's ``match`` reads for it (a fact:
DDP's and FSDP's checks, a DataLoader's options, a collective's or a process group's arguments, each a pattern of
its own), or, for a table of plain texts, the text its source prints, found by `refusal_pattern` inside one fact
that holds the whole message (a framework's arguments, FSDP's settings, the package a feature needs). One lookup
(`refusal_in`) serves both; `refused` and `describe_refusal` build a recogniser's ``confirm`` and ``describe`` on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from torchdoctor.explain.recognisers import Alternative, Context, Facts, Hit, Recogniser, merged, on_ranks

FAMILY = "a library refusing its settings"

Refusals = tuple[tuple[str, ...], ...]  # (sign, what went wrong, fix) or (sign, fix)


def refusal_pattern(refusals: Refusals, name: str = "refusal", after: int = 220) -> re.Pattern:
    """The message that holds one of the table's texts, from after the exception's colon to the end of its line,
    as the fact ``name``.

    >>> refusal_pattern((("must be set", "Set it."),)).search("ValueError: x must be set here")["refusal"]
    ' x must be set here'
    """
    texts = "|".join(re.escape(row[0]) for row in refusals)
    return re.compile(rf"(?P<{name}>[^\n:]{{0,150}}?(?:{texts})[^\n]{{0,{after}}})")


def one_line(message: str, limit: int = 220) -> str:
    """The message on one line, cut after a word past ``limit`` characters (whole, not quoted: quote() would drop
    an apostrophe such as "FSDP's" as an unbalanced quote)."""
    said = " ".join(message.split())
    return said if len(said) <= limit else said[:limit].rsplit(" ", 1)[0] + " …"


def refusal_in(facts: Facts, refusals: Refusals, message: str = "") -> tuple[str, str, str] | None:
    """(what went wrong, the refusal as printed, the fix) of the first row the facts show, or None.

    Without ``message`` a row's sign is a fact the match read. With it, the signs are texts and ``message`` the
    fact that holds the whole message: the row is the first whose text it holds (the table's first row when
    none does), what went wrong is "" (the recogniser says it).

    >>> refusal_in({"twice": "init twice"}, (("url", "no URL", "Fix the URL."), ("twice", "called twice", "Once.")))
    ('called twice', 'init twice', 'Once.')
    """
    if message:
        said = facts.get(message)
        if not said:
            return None
        row = next((r for r in refusals if r[0] in " ".join(said.split())), refusals[0])
        return "", said, row[-1]
    for row in refusals:
        if facts.get(row[0]):
            return row[1], facts[row[0]], row[-1]
    return None


def refused(refusals: Refusals) -> Callable[[list[Hit], Context], bool]:
    """A ``confirm``: certain exactly when the match read which check refused the call (a row's fact)."""

    def confirmed(hits: list[Hit], ctx: Context) -> bool:
        return any(h.facts.get(row[0]) for h in hits for row in refusals)

    return confirmed


def describe_refusal(
    refusals: Refusals, otherwise: str, message: str = "", limit: int = 220
) -> Callable[[list[Hit], Context], tuple[str, str]]:
    """A ``describe``: "what went wrong: the refusal as printed" on the ranks it was seen on, and its row's fix;
    ``otherwise`` (and the first row's fix) when no row was read. With ``message`` (a table of texts, see
    `refusal_in`), ``otherwise`` is also what went wrong."""

    def describe(hits: list[Hit], ctx: Context) -> tuple[str, str]:
        found = refusal_in(merged(hits), refusals, message)
        if found is None:
            return otherwise + on_ranks(hits), refusals[0][-1]
        what, said, fix = found
        return f"{what or otherwise}: {one_line(said, limit)}" + on_ranks(hits), fix

    return describe


def refusal_recogniser(
    kind: str,
    title: str,
    refusals: tuple[tuple[str, str], ...],
    templates: tuple[str, ...],
    several: tuple[str, ...] = (),
    generic: tuple[str, ...] = (),
    limit: int = 260,
    facts: tuple[re.Pattern, ...] = (),
    also: tuple[Alternative, ...] = (),
    rules_out: tuple[tuple[str, tuple[str, ...]], ...] = (),
) -> Recogniser:
    """One recogniser for a table of plain texts a source file raises, each ``(text, fix)``: the texts are its
    anchors, the message on the line is the fact ``refusal``, the row whose text it holds gives the fix.

    A message that names its own cause is certain (once a real log has shown it: `Recogniser.seen`); the texts in
    ``several`` are messages more than one cause prints, whose fix names each of them: a hit on one of them stays
    likely. ``generic`` lists the texts that hold a word other failures print too (`GENERIC_WORDS`): likely as well.
    ``facts``, ``also`` and ``rules_out`` are the recogniser's own: what a message says beyond its text (the value
    it names), the other causes one of them is printed for (`Alternative`), and those a value it names excludes."""

    def confirmed(hits: list[Hit], ctx: Context) -> bool:
        said = " ".join(" ".join(h.facts.get("refusal", "").split()) for h in hits)
        return not any(text in said for text in (*several, *generic))

    return Recogniser(
        kind=kind,
        title=title,
        anchors=tuple(text for text, _ in refusals),
        templates=templates,
        facts=(refusal_pattern(refusals, after=limit), *facts),
        describe=describe_refusal(refusals, title, message="refusal", limit=limit),
        also=also,
        rules_out=rules_out,
        confirm=confirmed if several or generic else None,
        generic=generic,
        # the source line a traceback quotes ('raise ValueError("...")', 'self._log_and_throw(TypeError, "...")', a
        # message's own line of a multi-line raise) is not the message: its exception line is
        reject=_RAISE_LINE,
    )


# ... but an exception's repr at the start of a line (RPC's "On WorkerInfo(...):" retypes the remote error as
# "RuntimeError('...')" on the next line) is the message itself, not a source line
_RAISE_LINE = re.compile(
    r"^(?:\[rank\d+\]:)?(?![A-Z]\w{0,60}(?:Error|Exception)\(['\"])\s*(?:raise |[\w.]+\(|f?[\"'])"
)
