"""Which recognisers read a message only past its first sentence: a message cut there (an issue title, a log line
cut at a terminal's width, a paste of the first sentence) is then not read.

For every recogniser and each catalog template it cites (the templates it is anchored on, each mapped to a kind in
the catalog), this looks for one of the recogniser's anchors in the template's first sentence (up to the first
``.``, ``!`` or ``?`` followed by a space, or the first line; an ellipsis and "e.g." / "i.e." do not end it). Each
pair with none is printed with that first sentence and the anchors it does hold later; the last line counts them.

    python benchmarks/first_sentence_anchors.py            # the pairs, then the count
    python benchmarks/first_sentence_anchors.py --count    # the count only

Session 38's count, not kept then, was 130 pairs; session 39's is in docs/explain.md ("Anchors in a message's first
sentence").
"""

from __future__ import annotations

import argparse
import re
import sys

from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.kinds import RECOGNISERS

# a sentence's end: ". ", "! ", "? " (or at the text's end), never an ellipsis, "e.g." or "i.e.", nor a dot inside
# a name (torch.cuda, 2.1.0) which has no space after it
_END = re.compile(r"(?<!\.\.)(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?](?=\s|$)")


def first_sentence(text: str) -> str:
    """The first sentence of a template: up to its first line's end or its first full stop before a space
    (``first_sentence("Bad value. Use {}.")`` is ``"Bad value."``)."""
    line = text.split("\n", 1)[0]
    end = _END.search(line)
    return line[: end.end()] if end else line


def unread_pairs() -> list[tuple[str, str, str, list[str]]]:
    """(kind, template id, first sentence, the anchors found later in the template) for each recogniser and cited
    template with no anchor in the first sentence."""
    templates = by_id()
    found = []
    for recogniser in RECOGNISERS:
        for ident in recogniser.templates:
            template = templates.get(ident)
            if template is None:
                continue  # test_explain_catalog checks every cited id exists
            head = first_sentence(template.text)
            if any(anchor in head for anchor in recogniser.anchors):
                continue
            later = [anchor for anchor in recogniser.anchors if anchor in template.text]
            found.append((recogniser.kind, ident, head, later))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", action="store_true", help="print the count only")
    args = parser.parse_args(argv)
    pairs = unread_pairs()
    if not args.count:
        for kind, ident, head, later in pairs:
            print(f"{kind}\t{ident}\t{head[:120]!r}\tlater: {later[:2]}")
    total = sum(len(r.templates) for r in RECOGNISERS)
    print(f"recogniser/template pairs with no anchor in the first sentence: {len(pairs)} of {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
