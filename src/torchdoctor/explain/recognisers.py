"""What a recogniser is: the knowledge about one kind of failure, as data.

A `Recogniser` names the literal text torch / NCCL / CUDA / the compiler print for one kind of failure
(``anchors``: one must be on the line, exactly as printed), an optional pattern that must match the line and
the few lines after it (``match``), patterns whose named groups become facts (``facts``), and two functions
that turn the facts of every place it was seen into a summary and a fix. ``role`` says whether the kind is a
root cause or what a cause elsewhere leads to (a watchdog timeout on the ranks that waited). ``absorbs``
lists the vaguer kinds the same failure also prints (``duplicate_gpu`` arrives as an NCCL "invalid usage").

``templates`` cites the ids of the catalog templates (`torchdoctor.explain.catalog`) the anchors are taken
from.

How sure a finding is follows one rule (`Recogniser.confidence`): a finding is *certain* only when the log
carries evidence specific to that cause — the exact message its source prints for that cause and for nothing
else. An anchor that other failures print too (a bare timeout, "Connection refused/reset", "Killed", an exit
code, NCCL's "unhandled system error", a collective's bare RuntimeError) is listed in ``generic``: a hit on it
alone makes the finding *likely*. ``confirm``, where a recogniser has one, names the confirming facts instead
(the WARN line that says which system call failed, exitcode -9 beside "Killed"): the finding is certain exactly
when they are there. A likely finding ranks below a certain one. A *consequence* (a peer that closed, torchrun's
summary, a victim's timeout) is never certain when no cause is in the log: verdict.py then says the cause was
not found and where to look. `GENERIC_WORDS` lists the words that make an anchor generic; a test holds every
recogniser to it. And a message mapped to its cause from the source alone is not yet evidence: a finding is
certain only on an anchor seen on a real log whose thread established that same cause (`catalog.seen_on`, the
train half of the corpus and the public fixture logs; benchmarks/explain_seen_on.py writes it). Until such a log
shows it, the finding is likely and says so (verdict.UNSEEN). Nor is a message evidence of its cause where real
logs of other causes printed it too: certain only where at least `SURE_SHARE` of the labelled logs that showed
the anchor are of that cause (the rest is counter-evidence, `Recogniser.contested`; verdict.py names those causes
after it).

Where the same message is printed for more than one cause, the recogniser says so as data: ``also`` lists the
other kinds it fits (`Alternative`: the kind, what it is in a few words, its fix), likelier first. A *likely*
finding names them after its own, in its summary, its fix and ``details["alternatives"]``: the user reads
both instead of acting on one guess. Where the log's other lines say which cause printed it (a setting, a
frame: ``Alternative.first_when``), that reading leads and the recogniser's own is named after it. A
``fallback`` kind (a warning every run that exits without cleaning up prints) counts only when nothing else in
the log explains the failure.

Adding a kind is one `Recogniser` in one of the ``kinds/`` modules and one test on a real log line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torchdoctor.explain.catalog import seen_for_others, seen_on
from torchdoctor.rank_list import who

Facts = dict[str, Any]

# the share of the labelled real logs showing an anchor that must be of its kind for the anchor to make a finding
# certain: a message printed for other causes too, one log in ten or more, is not evidence of this one alone
SURE_SHARE = 0.9


@dataclass
class Hit:
    """One place a kind was seen: its facts, the file, the line number, the rank (when known)."""

    kind: str
    facts: Facts
    source: str
    line: int
    rank: int | None = None
    order: int = 0  # position in the whole input, for "what happened first"
    specific: bool = True  # False: only a generic anchor of its recogniser was on the line
    anchor: str = ""  # the anchor found on the line (a specific one where there is one)
    warning: bool = False  # a warning's line (Python's "UserWarning: ", a "WARNING:"): the run went on


@dataclass
class Context:
    """What the whole input says besides the failures: versions, settings, the ranks that wrote logs."""

    facts: Facts = field(default_factory=dict)
    ranks: set[int] = field(default_factory=set)  # every rank seen (a per-rank file or a [rankN]: prefix)
    sources: list[str] = field(default_factory=list)
    last_error_line: str = ""  # the last "SomethingError: ..." line, named when nothing is recognised
    # the first exception quoted inside a sentence ("I get this error: TypeError: ..."), where no exception
    # line starts a line: (type, message, source, line number); read only when nothing else is recognised
    prose_exception: tuple[str, str, str, int, str] | None = None  # type, message, source, line, its sentence
    cause_ranks: set[int] = field(default_factory=set)  # ranks where a root cause was seen
    # ranks whose log shows an error of any kind, a victim's (a timeout, a lost peer) included: not quiet ones
    erring_ranks: set[int] = field(default_factory=set)
    candidates: int = 0  # lines that were looked at closely


@dataclass(frozen=True)
class Alternative:
    """Another cause the same message is printed for: its kind, what it is in a few words, its fix."""

    kind: str
    title: str
    fix: str
    when: tuple[
        str, ...
    ] = ()  # facts one of which the hits (or the whole log) must have for this reading to apply (none: always)
    unless: tuple[str, ...] = ()  # facts none of the hits may have for this reading to apply
    unless_log: tuple[
        str, ...
    ] = ()  # facts of the whole log that rule this reading out (a traceback's frames)
    # facts, every one of them in the hits or the whole log, that make this reading the likelier one: the finding
    # then leads with it and names its recogniser's own reading as the other (a message printed for several
    # causes whose other lines, a setting or a frame, say which); ``because`` says which line chose, its
    # ``{fact}`` fields filled from those facts
    first_when: tuple[str, ...] = ()
    because: str = ""
    # where the log lacks them: what to look at that would tell this reading from the recogniser's own
    told_by: str = ""


class Pattern:
    """A regular expression compiled the first time it is used, for the kinds modules' ``match`` and ``facts``.

    A recogniser's patterns are read only on a line that holds one of its anchors, and a log holds the anchors
    of a few kinds: compiling the thousand patterns of every kind as `explain` started cost it about as much as
    the rest of its start (0.6 s of CPU). Used as `re.Pattern` is: ``search``, ``match``, ``finditer``, ``sub``,
    ``pattern`` (its text, to join into a larger pattern), the rest of the compiled pattern's attributes.

    >>> Pattern(r"rank (?P<rank>\\d+)").search("on rank 3")["rank"]
    '3'
    """

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags, self._compiled = pattern, flags, None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, *args):
        return self.compiled().search(*args)

    def __getattr__(self, name: str):
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"


@dataclass(frozen=True)
class Recogniser:
    """One kind of failure: how it is recognised, what is read from it, what to do about it."""

    kind: str
    anchors: tuple[str, ...]
    describe: Callable[[list[Hit], Context], tuple[str, str]]  # -> (summary, fix)
    match: re.Pattern | None = None
    facts: tuple[re.Pattern, ...] = ()
    role: str = "cause"  # cause | consequence
    absorbs: tuple[str, ...] = ()
    title: str = ""  # the kind in a few words, used when another finding names this one
    span: int = 0  # lines after the anchored one that belong to the message (facts are read there too)
    reject: re.Pattern | None = None  # text that looks like this kind but is known noise
    templates: tuple[str, ...] = ()  # ids of the catalog templates the anchors come from
    confirm: Callable[[list[Hit], Context], bool] | None = None  # None: the anchor alone is certain
    # facts of the whole log one of which must be there for the kind to count at all (a setting every run
    # prints is a finding only beside the failure it causes)
    requires: tuple[str, ...] = ()
    # (a hit's fact, facts of the whole log): a hit holding that fact counts only where the log has every one of
    # those (a message that is this kind's only beside settings the log shows elsewhere)
    requires_beside: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # anchors other failures print too (see GENERIC_WORDS): a hit on one of them alone is only "likely"
    generic: tuple[str, ...] = ()
    # other causes the same message is printed for, likelier first: named after this one when it is likely
    also: tuple[Alternative, ...] = ()
    # (a hit's fact, other causes): where a hit holds that fact, readings of the same message on other causes' real
    # logs (seen_on.tsv) that it excludes, neither named nor offered (a missing image is no torn checkpoint)
    rules_out: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # a finding only when nothing else in the log is: a warning that healthy exits print too
    fallback: bool = False
    # facts that make one hit a warning of this kind (a line healthy runs print too, as ``fallback`` is for a whole
    # kind): a hit holding one counts only where the log shows no error and no other kind (verdict.py)
    fallback_facts: tuple[str, ...] = ()
    # its fallback_facts' hits yield to any other kind but are a failure, not a warning, when nothing else is there
    # (an uncaught C++ exception's abort: no healthy run prints it)
    fallback_fails: bool = False
    # ... except to kinds that are only consequences of another rank's failure: its fallback names that failure (launch's
    # verdict on a rank that died without a Python error, beside the lost peer and torchrun's summary)
    fallback_over_consequences: bool = False
    # read only on a line torch's own "[rankN]:" prefix starts (init_process_group's excepthook: the process had
    # made its process group when it raised)
    prefixed: bool = False
    # (a hit's fact, the package whose object or module it names ("": the fact's own value, a module), the kind
    # when the code that asked for it is that package's own, the kind when it is another installed package's;
    # "" keeps this kind): whose code asked for a name decides whose release it is (kinds/asking_frame.py)
    kind_by_asker: tuple[tuple[str, str, str, str], ...] = ()
    # a hit counts only where this says its facts hold (what a line's regex cannot see: the file that raised)
    holds: Callable[[Facts], bool] | None = None
    # facts of the exception the line is, read from its own traceback (first_failure.Raised: its frames, the frame
    # it was raised in and that frame's source line), not from any line of the log: where it was raised decides
    # its reading (an optimizer's update, a path class made by the user's own call)
    raised_facts: Callable[[Any], Facts] | None = None

    def only_warned(self, hits: list[Hit]) -> bool:
        """Whether ``hits`` are only this kind's warnings: a ``fallback`` kind, or every hit holding one of its
        ``fallback_facts``; never a warning raised as the run's error (PYTHONWARNINGS=error)."""
        if any("warning_raised" in h.facts for h in hits):
            return False
        return self.fallback or bool(
            self.fallback_facts and all(any(f in h.facts for f in self.fallback_facts) for h in hits)
        )

    def only_warnings(self, hits: list[Hit]) -> bool:
        """Whether ``hits`` say nothing failed: ``only_warned``, unless its fallback facts are a failure
        (``fallback_fails``)."""
        return self.only_warned(hits) and not (self.fallback_fails and not self.fallback)

    def kind_of(self, facts: Facts) -> str:
        """The kind a hit with ``facts`` counts for: this one, unless ``kind_by_asker`` says the code that asked
        for the name it reads (``asked_in_package``, collect.py) makes it another's."""
        for fact, package, own, other in self.kind_by_asker:
            if fact not in facts or "asked_in_package" not in facts:
                continue
            owner = (package or str(facts[fact])).split(".")[0]
            # torch's own code lacking a torch name: a build without that part, which other kinds read
            if owner == "torch":
                continue
            asker = facts["asked_in_package"]
            if asker == owner and own:
                return own
            if asker and asker != owner and other:
                return other
        return self.kind

    def confidence(self, hits: list[Hit], ctx: Context) -> str:
        """``certain`` when the log holds evidence specific to this cause, else ``likely``.

        With a ``confirm``: certain exactly when its confirming facts are there. Without: certain when some
        hit came from a specific anchor (one not in ``generic``). Either way, only on an anchor seen on a real
        log labelled with this kind (`seen`): a message mapped from its source alone stays likely; and not on
        one that real logs of other causes printed too (`contested`).
        """
        proven = [h for h in hits if self.seen([h]) and not self.contested([h])]
        if self.confirm is not None:
            return "certain" if proven and self.confirm(hits, ctx) else "likely"
        return "certain" if any(h.specific for h in proven) else "likely"

    def stands(self, hit: Hit, ctx: Context) -> bool:
        """Whether ``hit`` counts in this log: ``holds`` says so of its facts, and the facts ``requires_beside``
        asks beside its own are all there."""
        if self.holds is not None and not self.holds(hit.facts):
            return False
        return all(
            all(f in ctx.facts for f in needed) for own, needed in self.requires_beside if own in hit.facts
        )

    def seen(self, hits: list[Hit]) -> bool:
        """Whether a hit's anchor was seen on a real log whose thread established this kind as its cause
        (`catalog.seen_on`: the train half of the corpus and the public fixture logs). A consequence (a peer that
        closed, torchrun's summary) is no cause a thread establishes: what it says happened is what its message
        says, and it is never certain without a cause in the log anyway (verdict.py)."""
        if self.role != "cause":
            return True
        known = seen_on()
        return any((self.kind, h.anchor) in known for h in hits)

    def contested(self, hits: list[Hit]) -> dict[str, int]:
        """The other causes whose labelled real logs printed a hit's anchor, ``{kind: logs}``, where they are
        more than ``1 - SURE_SHARE`` of the logs that printed it (empty: the anchor is this kind's evidence)."""
        found: dict[str, int] = {}
        if self.role != "cause":
            return found
        for anchor in {h.anchor for h in hits}:
            own, others = seen_for_others(self.kind, anchor)
            if own < SURE_SHARE * (own + sum(others.values())):
                for kind, logs in others.items():
                    found[kind] = found.get(kind, 0) + logs
        return found

    def specific_on(self, line: str) -> bool:
        """Whether ``line`` holds one of this kind's specific anchors (not only a generic one)."""
        return not self.generic or any(a in line for a in self.anchors if a not in self.generic)

    def anchor_on(self, line: str) -> str:
        """The anchor of this kind on ``line``: a specific one where there is one, else the first generic one."""
        found = [a for a in self.anchors if a in line]
        return next((a for a in found if a not in self.generic), found[0] if found else "")

    def read(self, window: str) -> Facts | None:
        """The facts in ``window`` (a line and the lines after it), or None when it is not this kind."""
        found: Facts = {}
        if self.reject is not None and self.reject.search(window):
            return None
        if self.match is not None:
            matched = self.match.search(window)
            if matched is None:
                return None
            found.update({k: v for k, v in matched.groupdict().items() if v is not None})
        for pattern in self.facts:
            matched = pattern.search(window)
            if matched:
                for key, value in matched.groupdict().items():
                    if value is not None:
                        found.setdefault(key, value)
        return found


# Words other failures print too: an anchor holding one is generic, and its recogniser either lists it in
# ``generic`` or has a ``confirm`` (test_explain_confidence.py checks every recogniser against this list).
GENERIC_WORDS: tuple[str, ...] = (
    "timed out",
    "timeout",
    "connection refused",
    "connection reset",
    "connection closed",
    "killed",
    "exitcode",
    "exit code",
    "unhandled system error",
    "ncclsystemerror",
    "nccl error",
    "unhandled cuda error",
    "invalid usage",
    "unspecified launch failure",
    "failed to connect",
    "network error",
)


def has_fact(key: str) -> Callable[[list[Hit], Context], bool]:
    """A ``confirm`` that holds when any hit, or the whole log's context, has fact ``key``."""

    def confirmed(hits: list[Hit], ctx: Context) -> bool:
        return any(key in h.facts for h in hits) or key in ctx.facts

    return confirmed


def called_from_own_code(*stack: str) -> Callable[[list[Hit], Context], bool]:
    """A ``confirm`` for a refusal that any code reaching the call prints (torch's check on its argument, made
    from the user's script or from a library's code): certain when a hit's traceback shows the user's own code
    making the call, its frames below the user's innermost one in ``stack``'s packages only (torch's own), none
    in another installed library's. The line alone, or a library's frames, leave it likely."""
    allowed = frozenset(stack)

    def confirmed(hits: list[Hit], ctx: Context) -> bool:
        return any("frame_packages" in h.facts and set(h.facts["frame_packages"]) <= allowed for h in hits)

    return confirmed


def unless_a_library_called(*stack: str) -> Callable[[list[Hit], Context], bool]:
    """A ``confirm`` for a refusal whose reading is the caller's mistake, which an installed library's code makes
    too: certain unless every hit was raised with an installed package's frames (other than ``stack``'s, torch's
    own) below the user's code, where that package made the call (a bug of its release: `library_call` names it).
    Laxer than `called_from_own_code`: the line alone, without a traceback, stays certain."""
    allowed = frozenset(stack)

    def confirmed(hits: list[Hit], ctx: Context) -> bool:
        return any(not set(h.facts.get("frame_packages", ())) - allowed for h in hits)

    confirmed.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchor decides
    return confirmed


def library_call(what: str, fix: str) -> Alternative:
    """The other reading of a refusal `called_from_own_code` confirms: ``what`` a library's code did with what it
    was handed, a bug of its release or a call the installed releases do not fit; ``fix`` says what to do."""
    return Alternative(
        "library_version_bug",
        what,
        "When the traceback's frames below your script are an installed package's (site-packages), that "
        f"library made the call: {fix}",
    )


def first(hits: list[Hit], key: str, default: Any = None) -> Any:
    """The first value of fact ``key`` among ``hits`` (in input order)."""
    return next((h.facts[key] for h in hits if key in h.facts), default)


def merged(hits: list[Hit]) -> Facts:
    """The facts of every hit, the first place a fact was seen winning."""
    facts: Facts = {}
    for hit in hits:
        for key, value in hit.facts.items():
            facts.setdefault(key, value)
    return facts


def ranks_of(hits: list[Hit]) -> list[int]:
    """The ranks the hits came from, sorted."""
    return sorted({h.rank for h in hits if h.rank is not None})


def on_ranks(hits: list[Hit]) -> str:
    """`` on rank 3`` / `` on ranks 0-2`` / ``""`` when no rank is known."""
    ranks = ranks_of(hits)
    if not ranks:
        return ""
    return f" on {who(ranks)}"


def where(hits: list[Hit]) -> str:
    """`` (run.log:12)``: where the first hit was read."""
    hit = hits[0]
    return f" ({hit.source}:{hit.line})" if hit.source else f" (line {hit.line})"


def size_in_bytes(number: str, unit: str) -> float:
    """``("450.00", "MiB")`` -> bytes; torch prints B, KiB, MiB, GiB, TiB (and older versions KB, MB, GB)."""
    scale = {"B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50, "E": 2**60}
    return float(number) * scale.get(unit[:1].upper(), 1)
