"""Where a log's hard-wrapped line splits a recogniser's anchor: whether joining wrapped lines would let explain read more.

A terminal's or a paste's hard wrap (80 or 120 columns, a GitHub text box) puts the end of a message on the next
line; an anchor cut in two is on neither line, and the message is not read. For every pair of adjacent lines of a
labelled log (the first `LONG` characters or longer, the second not blank), this looks for anchors on the two
joined (directly, or with a space between) that neither line holds alone, and prints each such pair with the
kinds it would add; the last line counts the logs.

    python benchmarks/wrapped_anchors.py tests/fixtures/corpus/train

Session 38, train (852 logs): no pair. A join of wrapped lines had nothing to read there, so explain does not join
them (a join is never unambiguous: the next line may be another message).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from explain_corpus import labels, refuse_unlabelled

from torchdoctor.explain.collect import places
from torchdoctor.explain.kinds import RECOGNISERS

LONG = 40  # characters a line needs before its end can be a wrap


def split_anchors(lines: list[str]) -> list[tuple[int, list[str], list[str]]]:
    """Each line number (1-based) whose line joined to the next holds an anchor neither holds alone, with the kinds
    and the anchors the join adds."""
    found = []
    for number, (first, second) in enumerate(zip(lines, lines[1:], strict=False), 1):
        first, second = first.rstrip(), second.strip()
        if len(first) < LONG or not second:
            continue
        alone = places(first) | places(second)
        for joined in (first + second, f"{first} {second}"):
            added = places(joined) - alone
            if added:
                kinds = sorted({RECOGNISERS[p].kind for p in added})
                anchors = sorted(
                    {a for p in added for a in RECOGNISERS[p].anchors if a in joined}
                    - {a for p in added for a in RECOGNISERS[p].anchors if a in first or a in second}
                )
                found.append((number, kinds, anchors))
                break
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder with a SOURCES.md table (train: it names files)")
    args = parser.parse_args(argv)
    if refuse_unlabelled([args.folder]):
        return 2
    logs = 0
    every = labels(args.folder)
    for label in every:
        text = (args.folder / label.file).read_text(encoding="utf-8", errors="replace")
        split = split_anchors(text.splitlines())
        logs += bool(split)
        for number, kinds, anchors in split:
            print(f"{label.file}:{number}  label {label.kind}  join adds {kinds} on {anchors[:2]}")
    print(f"logs with a wrapped line splitting an anchor: {logs} of {len(every)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
