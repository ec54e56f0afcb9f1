"""The message templates the sources of a distributed run print, as data: one TSV per source.

Each row: ``id`` (``source:a-few-words``), the template as printed (``{}`` / ``%s`` where a value goes, ``\\n``
between its lines), the source file, the versions that print it (``v2.18.6+``: that release and later;
empty: the one version read), the kind of failure it belongs to (empty: none yet) and the source. A file that
``--extract`` rebuilds may hold rows written by hand (a message of a file the extractor does not read, or that
it cannot read whole): those carry ``by hand`` in a sixth column, ``kept``, and a re-extract keeps them as they are.
``benchmarks/catalog_coverage.py`` builds the files from the sources and prints the coverage table.

    >>> by_id()["nccl:duplicate-gpu-detected-rank-and-rank"].kind
    'duplicate_gpu'
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

CATALOG_DIR = Path(__file__).parent
COLUMNS = ("id", "template", "file", "versions", "kind")
KEPT = "kept"  # the sixth column, written only where a row is kept by hand
BY_HAND = "by hand"
# tables beside the templates that are not messages: api_history.tsv, the names each release of a library has
# (kinds/api_history.py reads it, benchmarks/api_history.py writes it); api_keywords.tsv, the keywords each release
# of a callable takes (kinds/api_keywords.py, benchmarks/api_keywords.py); api_signatures.tsv, the positional
# parameters each release of a callable takes (kinds/api_signatures.py, benchmarks/api_signatures.py);
# api_members.tsv, the members each release of a library's classes has (kinds/api_members.py,
# benchmarks/api_members.py);
# wheel_tags.tsv, the Pythons and platforms each release has wheels for, and cuda_toolkits.tsv, the host
# compilers and GPUs each CUDA release takes (kinds/wheel_tags.py, kinds/toolkits.py, benchmarks/wheel_tags.py)
# and torch_archs.tsv, the capabilities each torch release's extension builder accepts; message_history.tsv, the
# messages a library's older releases raise and its newest does not (kinds/message_history.py,
# benchmarks/message_history.py); fixed_bugs.tsv, the messages a library's own fix commits quote and the release
# that fixed them (kinds/fixed_bugs.py, benchmarks/fixed_bugs.py); seen_on.tsv, the anchors seen on a real log labelled with their kind (the
# evidence a certain finding needs: recognisers.py; benchmarks/explain_seen_on.py)
NOT_TEMPLATES = frozenset(
    {
        "seen_on",
        "api_history",
        "api_keywords",
        "api_signatures",
        "api_members",
        "wheel_tags",
        "cuda_toolkits",
        "torch_archs",
        "message_history",
        "fixed_bugs",
    }
)


SEEN_ON = CATALOG_DIR / "seen_on.tsv"
SEEN_COLUMNS = ("kind", "anchor", "logs", "examples", "other_logs", "other_causes")


class Seen(NamedTuple):
    """An anchor of a kind seen on real logs labelled, from their threads, with that kind (``logs``, the first
    few named in ``examples``), and on real logs labelled with another cause (``other_logs``; ``other_causes``:
    ``"kind n, kind n"``, the commonest first)."""

    kind: str
    anchor: str
    logs: int
    examples: str
    other_logs: int = 0
    other_causes: str = ""


class Template(NamedTuple):
    """One message as its source prints it."""

    id: str
    text: str
    file: str
    versions: str
    kind: str
    source: str
    kept: str = ""  # "by hand": written by hand in a file --extract rebuilds, kept by a re-extract


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text  # most cells escape nothing: read whole, not a character at a time
    out, at = [], 0
    while at < len(text):
        char = text[at]
        if char == "\\" and at + 1 < len(text):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(text[at + 1], text[at + 1]))
            at += 2
            continue
        out.append(char)
        at += 1
    return "".join(out)


def read(path: Path) -> list[Template]:
    """The templates of one TSV file (its name is the source)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        cells = line.split("\t")
        if len(cells) >= 5:
            ident, text, file, versions, kind = (_unescape(c) for c in cells[:5])
            kept = _unescape(cells[5]) if len(cells) > 5 else ""
            rows.append(Template(ident, text, file, versions, kind, path.stem, kept))
    return rows


@cache
def load() -> dict[str, list[Template]]:
    """Every source's templates, ``{source: [Template, ...]}``."""
    return {
        path.stem: read(path) for path in sorted(CATALOG_DIR.glob("*.tsv")) if path.stem not in NOT_TEMPLATES
    }


@cache
def by_id() -> dict[str, Template]:
    """Every template by its id."""
    return {t.id: t for templates in load().values() for t in templates}


@cache
def _files() -> dict[str, Path]:
    """Each source's TSV file, by its source."""
    return {path.stem: path for path in sorted(CATALOG_DIR.glob("*.tsv")) if path.stem not in NOT_TEMPLATES}


@cache
def _of_source(source: str) -> dict[str, Template]:
    path = _files().get(source)
    return {t.id: t for t in read(path)} if path is not None else {}


def template(ident: str) -> Template | None:
    """The template ``ident`` names (None: no such template), read from its source's file alone (an id starts
    with its source, ``nccl:...``): explain looks up a few templates of one source for the error that stopped a
    run (kinds/fixed_bugs.py), where `by_id` reads every source's (0.15 s of CPU at each start, before
    `_unescape` read a cell with no backslash whole)."""
    return _of_source(ident.partition(":")[0]).get(ident)


def write(source: str, templates: list[Template], directory: Path = CATALOG_DIR) -> Path:
    """Write one source's templates to ``<source>.tsv`` in ``directory`` (used by the generator, not at run time);
    the ``kept`` column only in a file with a row kept by hand, its cell only on such a row."""
    path = directory / f"{source}.tsv"
    kept = any(t.kept for t in templates)
    lines = ["\t".join(COLUMNS + ((KEPT,) if kept else ()))]
    lines += [
        "\t".join(
            _escape(c) for c in (t.id, t.text, t.file, t.versions, t.kind) + ((t.kept,) if t.kept else ())
        )
        for t in templates
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    load.cache_clear()
    by_id.cache_clear()
    _files.cache_clear()
    _of_source.cache_clear()
    return path


@cache
def evidence() -> dict[tuple[str, str], Seen]:
    """Every row of seen_on.tsv by ``(kind, anchor)``: the labelled real logs that showed the anchor, of that
    kind and of other causes."""
    found = {}
    for line in SEEN_ON.read_text(encoding="utf-8").splitlines()[1:]:
        cells = [_unescape(c) for c in line.split("\t")]
        if len(cells) == len(SEEN_COLUMNS):
            row = Seen(cells[0], cells[1], int(cells[2]), cells[3], int(cells[4]), cells[5])
            found[row.kind, row.anchor] = row
    return found


@cache
def seen_on() -> frozenset[tuple[str, str]]:
    """Every ``(kind, anchor)`` seen on a real log labelled with that kind (seen_on.tsv)."""
    return frozenset(key for key, row in evidence().items() if row.logs)


def seen_for_others(kind: str, anchor: str) -> tuple[int, dict[str, int]]:
    """How many labelled real logs of ``kind`` showed ``anchor``, and how many of each other cause did."""
    row = evidence().get((kind, anchor))
    if row is None:
        return 0, {}
    others = (part.rsplit(" ", 1) for part in row.other_causes.split(", ") if part)
    return row.logs, {cause: int(n) for cause, n in others}


def write_seen_on(rows: list[Seen]) -> Path:
    """Write seen_on.tsv (used by benchmarks/explain_seen_on.py, not at run time)."""
    lines = ["\t".join(SEEN_COLUMNS)]
    lines += ["\t".join(_escape(str(c)) for c in row) for row in rows]
    SEEN_ON.write_text("\n".join(lines) + "\n", encoding="utf-8")
    evidence.cache_clear()
    seen_on.cache_clear()
    return SEEN_ON
