"""Which anchors of which kinds were seen on a real log whose cause is known: the evidence behind "certain".

A finding is certain only where its message was seen on a real log labelled, from its thread, with that same
cause (`Recogniser.confidence`): a message mapped to a kind from its source alone may be printed for other
causes too, and until a labelled log shows it for this one the finding says "likely". The labelled logs are the
train half of the corpus (tests/fixtures/corpus/train/SOURCES.md) and the public fixture logs
(tests/fixtures/logs/NNN_<kind>.txt); the held-out half is never read here.

For every labelled log, every recogniser is run over it (`Collector`, as `explain` does); each hit of the
labelled kind adds its anchor. Written to src/torchdoctor/explain/catalog/seen_on.tsv (kind, anchor, how many
labelled logs, the first few of them); tests/test_explain_seen_on.py checks the table is what this writes.

    PYTHONPATH=src python benchmarks/explain_seen_on.py            # the kinds and anchors never seen, counted
    PYTHONPATH=src python benchmarks/explain_seen_on.py --write    # rewrite seen_on.tsv
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from explain_corpus import labels

from torchdoctor.explain import catalog
from torchdoctor.explain.collect import Collector
from torchdoctor.explain.inputs import logs
from torchdoctor.explain.kinds import RECOGNISERS

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "tests" / "fixtures" / "corpus" / "train"
FIXTURES = ROOT / "tests" / "fixtures" / "logs"
EXAMPLES = 3  # labelled logs named per row


def labelled_logs() -> list[tuple[Path, str]]:
    """``(path, kind)`` of every labelled log evidence may come from: the train half, then the fixtures."""
    found = [(TRAIN / label.file, label.kind) for label in labels(TRAIN)]
    found += [(path, path.stem.split("_", 1)[1]) for path in sorted(FIXTURES.glob("*.txt"))]
    return found


def anchors_seen(path: Path, kind: str) -> set[str]:
    """The anchors of ``kind`` that its recogniser found in the log at ``path``."""
    collector = Collector()
    for log in logs([str(path)]):
        collector.read(log.stream, log.source, log.rank, log.head, log.size)
    return {hit.anchor for hit in collector.hits if hit.kind == kind and hit.anchor}


def seen_on() -> dict[tuple[str, str], list[str]]:
    """``{(kind, anchor): [labelled log, ...]}`` over every labelled log."""
    seen: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, kind in labelled_logs():
        for anchor in anchors_seen(path, kind):
            seen[kind, anchor].append(str(path.relative_to(ROOT / "tests" / "fixtures")))
    return dict(seen)


def rows(seen: dict[tuple[str, str], list[str]]) -> list[catalog.Seen]:
    """The table's rows, by kind then anchor."""
    return [
        catalog.Seen(kind, anchor, len(files), ", ".join(files[:EXAMPLES]))
        for (kind, anchor), files in sorted(seen.items())
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
    seen_kinds = {row.kind for row in table}
    seen_anchors = {(row.kind, row.anchor) for row in table}
    print(f"kinds seen on a labelled log: {len(kinds & seen_kinds)} of {len(kinds)}")
    print(f"anchors seen on a labelled log of their kind: {len(anchors & seen_anchors)} of {len(anchors)}")
    print("kinds never seen:", " ".join(sorted(kinds - seen_kinds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
