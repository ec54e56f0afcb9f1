"""Running every recogniser over the candidate lines of one log: hits, and the facts of the whole log."""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import CONTEXT_FACTS, RECOGNISERS
from torchdoctor.explain.reader import TAIL, Window, ranks_in_head, windows
from torchdoctor.explain.recognisers import Context, Hit

# A log that repeats one failure a million times still gives a bounded report.
MAX_HITS_PER_KIND = 1000
SHORT = 256 * 1024  # bytes: a log this small has every line looked at
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception)\b(?::|$)")


class Collector:
    """Accumulates hits and context over every file of one invocation."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.ctx = Context()
        self._per_kind: dict[str, int] = {}
        self._order = 0

    def read(
        self, stream, source: str, rank: int | None = None, head: bytes = b"", size: int | None = None
    ) -> None:
        """Read one log (a binary stream) whose text came from ``source`` (and ``rank``, when known); a
        ``size`` in bytes has its last `TAIL` bytes read line by line, as every log has its first."""
        self.ctx.sources.append(source)
        if rank is not None:
            self.ctx.ranks.add(rank)
        self.ctx.ranks |= ranks_in_head(head)
        if head:
            self._context(head.decode("utf-8", "replace"))
        # A short paste (all of it in its head) is read line by line: an issue title quotes a message without
        # the "RuntimeError:" that holds the trigger. A long log is read through the triggers.
        short = len(head) < SHORT
        tail_from = size - TAIL if size is not None and size > TAIL else None
        for window in windows(stream, every_line=short, every_line_from=tail_from, every_line_to=TAIL):
            self._window(window, source, rank)

    def _window(self, window: Window, source: str, file_rank: int | None) -> None:
        rank = window.rank if window.rank is not None else file_rank
        if window.rank is not None:
            self.ctx.ranks.add(window.rank)
        self._line(window.line, window.following, window.number, source, rank)
        for number in window.also:
            at = number - window.number - 1
            self._line(window.following[at], window.following[at + 1 :], number, source, rank)

    def _line(self, line: str, following: list[str], number: int, source: str, rank: int | None) -> None:
        self.ctx.candidates += 1
        self._order += 1
        self._context(line)
        if _ERROR_LINE.match(line):
            self.ctx.last_error_line = line.strip()[:300]
        for recogniser in RECOGNISERS:
            if not any(anchor in line for anchor in recogniser.anchors):
                continue
            text = "\n".join([line, *following[: recogniser.span]]) if recogniser.span else line
            facts = recogniser.read(text)
            if facts is None:
                continue
            count = self._per_kind.get(recogniser.kind, 0)
            self._per_kind[recogniser.kind] = count + 1
            if count < MAX_HITS_PER_KIND:
                specific = recogniser.specific_on(line)
                self.hits.append(Hit(recogniser.kind, facts, source, number, rank, self._order, specific))

    def _context(self, text: str) -> None:
        for literal, pattern in CONTEXT_FACTS:
            if literal in text:
                found = pattern.search(text)
                if found:
                    for key, value in found.groupdict().items():
                        self.ctx.facts.setdefault(key, value)

    def count(self, kind: str) -> int:
        """How many times ``kind`` was seen, including the hits not kept."""
        return self._per_kind.get(kind, 0)
