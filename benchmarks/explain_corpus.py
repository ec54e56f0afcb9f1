"""How `torchdoctor explain` does on the corpus of real failure logs sampled by symptom (tests/fixtures/corpus).

Every file labelled in FOLDER/SOURCES.md is explained on its own (`explain([path])`), and the lead finding is
compared with the label. Printed, per family and overall:

- kind: the share whose lead finding is `log.<kind>`;
- or named: the share whose lead is `log.<kind>` or names it as the other reading of a likely finding
  (`details["alternatives"]`: one message printed for two causes, both named, the likelier first);
- keywords: the share of fix keywords found (case-insensitively, each at the start of a word: "port" is not in
  "report") in the lead finding's fix, its quotes of the log and its no-recipe lines left out (`advice`);
- recognised: the share whose lead finding is not `log.unrecognised`;
- confidently wrong: the share whose lead names a wrong kind (not `log.unrecognised`) without saying it is only
  "likely" (`details["confidence"]`; a finding without one counts as certain).

An exception raised by `explain` on a file counts as a miss and is printed; it never stops the run.

    python benchmarks/explain_corpus.py tests/fixtures/corpus/train
    python benchmarks/explain_corpus.py -v tests/fixtures/corpus/train     # and every miss, one a line
    python benchmarks/explain_corpus.py --samples 001-163,164-205,206-237,238-278 tests/fixtures/corpus/heldout   # per sample
    python benchmarks/explain_corpus.py --every-seen -v tests/fixtures/corpus/train   # the evidence rule off

``--every-seen`` measures without the evidence rule (`Recogniser.seen`, `Recogniser.contested`): every anchor
taken as seen on a labelled log of its kind and none as printed for another cause, so what is certain rests on
the anchors' ``generic`` and ``confirm`` alone. Its "confidently wrong" counts the logs an anchor seen once would
lead certain and wrong: on the train half (where the table of seen anchors comes from, so with the rule on it is
0 by construction), the messages whose confirming evidence is missing; -v lists them.

The held-out half (tests/fixtures/corpus/heldout) is measured for the report only: nobody tunes on it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.first_failure import REACHED
from torchdoctor.explain.recognisers import Recogniser
from torchdoctor.explain.uncovered import NO_RECIPE, STARTED, STOPPED
from torchdoctor.findings import Finding

UNRECOGNISED = "log.unrecognised"


@dataclass
class Label:
    """One labelled file: what should lead, the keywords its fix should name, its family."""

    file: str
    kind: str
    keywords: list[str]
    family: str


@dataclass
class Tally:
    """Counts over a group of files."""

    n: int = 0
    right: int = 0
    named: int = 0
    keywords: int = 0
    recalled: int = 0
    recognised: int = 0
    confidently_wrong: int = 0
    misses: list[str] = field(default_factory=list)


def labels(folder: Path) -> list[Label]:
    """The labelled files of ``folder/SOURCES.md`` (columns: file | thread | kind | cause | keywords | how |
    edits | family | query)."""
    found = []
    for line in (folder / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]
        if len(cells) > 9 and cells[1].startswith("`") and cells[1].endswith(".txt`"):
            found.append(Label(cells[1].strip("`"), cells[3], re.findall(r"`([^`]+)`", cells[5]), cells[8]))
    return found


def refuse_unlabelled(folders: list[Path]) -> bool:
    """Print one line and say so when a folder has no SOURCES.md table (the scripts that read a labelled folder
    exit 2 then)."""
    for folder in folders:
        if not (folder / "SOURCES.md").is_file():
            print(f"error: {folder} has no SOURCES.md", file=sys.stderr)
            return True
    return False


def _confident(finding) -> bool:
    return finding.details.get("confidence") != "likely"


def number(file: str) -> int:
    """The corpus number of ``file`` (``"042.txt"`` -> 42; -1 when it has none)."""
    found = re.match(r"(\d+)", file)
    return int(found.group(1)) if found else -1


def sample_ranges(text: str) -> list[tuple[int, int]]:
    """``"001-163,164-205"`` -> ``[(1, 163), (164, 205)]``: the files of each sample by symptom."""
    ranges = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or not (high or low).isdigit():
            raise ValueError(f"a sample is FIRST-LAST (e.g. 164-205), got {part.strip()!r}")
        ranges.append((int(low), int(high or low)))
    return ranges


def keyword_in(keyword: str, fix: str) -> bool:
    """Whether ``keyword`` starts a word of ``fix`` (lower case; after ``_`` counts: MASTER_PORT holds "port"): "port"
    is not in "torchdoctor report", "0.5.0" not in "10.5.0"; a keyword may be a word's stem ("nightl", "compil"), so
    it may end inside one.

    >>> keyword_in("port", "torchdoctor report > report.md"), keyword_in("port", "set master_port")
    (False, True)
    >>> keyword_in("nightl", "a nightly"), keyword_in("0.5.0", "upgrade to 10.5.0")
    (True, False)
    >>> keyword_in("--shm-size", "docker run --shm-size=8g"), keyword_in("port", "free the port: kill it")
    (True, True)
    """
    k = keyword.lower()
    start = r"(?<![A-Za-z0-9])" if k[:1].isalnum() else ""
    return re.search(start + re.escape(k), fix) is not None


def advice(lead: Finding) -> str:
    """The lead finding's fix, lower case, without what is not advice: the log's own words it quotes (the user's
    line it reached, where an unrecognised error was raised and the detail lines under it) and the unrecognised
    finding's no-recipe lines. Their words do not count as recalled: "log" is not in a fix for pasting the log.

    >>> lead = Finding("log.unrecognised", "fail", "s", {}, f"{STOPPED} x.py:3 in occupy_mem: f().\\n    detail\\n{NO_RECIPE}")
    >>> advice(lead)
    ''
    """
    fix = (lead.fix or "").replace(NO_RECIPE, "")
    quoted = (REACHED, STOPPED, STARTED)
    unrecognised = lead.id == UNRECOGNISED
    return "\n".join(
        line
        for line in fix.splitlines()
        if not line.startswith(quoted) and not (unrecognised and line.startswith("    "))
    ).lower()


@dataclass
class Outcome:
    """What `explain` led with on one labelled file, judged against its label."""

    label: Label
    path: Path
    right: bool = False
    named: bool = False
    hit: list[str] = field(default_factory=list)
    recognised: bool = False
    confidently_wrong: bool = False
    miss: str = ""  # the line -v prints; empty when the kind and every keyword were right


def judge(folder: Path, label: Label) -> Outcome:
    """Explain one file and compare its lead finding with the label (a crash is a miss, never a stop)."""
    path = folder / label.file
    try:
        lead = explain([str(path)])[0]
    except Exception as e:  # noqa: BLE001 - a crash on one log is a miss to report, not a stop
        return Outcome(label, path, miss=f"{path}: {label.kind}: explain raised {type(e).__name__}: {e}")
    fix = advice(lead)
    hit = [w for w in label.keywords if keyword_in(w, fix)]
    right = lead.id == f"log.{label.kind}"
    wrong_and_sure = not right and lead.id != UNRECOGNISED and _confident(lead)
    outcome = Outcome(
        label,
        path,
        right=right,
        named=right or f"log.{label.kind}" in lead.details.get("alternatives", []),
        hit=hit,
        recognised=lead.id != UNRECOGNISED,
        confidently_wrong=wrong_and_sure,
    )
    if not right or len(hit) < len(label.keywords):
        missed = [w for w in label.keywords if w not in hit]
        outcome.miss = (
            f"{path}: want log.{label.kind}, got {lead.id}"
            + (" (certain)" if wrong_and_sure else "")
            + (f"; fix lacks {missed}" if missed else "")
        )
    return outcome


def judge_all(folders: list[Path]) -> list[Outcome]:
    """Every labelled file of ``folders``, explained once."""
    return [judge(folder, label) for folder in folders for label in labels(folder)]


def measure(outcomes: list[Outcome], only: tuple[int, int] | None = None) -> dict[str, Tally]:
    """``{family: Tally}`` plus ``"all"`` over ``outcomes`` (``only``: the files whose number is in that
    inclusive range)."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    for o in outcomes:
        if only is not None and not only[0] <= number(o.label.file) <= only[1]:
            continue
        for t in (tallies[o.label.family], tallies["all"]):
            t.n += 1
            t.keywords += len(o.label.keywords)
            t.right += o.right
            t.named += o.named
            t.recalled += len(o.hit)
            t.recognised += o.recognised
            t.confidently_wrong += o.confidently_wrong
            if o.miss:
                t.misses.append(o.miss)
    return dict(tallies)


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}%" if b else "    -"


def table(tallies: dict[str, Tally]) -> str:
    """The per-family table, `all` last."""
    rows = [
        f"{'family':<16} {'n':>4} {'kind':>7} {'or named':>9} {'keywords':>9} {'recognised':>11} "
        f"{'conf. wrong':>12}",
    ]
    order = sorted(k for k in tallies if k != "all") + ["all"]
    for name in order:
        t = tallies.get(name)
        if t is None:
            continue
        rows.append(
            f"{name:<16} {t.n:>4} {_pct(t.right, t.n):>7} {_pct(t.named, t.n):>9} {_pct(t.recalled, t.keywords):>9} "
            f"{_pct(t.recognised, t.n):>11} {_pct(t.confidently_wrong, t.n):>12}"
        )
    return "\n".join(rows)


@contextmanager
def every_anchor_seen():
    """Within it, the evidence rule is off: every anchor counts as seen on a labelled log of its kind, none as
    printed for another cause (`--every-seen`)."""
    seen, contested = Recogniser.seen, Recogniser.contested
    Recogniser.seen = lambda self, hits: True
    Recogniser.contested = lambda self, hits: {}
    try:
        yield
    finally:
        Recogniser.seen, Recogniser.contested = seen, contested


def main(argv: list[str] | None = None) -> int:
    """Measure the folders given and print the table (and the misses with ``-v``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders with a SOURCES.md table")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss, one a line")
    parser.add_argument(
        "--samples",
        default="",
        help="also a table per sample, by file numbers: e.g. 001-163,164-205 (one run, every table)",
    )
    parser.add_argument(
        "--every-seen",
        action="store_true",
        help="without the evidence rule: every anchor taken as seen on its kind, none as another cause's",
    )
    args = parser.parse_args(argv)
    try:
        ranges = sample_ranges(args.samples) if args.samples else []
    except ValueError as e:
        print(f"explain_corpus: {e}", file=sys.stderr)
        return 2
    for folder in args.folders:
        if not (folder / "SOURCES.md").is_file():
            print(f"explain_corpus: {folder}/SOURCES.md not found", file=sys.stderr)
            return 2
    if args.every_seen:
        with every_anchor_seen():
            outcomes = judge_all(args.folders)
    else:
        outcomes = judge_all(
            args.folders
        )  # each file explained once, then tallied per sample from the same results
    tallies = measure(outcomes)
    if "all" not in tallies:
        print("explain_corpus: no labelled files in " + ", ".join(map(str, args.folders)), file=sys.stderr)
        return 2
    print(table(tallies))
    for low, high in ranges:
        part = measure(outcomes, (low, high))
        print(f"\nfiles {low:03d}-{high:03d}: {part['all'].n if 'all' in part else 0} logs")
        if "all" in part:
            print(table(part))
    if args.verbose:
        print()
        for line in tallies["all"].misses:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
