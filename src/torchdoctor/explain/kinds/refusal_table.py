"""A kind read from a table of refusals: (the text a source prints, the fix for it), where each message names its own
cause. One pattern finds the message around any of the table's texts; one lookup gives the message as said and its
fix."""

from __future__ import annotations

import re

Refusals = tuple[tuple[str, str], ...]


def refusal_pattern(refusals: Refusals, name: str = "refusal", after: int = 220) -> re.Pattern:
    """The message that holds one of the table's texts, from after the exception's colon to the end of its line,
    as the fact ``name``.

    >>> refusal_pattern((("must be set", "Set it."),)).search("ValueError: x must be set here")["refusal"]
    ' x must be set here'
    """
    texts = "|".join(re.escape(text) for text, _ in refusals)
    return re.compile(rf"(?P<{name}>[^\n:]{{0,150}}?(?:{texts})[^\n]{{0,{after}}})")


def said_and_fix(message: str, refusals: Refusals, limit: int = 220) -> tuple[str, str]:
    """The message on one line, cut after a word past ``limit`` characters (whole, not quoted: quote() would drop
    an apostrophe such as "FSDP's" as an unbalanced quote), and the fix of the first text of the table it holds."""
    said = " ".join(message.split())
    fix = next((f for text, f in refusals if text in said), refusals[0][1])
    return (said if len(said) <= limit else said[:limit].rsplit(" ", 1)[0] + " …"), fix
