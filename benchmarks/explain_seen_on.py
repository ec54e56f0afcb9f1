"""Which anchors of which kinds were seen on a real log whose cause is known: the evidence behind "certain".

A finding is certain only where its message was seen on a real log labelled, from its thread, with that same
cause (`Recogniser.confidence`): a message mapped to a kind from its source alone may be printed for other
causes too, and until a labelled log shows it for this one the finding says "likely". The labelled logs are the
train half of the corpus (tests/fixtures/corpus/train/SOURCES.md) and the public fixture logs
(tests/fixtures/logs/NNN_<kind>.txt); the held-out half is never read here.

For every labelled log, every recogniser is run over it (`Collector`, as `explain` does); each hit of the
labelled kind adds its anchor, and each specific hit of another cause's kind counts against that kind's anchor
(counter-evidence: the message was printed where its thread established another cause). Written to
src/torchdoctor/explain/catalog/seen_on.tsv (kind, anchor, how many labelled logs of the kind, the first few of
them, how many of other causes, which); tests/test_explain_seen_on.py checks the table is what this writes.

    PYTHONPATH=src python benchmarks/explain_seen_on.py            # the kinds and anchors never seen, counted
    PYTHONPATH=src python benchmarks/explain_seen_on.py --write    # rewrite seen_on.tsv
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

from explain_corpus import labels

from torchdoctor.explain import catalog
from torchdoctor.explain.collect import Collector
from torchdoctor.explain.inputs import logs
from torchdoctor.explain.kinds import BY_KIND, RECOGNISERS

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "tests" / "fixtures" / "corpus" / "train"
FIXTURES = ROOT / "tests" / "fixtures" / "logs"
EXAMPLES = 3  # labelled logs named per row


def labelled_logs() -> list[tuple[Path, str]]:
    """``(path, kind)`` of every labelled log evidence may come from: the train half, then the fixtures."""
    found = [(TRAIN / label.file, label.kind) for label in labels(TRAIN)]
    found += [(path, path.stem.split("_", 1)[1]) for path in sorted(FIXTURES.glob("*.txt"))]
    return found


def hits_on(path: Path):
    """Every recogniser's hits on the log at ``path``, as `explain` collects them."""
    collector = Collector()
    for log in logs([str(path)]):
        collector.read(log.stream, log.source, log.rank, log.head, log.size)
    return collector.hits


def seen_on() -> dict[tuple[str, str], tuple[list[str], Counter]]:
    """``{(kind, anchor): ([labelled log of that kind, ...], Counter(other cause: logs))}`` over every labelled
    log. An anchor counts for another cause where its hit was specific (a generic one is never certain anyway)
    and its kind is a cause (a consequence follows whatever the cause was)."""
    seen: dict[tuple[str, str], tuple[list[str], Counter]] = defaultdict(lambda: ([], Counter()))
    for path, label in labelled_logs():
        name = str(path.relative_to(ROOT / "tests" / "fixtures"))
        own, other = set(), set()
        for hit in hits_on(path):
            if not hit.anchor:
                continue
            if hit.kind == label:
                own.add(hit.anchor)
            elif hit.specific and BY_KIND[hit.kind].role == "cause":
                other.add((hit.kind, hit.anchor))
        for anchor in sorted(own):
            seen[label, anchor][0].append(name)
        for key in sorted(other):
            seen[key][1][label] += 1
    return dict(seen)


def rows(seen: dict[tuple[str, str], tuple[list[str], Counter]]) -> list[catalog.Seen]:
    """The table's rows, by kind then anchor."""
    return [
        catalog.Seen(
            kind,
            anchor,
            len(files),
            ", ".join(files[:EXAMPLES]),
            sum(others.values()),
            ", ".join(f"{cause} {n}" for cause, n in sorted(others.items(), key=lambda c: (-c[1], c[0]))),
        )
        for (kind, anchor), (files, others) in sorted(seen.items())
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite catalog/seen_on.tsv")
    args = parser.parse_args(argv)
    table = rows(seen_on())
    if args.write:
        print(catalog.write_seen_on(table))
    kinds = {r.kind for r in RECOGNISERS}
    anchors = {(r.kind, a) for r in RECOGNISERS for a in r.anchors}
    seen_kinds = {row.kind for row in table if row.logs}
    seen_anchors = {(row.kind, row.anchor) for row in table if row.logs}
    print(f"kinds seen on a labelled log: {len(kinds & seen_kinds)} of {len(kinds)}")
    print(f"anchors seen on a labelled log of their kind: {len(anchors & seen_anchors)} of {len(anchors)}")
    print("kinds never seen:", " ".join(sorted(kinds - seen_kinds)))
    contested = [row for row in table if row.logs and row.other_logs]
    print(f"anchors seen for their kind and on logs of another cause too: {len(contested)}")
    for row in contested:
        print(f"  {row.kind}: {row.anchor!r}: {row.logs} of its kind, {row.other_causes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
