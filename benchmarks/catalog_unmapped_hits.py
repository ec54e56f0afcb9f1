"""Which unmapped catalog templates the logs `explain` misses hold: where mapping templates would pay (issue 19).

Every labelled file of FOLDER/SOURCES.md is explained (as benchmarks/explain_corpus.py does); on each one whose
lead finding is not its label's kind (unrecognised or named wrongly), every line is matched against every catalog
template that has no kind yet. Printed: per source and source file, the logs holding such a template and the
templates they hold (with how many logs each), a total row per source, and how many missed logs hold a mapped
template, an unmapped one, or no template at all (the misses no mapping of a template would cure).

    python benchmarks/catalog_unmapped_hits.py tests/fixtures/corpus/train
    python benchmarks/catalog_unmapped_hits.py --only torch,torch_cpp,nccl tests/fixtures/corpus/train
    python benchmarks/catalog_unmapped_hits.py --totals tests/fixtures/corpus/heldout   # one row per source only
    python benchmarks/catalog_unmapped_hits.py --mapped tests/fixtures/corpus/train     # the mapped ones, per log

A template matches a line when its literal text, with any text where a placeholder (``{}``, ``%s``, ``%d``...)
stands, is on that line (with its final full stop or without: a paste drops it often); a template line whose
literal text is shorter than `MIN_LITERAL` characters (``{}: {}``) is never matched alone. ``--totals`` prints no file and no template: the held-out half is reported that way only.
``--mapped`` prints, per missed log holding a mapped template, its label, what explain led with (and the kinds of
its other findings), and each mapped template it holds with its kind and the log's line it matched, marked ``=``
where the template's kind is the label's: the view that sorts these misses into a wrong order (a finding of the
label's kind is made, another leads), an anchor not read (none is made), or a template of another kind
(`sort_miss`; the table's last line, ``--totals`` too, counts the misses so, naming no file). ``--mapped`` is for
the train half only: it names files and what explain said on them.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

from explain_corpus import judge, labels, refuse_unlabelled

from torchdoctor.explain.catalog import Template, load
from torchdoctor.explain.diagnose import explain

MIN_LITERAL = 24  # literal characters a template line needs before it alone counts as the message
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%[-+ #0]*\d*(?:\.\d+)?(?:ll|l|z|h)?[diouxXfeEgGcps]")


def line_patterns(text: str) -> list[tuple[str, re.Pattern]]:
    """For each line of a template with enough literal text: its longest literal piece (a quick filter) and the
    line as a pattern, any text standing where a placeholder is."""
    found = []
    for line in text.splitlines():
        pieces = _PLACEHOLDER.split(line)
        # the full stop that ends a message is left out of a paste often ("ERROR: Unexpected segmentation fault
        # encountered in worker"): the line matches without it
        pieces[-1] = re.sub(r"(?<=\w)[.!]$", "", pieces[-1].rstrip())
        literal = [p.strip() for p in pieces if p.strip()]
        if sum(len(p) for p in literal) < MIN_LITERAL:
            continue
        pieces[0], pieces[-1] = pieces[0].lstrip(), pieces[-1].rstrip()
        found.append((max(literal, key=len), re.compile(".*?".join(re.escape(p) for p in pieces))))
    return found


def unmapped(
    sources: set[str] | None = None, mapped: bool = False
) -> list[tuple[Template, list[tuple[str, re.Pattern]]]]:
    """Every template without a kind (with one: ``mapped``) of ``sources`` (or all) that has a line long enough
    to be matched."""
    rows = []
    for source, templates in load().items():
        if sources and source not in sources:
            continue
        for t in templates:
            patterns = line_patterns(t.text) if bool(t.kind) == mapped else []
            if patterns:
                rows.append((t, patterns))
    return rows


def held(text: str, templates: list[tuple[Template, list[tuple[str, re.Pattern]]]]) -> list[Template]:
    """The templates one of whose lines is on a line of ``text``."""
    return [t for t, _ in held_on(text, templates)]


def held_on(
    text: str, templates: list[tuple[Template, list[tuple[str, re.Pattern]]]]
) -> list[tuple[Template, str]]:
    """The templates one of whose lines is on a line of ``text``, each with the first such line."""
    lines = text.splitlines()
    found = []
    for t, patterns in templates:
        for piece, pattern in patterns:
            if piece not in text:
                continue
            line = next((line for line in lines if piece in line and pattern.search(line)), None)
            if line is not None:
                found.append((t, line))
                break
    return found


def mapped_view(folders: list[Path], sources: set[str] | None = None) -> str:
    """Per missed log holding a mapped template: label, lead, the other findings' kinds, and each mapped
    template held (``=`` where its kind is the label's) with the line it matched."""
    mapped = unmapped(sources, mapped=True)
    out = []
    for folder in folders:
        for label in labels(folder):
            path = folder / label.file
            text = path.read_text(encoding="utf-8", errors="replace")
            found = held_on(text, mapped)
            if not found or judge(folder, label).right:
                continue
            kinds = [f.id.removeprefix("log.") for f in explain([str(path)])]
            why = sort_miss(label.kind, {t.kind for t, _ in found}, kinds)
            out.append(f"{label.file}  label {label.kind}  led {kinds[0]}  {why}  findings {kinds}")
            for t, line in found:
                mark = "=" if t.kind == label.kind else " "
                out.append(f"  {mark} {t.id} -> {t.kind}: {line.strip()[:160]}")
    return "\n".join(out)


def sort_miss(label_kind: str, held_kinds: set[str], made: list[str]) -> str:
    """Why a missed log holding mapped templates (of ``held_kinds``) was missed, given the kinds of the findings
    explain ``made`` (the lead first): ``order`` where a template of the label's kind is there and a finding of
    that kind is made but another leads; ``unread`` where such a template is there and no finding of its kind is
    made; ``other kind`` where every template held is of another kind (a victim's or a consequence's message, a
    mapping too broad, or a template matched on text that is not its message: read the log to say which)."""
    if label_kind not in held_kinds:
        return "other kind"
    return "order" if label_kind in made else "unread"


def hits(
    folders: list[Path], sources: set[str] | None = None
) -> tuple[int, dict[tuple[str, str], dict], set[str], dict[str, int]]:
    """How many files were missed, ``{(source, file): {"logs": set, "templates": {id: set of logs}}}`` for the
    unmapped templates they hold, the missed files that hold a mapped template (of ``sources``) instead, and
    those sorted by `sort_miss` (``{why: logs}``)."""
    templates, mapped = unmapped(sources), unmapped(sources, mapped=True)
    table: dict[tuple[str, str], dict] = defaultdict(lambda: {"logs": set(), "templates": defaultdict(set)})
    missed, with_mapped, sorted_as = 0, set(), defaultdict(int)
    for folder in folders:
        for label in labels(folder):
            outcome = judge(folder, label)
            if outcome.right:
                continue
            missed += 1
            text = outcome.path.read_text(encoding="utf-8", errors="replace")
            for t in held(text, templates):
                row = table[t.source, t.file]
                row["logs"].add(label.file)
                row["templates"][t.id].add(label.file)
            own = held(text, mapped)
            if own:
                with_mapped.add(label.file)
                made = [f.id.removeprefix("log.") for f in explain([str(outcome.path)])]
                sorted_as[sort_miss(label.kind, {t.kind for t in own}, made)] += 1
    return missed, table, with_mapped, dict(sorted_as)


def report(
    missed: int,
    table: dict[tuple[str, str], dict],
    totals: bool,
    with_mapped: set[str] | None = None,
    sorted_as: dict[str, int] | None = None,
) -> str:
    """The table: per source and file (unless ``totals``), then a total row per source, how many missed logs
    hold a mapped template, an unmapped one, or none, and (``sorted_as``) how those holding a mapped one sort."""
    out = [f"missed logs (lead not the label's kind): {missed}"]
    by_source: dict[str, set] = defaultdict(set)
    templates_of: dict[str, set] = defaultdict(set)
    for (source, _), row in table.items():
        by_source[source] |= row["logs"]
        templates_of[source] |= set(row["templates"])
    if not totals:
        out.append(f"{'source':<12} {'file':<64} {'logs':>4}  templates (logs)")
        for (source, file), row in sorted(
            table.items(), key=lambda kv: (kv[0][0], -len(kv[1]["logs"]), kv[0][1])
        ):
            ids = sorted(row["templates"].items(), key=lambda kv: (-len(kv[1]), kv[0]))
            out.append(f"{source:<12} {file:<64} {len(row['logs']):>4}")
            out += [f"{'':<82}{ident} ({len(logs)}: {', '.join(sorted(logs))})" for ident, logs in ids]
    out.append(f"{'source':<12} {'logs':>5} {'templates':>10}")
    for source in sorted(by_source):
        out.append(f"{source:<12} {len(by_source[source]):>5} {len(templates_of[source]):>10}")
    every = set().union(*by_source.values()) if by_source else set()
    out.append(f"{'all':<12} {len(every):>5} {sum(len(t) for t in templates_of.values()):>10}")
    if with_mapped is not None:
        out.append(
            f"missed logs holding a mapped template: {len(with_mapped)}; an unmapped one: {len(every)}; "
            f"either: {len(with_mapped | every)}; neither: {missed - len(with_mapped | every)}"
        )
    if sorted_as is not None:
        out.append(
            "of those holding a mapped template: "
            + "; ".join(f"{why}: {sorted_as.get(why, 0)}" for why in ("order", "unread", "other kind"))
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders with a SOURCES.md table")
    parser.add_argument("--only", default="", help="sources to read, comma-separated (default: every source)")
    parser.add_argument("--totals", action="store_true", help="one total row per source, no file or template")
    parser.add_argument(
        "--mapped",
        action="store_true",
        help="per missed log holding a mapped template: its lead and templates",
    )
    args = parser.parse_args(argv)
    if refuse_unlabelled(args.folders):
        return 2
    sources = {s.strip() for s in args.only.split(",") if s.strip()} or None
    if args.mapped:
        print(mapped_view(args.folders, sources))
        return 0
    missed, table, with_mapped, sorted_as = hits(args.folders, sources)
    print(report(missed, table, args.totals, with_mapped, sorted_as))
    return 0


if __name__ == "__main__":
    sys.exit(main())
