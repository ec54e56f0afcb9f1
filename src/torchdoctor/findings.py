"""`Finding`: what a check returns, and the renderers that show a list of them.

A check is a plain function that looks at the system and returns findings; the CLI only collects and
renders them. Statuses: ``ok`` (all is well), ``warn`` (works, but something will bite), ``fail`` (broken),
``skip`` (does not apply here, with the reason in the summary).
"""

from __future__ import annotations

import codecs
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("ok", "warn", "fail", "skip")
_SEVERITY = {"skip": 0, "ok": 0, "warn": 1, "fail": 2}
_MARKS = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red"), "skip": ("–", "dim")}
# What a terminal that cannot show a character (PYTHONIOENCODING=ascii, a latin-1 locale) gets instead;
# anything else it cannot show becomes "?".
ASCII_FALLBACK = {
    "✓": "+", "✗": "x", "–": "-", "—": "-", "…": "...", "×": "x", "≤": "<=", "≥": ">=", "→": "->",
    "←": "<-", "≈": "~", "µ": "u", "±": "+/-", "‘": "'", "’": "'", "“": '"', "”": '"', "•": "*", "≠": "!=",
}  # fmt: skip
_FALLBACK_ERRORS = "torchdoctor-ascii"


def _ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(ASCII_FALLBACK.get(c, "?") for c in text), error.end


codecs.register_error(_FALLBACK_ERRORS, _ascii_fallback)


def shows_marks(stream) -> bool:
    """Whether ``stream`` can show the marks (``✓ ! ✗ –``) as they are; not under ``PYTHONIOENCODING=ascii``
    or a latin-1 terminal."""
    try:
        "".join(mark for mark, _ in _MARKS.values()).encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def fall_back_to_ascii(stream) -> None:
    """Make ``stream`` (stdout, stderr) write ASCII stand-ins (``+ ! x -``, ``...``) for what its encoding
    cannot show, instead of raising `UnicodeEncodeError` halfway through a report."""
    if not shows_marks(stream) and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors=_FALLBACK_ERRORS)


@dataclass
class Finding:
    """One verdict of one check.

    >>> Finding("sys.python", "ok", "Python 3.11.7")
    Finding(id='sys.python', status='ok', summary='Python 3.11.7', details={}, fix='')
    """

    id: str
    status: str
    summary: str
    details: dict[str, Any] = field(default_factory=dict)
    fix: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(
                f"Finding {self.id!r}: status {self.status!r} is not one of {', '.join(STATUSES)}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def worst(findings: list[Finding]) -> str:
    """The overall status: ``fail`` if any failed, else ``warn`` if any warned, else ``ok``."""
    level = max((_SEVERITY[f.status] for f in findings), default=0)
    return {0: "ok", 1: "warn", 2: "fail"}[level]


def exit_code(findings: list[Finding]) -> int:
    """0 when nothing failed (warnings allowed), 1 when a check failed."""
    return 1 if worst(findings) == "fail" else 0


def to_json(findings: list[Finding]) -> str:
    """``{"status": <worst>, "findings": [...]}`` as the ``--json`` flag prints it."""
    return json.dumps(
        {"status": worst(findings), "findings": [f.to_dict() for f in findings]}, indent=2, default=str
    )


def make_console(stderr: bool = False):
    """A rich console: colours only on a terminal, and none at all (no dim or bold either) under
    ``NO_COLOR`` (which ``--no-color`` sets)."""
    from rich.console import Console

    plain = os.environ.get("NO_COLOR", "") != ""
    return Console(stderr=stderr, color_system=None if plain else "auto")


def render_human(findings: list[Finding], console=None, verbose: bool = False) -> None:
    """One line per finding (``✓ ! ✗ –``), the fix indented under each that is not ok, details with ``-v``."""
    from rich.markup import escape

    console = console or make_console()
    for f in findings:
        mark, colour = _MARKS[f.status]
        console.print(
            f"[{colour}]{mark}[/] {escape(f.summary)} [dim]({f.id})[/]", highlight=False, soft_wrap=True
        )
        if f.fix and f.status != "ok":
            for line in f.fix.splitlines():  # soft_wrap: a wrapped command would break when copied
                console.print(f"    [cyan]{escape(line)}[/]", highlight=False, soft_wrap=True)
        if verbose and f.details:
            for key, value in f.details.items():
                if isinstance(value, str) and "\n" in value.strip():  # a traceback: whole, line by line
                    console.print(f"    [dim]{escape(str(key))}:[/]", highlight=False)
                    for line in value.rstrip().splitlines():
                        console.print(f"      [dim]{escape(line)}[/]", highlight=False, soft_wrap=True)
                    continue
                # whole and on one line: the facts are what -v is for, and a pipe is not 80 columns wide
                fact = value if isinstance(value, str) else json.dumps(value, default=str)
                console.print(
                    f"    [dim]{escape(str(key))}: {escape(fact)}[/]", highlight=False, soft_wrap=True
                )
    counts = {s: sum(f.status == s for f in findings) for s in STATUSES}
    verdict = worst(findings)
    colour = _MARKS[verdict][1]
    console.print(
        f"\n[{colour}]{verdict.upper()}[/]: {counts['ok']} ok, {counts['warn']} warning(s), "
        f"{counts['fail']} failure(s), {counts['skip']} skipped",
        highlight=False,
    )


def render_markdown(findings: list[Finding]) -> str:
    """A Markdown table of findings with the fixes below it, for pasting into a GitHub issue."""
    lines = ["| | check | verdict |", "|---|---|---|"]
    for f in findings:
        summary = f.summary.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {_MARKS[f.status][0]} | `{f.id}` | {summary} |")
    fixes = [f for f in findings if f.fix and f.status in ("warn", "fail")]
    if fixes:
        lines.append("")
        for f in fixes:
            lines += ["", f"**{f.id}** — how to fix:", "", "```", f.fix, "```"]
    return "\n".join(lines) + "\n"
