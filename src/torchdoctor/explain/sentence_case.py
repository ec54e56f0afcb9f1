"""A message whose first letter was capitalised where a sentence starts, read as its source prints it.

A user who retypes an error into an issue, or a tool that prints it as a sentence, writes "RuntimeError: No kernel
image is available for execution on the device" where CUDA prints "no kernel image ...". The anchors are literal
and match case-sensitively (collect.py), so such a line held no anchor. Here each anchor that begins with a
lower-case word and is a message's words (three words or more: not an identifier, a path or a short phrase) has a
capitalised twin, and a twin found where a sentence starts (the line's start, after ": ", ". ", an opening quote or
bracket) is read as the anchor it capitalises. Only the first letter, only there: a twin inside a name
("ZeroRedundancyOptimizer got an empty parameter list" holds "Optimizer got an empty parameter list") or after a
word is not read, and no twin is made where the capitalised words are an anchor of their own ("Address already in
use", which other releases print so).

    >>> twins = capitalised(("no kernel image is available", "Killed"))
    >>> twins
    {'No kernel image is available': 'no kernel image is available'}
    >>> as_printed("RuntimeError: No kernel image is available here", by_beginning(twins))
    'RuntimeError: no kernel image is available here'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_MESSAGE_WORDS = (
    3  # an anchor of fewer words is a phrase or a name, which a sentence may begin with for itself
)
_STARTS_WITH_A_WORD = re.compile(r"[a-z]+ ")
# what may come right before a sentence's first letter, spaces aside: nothing, or the end of a label or of a
# sentence, an opening quote, bracket or backtick, a list's dash or bullet, a quoted reply's ">"
_SENTENCE_BEFORE = frozenset(":.!?\"'`([{<>-*")


def capitalised(anchors: Iterable[str]) -> dict[str, str]:
    """Each anchor a sentence may begin with, by its capitalised twin (``{twin: anchor}``): the anchors that begin
    with a lower-case word and have three words or more, whose twin is not an anchor itself."""
    every = set(anchors)
    return {
        twin: anchor
        for anchor in sorted(every)
        if _STARTS_WITH_A_WORD.match(anchor)
        and len(anchor.split()) >= _MESSAGE_WORDS
        and (twin := anchor[0].upper() + anchor[1:]) not in every
    }


def at_sentence_start(line: str, at: int) -> bool:
    """Whether position ``at`` of ``line`` starts a sentence: only spaces before it, or, spaces aside, one of
    the characters a sentence follows (`_SENTENCE_BEFORE`)."""
    before = line[:at].rstrip()
    return not before or before[-1] in _SENTENCE_BEFORE


_GRAM = 4  # twins are looked up by their first four letters


def by_beginning(twins: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """The twins by their first `_GRAM` letters (``{"No k": ("No kernel image is available", ...)}``)."""
    found: dict[str, tuple[str, ...]] = {}
    for twin in twins:
        found[twin[:_GRAM]] = (*found.get(twin[:_GRAM], ()), twin)
    return found


_BEGINNING = (
    8  # letters of a twin the pre-filter looks for (collect.py): enough to pass few lines that hold none
)


def beginnings(twins: dict[str, tuple[str, ...]]) -> list[str]:
    """The first `_BEGINNING` letters of every twin in ``twins`` (`by_beginning`'s), each once, sorted."""
    return sorted({twin[:_BEGINNING] for found in twins.values() for twin in found})


# a capital letter where a sentence may start (`at_sentence_start` says whether it does)
_CAPITAL = re.compile(r"(?:^|[:.!?\"'`(\[{<>*-])[ \t]*([A-Z])")


def as_printed(line: str, twins: dict[str, tuple[str, ...]]) -> str:
    """``line`` with every twin (`by_beginning`'s ``twins``) that starts a sentence written as the anchor it
    capitalises, its first letter in lower case (the line itself where there is none)."""
    for found in _CAPITAL.finditer(line):
        at = found.start(1)
        if any(line.startswith(twin, at) for twin in twins.get(line[at : at + _GRAM], ())):
            line = line[:at] + line[at].lower() + line[at + 1 :]
    return line
