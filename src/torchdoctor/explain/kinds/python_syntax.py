"""Code written for a newer Python than the one that compiles it, by the syntax of the line CPython refuses.

CPython reports a construct its grammar does not have yet with no more than ``SyntaxError: invalid syntax``
(Python/pythonrun.c err_input's E_SYNTAX up to 3.8; Parser/pegen.c, later Parser/pegen_errors.c
_PyPegen_set_syntax_error from 3.9: the catalog's system:python-invalid-syntax), above it the file, the line
and the source line (first_failure reads them as the error's frame). The source line tells which release the
code needs: an f-string (3.6, PEP 498), an assignment expression ``:=`` or a ``/`` among a function's parameters
(3.8, PEPs 572 and 570), a ``match`` or ``case`` statement (3.10, PEP 634), ``except*`` (3.11, PEP 654), a
``type`` alias or a class or function with type parameters in brackets (3.12, PEP 695). A Python that has the
construct prints other words for a mistake inside it ("f-string: expecting '}'"), so the bare message on such a
line is most often an older interpreter: a cluster node's or a container's ``python3``, a virtual environment
made with another Python. Only likely: a typo elsewhere on that line prints the same.

    >>> needs("writer = SummaryWriter(comment=f'LR_{lr}')")
    ('3.6', 'an f-string')
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised, cut

FAMILY = "library releases that disagree with the code"

TEMPLATES = ("system:python-invalid-syntax",)
ANCHOR = "SyntaxError: invalid syntax"

# (the first release with it, what it is, how a source line shows it), newest first
_NEWER_SYNTAX = (
    ("3.12", "a type alias (type X = ...)", re.compile(r"^\s*type\s+[A-Za-z_]\w*(?:\[[^\]]*\])?\s*=")),
    ("3.12", "type parameters in brackets", re.compile(r"^\s*(?:def|class)\s+[A-Za-z_]\w*\s*\[")),
    ("3.11", "except*", re.compile(r"^\s*except\s*\*")),
    ("3.10", "a match statement", re.compile(r"^\s*(?:match\s+[^=]+|case\s+.+):\s*(?:#.*)?$")),
    ("3.8", "an assignment expression (:=)", re.compile(r":=")),
    ("3.8", "a positional-only parameter (/)", re.compile(r"^\s*def\s+\w+\s*\(.*,\s*/\s*[,)]")),
    ("3.6", "an f-string", re.compile(r"(?<![\w'\"])(?:[rR]?[fF]|[fF][rR])(?:'|\")")),
)


def needs(code: str) -> tuple[str, str] | None:
    """(the first Python with it, what it is) for the newest construct ``code`` uses that older releases cannot
    parse; None when it uses none of them."""
    for release, what, shown in _NEWER_SYNTAX:
        if shown.search(code):
            return release, what
    return None


def diagnosis(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) for CPython's bare ``invalid syntax`` on a source line that uses a newer Python's syntax;
    None for any other SyntaxError, or a line that uses none."""
    if raised.type != "SyntaxError" or raised.message.strip() != "invalid syntax":
        return None
    code = raised.raised_code or raised.code
    found = needs(code)
    if found is None:
        return None
    release, what = found
    place = f" ({raised.raised_in.file}:{raised.raised_in.line})" if raised.raised_in else ""
    summary = (
        f"the code needs Python {release} or newer ({what}: `{cut(code, 80)}`{place}), and the Python that "
        "compiled it is older; or a typo on that line"
    )
    fix = (
        f"Run it with Python {release} or newer: python3 --version on the machine that failed (on every node of "
        "a multi-node job: each starts its own python3), and the python the launcher uses (which python, the "
        f"virtual environment's or the container's). Use an environment with a newer Python (conda create -n "
        f"train python=3.11), or, to stay on that Python, rewrite {what} in its older form."
    )
    return summary, fix
