"""Which catalog messages a library's own history says were its bug, and the release that fixed it.

Reads the git history of the libraries a training run goes through (mirrors fetched to /work/.mirror, never
into the repository): every commit whose subject says it fixes something (fix / bug / regression) and whose
message quotes a catalog template of that package's own code (the template's longest literal piece, values
aside, at least ``PIECE`` characters). For each it records the template, the package, the first release tag that
contains the commit (the lowest `git tag --contains`), the first release tag that contains the commit that added
the raising line (the lowest tag of the oldest `git log -S` of that piece under the package's folder: the
message's first release), and the commit and PR number. Left out:

- a commit whose diff adds the quoted piece: it introduced (or reworded) the message, it did not fix what raised it;
- a commit no release tag contains yet (on the default branch only);
- a commit whose PR or linked issue number is a thread of either corpus half's SOURCES.md for that repository, so
  the knowledge is never taken from the logs it is measured on (counted and printed).

pytorch/pytorch and huggingface/transformers are too large to fetch here: their rows come from
``fixed_bugs_read.tsv`` instead, facts read by hand from the search corpora (a release's notes listing the fix, the
release tracker's cherry-picks, the issue that quotes the message), each naming where it was read. The same rule
leaves one out: its PR or an issue it names is a corpus thread, or either SOURCES.md names it (``pytorch#80809`` in
a label's words), so that a held-out thread's answer never comes back as knowledge (counted and printed).
Each row of the table says where it came from (its last column): the repository's git history, or what was read.

    PYTHONPATH=src:benchmarks python benchmarks/fixed_bugs.py --build   # read the mirrors, write the table
    PYTHONPATH=src:benchmarks python benchmarks/fixed_bugs.py           # the rows per package
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from torchdoctor.explain import catalog
from torchdoctor.explain.kinds.fixed_bugs import TABLE, load, template_piece

MIRRORS = Path("/work/.mirror")
READ = Path(__file__).resolve().parent / "fixed_bugs_read.tsv"
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "corpus"
# the repositories read: (mirror folder, GitHub name, package, the folders of the package's own code)
REPOSITORIES = (
    ("huggingface+accelerate", "huggingface/accelerate", "accelerate", ("src/accelerate/",)),
    ("huggingface+peft", "huggingface/peft", "peft", ("src/peft/",)),
    ("huggingface+trl", "huggingface/trl", "trl", ("trl/",)),
    ("deepspeedai+DeepSpeed", "deepspeedai/DeepSpeed", "deepspeed", ("deepspeed/",)),
    (
        "Lightning-AI+pytorch-lightning",
        "Lightning-AI/pytorch-lightning",
        "lightning",
        ("src/lightning/", "src/pytorch_lightning/", "src/lightning_fabric/", "pytorch_lightning/"),
    ),
    ("huggingface+datasets", "huggingface/datasets", "datasets", ("src/datasets/",)),
    ("webdataset+webdataset", "webdataset/webdataset", "webdataset", ("webdataset/",)),
    (
        "bitsandbytes-foundation+bitsandbytes",
        "bitsandbytes-foundation/bitsandbytes",
        "bitsandbytes",
        ("bitsandbytes/",),
    ),
    ("Lightning-AI+torchmetrics", "Lightning-AI/torchmetrics", "torchmetrics", ("src/torchmetrics/",)),
    (
        "huggingface+huggingface_hub",
        "huggingface/huggingface_hub",
        "huggingface_hub",
        ("src/huggingface_hub/",),
    ),
    ("huggingface+diffusers", "huggingface/diffusers", "diffusers", ("src/diffusers/",)),
    ("huggingface+pytorch-image-models", "huggingface/pytorch-image-models", "timm", ("timm/",)),
    ("Dao-AILab+flash-attention", "Dao-AILab/flash-attention", "flash_attn", ("flash_attn/",)),
    ("facebookresearch+fairscale", "facebookresearch/fairscale", "fairscale", ("fairscale/",)),
)
# the catalog files' folders of each package (a template's ``file`` column starts with one)
CATALOG_FOLDERS = {
    "accelerate": ("accelerate/",),
    "peft": ("peft/",),
    "trl": ("trl/",),
    "deepspeed": ("deepspeed/",),
    "lightning": ("lightning/", "pytorch_lightning/", "lightning_fabric/"),
    "datasets": ("datasets/",),
    "webdataset": ("webdataset/",),
    "bitsandbytes": ("bitsandbytes/",),
    "torchmetrics": ("torchmetrics/",),
    "huggingface_hub": ("huggingface_hub/",),
    "diffusers": ("diffusers/",),
    "timm": ("timm/",),
    "flash_attn": ("flash_attn/",),
    "fairscale": ("fairscale/",),
}
# a commit that fixes a test or the CI, not what users run
TESTS_ONLY = re.compile(r"\b(?:tests?|testcases?|CI|ci|unittests?|flaky)\b")
SUBJECT = re.compile(r"\b(?:fix(?:e[sd])?|fixing|bug|bugfix|hotfix|regression)\b", re.IGNORECASE)
RELEASE = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)$")
NUMBER = re.compile(r"(?:\(#|[Ff]ix(?:es|ed)? #|[Cc]loses? #|[Rr]esolves? #|issues/|pull/)(\d+)")
SEP, END = "\x1f", "\x1e"
# a quoted error, cut where the quote closes; KeyError's message is only a key, the words after it prose
QUOTED = re.compile(r"\b((?!KeyError)[A-Z]\w*(?:Error|Exception)): ([^\n`\"]{20,240})")
RAISES = re.compile(r"\braise\b|\bassert\b|(?:Error|Exception)\(")
PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")
# names a quoted message may hold that say nothing about whose code it was
GENERIC_NAMES = frozenset(
    {"NoneType", "str", "int", "list", "dict", "tuple", "float", "bool", "object", "Tensor"}
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, errors="replace", check=False
    ).stdout


def fix_commits(repo: Path) -> list[tuple[str, str, str]]:
    """(commit, subject, message) of every commit whose subject says it fixes something."""
    found = []
    for record in git(repo, "log", f"--format=%H{SEP}%s{SEP}%B{END}").split(END):
        parts = record.strip("\n").split(SEP)
        if len(parts) == 3 and SUBJECT.search(parts[1]) and not TESTS_ONLY.search(parts[1]):
            found.append((parts[0], parts[1], parts[2]))
    return found


def quoted_errors(message: str) -> list[str]:
    """The ``Type: message`` lines a commit message quotes (at least four words of message, a PR suffix cut)."""
    found = []
    for match in QUOTED.finditer(message):
        text = PR_SUFFIX.sub("", match.group(2)).strip(" .")
        quoted = f"{match.group(1)}: {text}"
        if len(re.findall(r"[A-Za-z]{2,}", text)) >= 4 and quoted not in found:
            found.append(quoted)
    return found


def diff_lines(repo: Path, commit: str, folders: tuple[str, ...]) -> list[str]:
    """The changed lines (``+``/``-``) of ``commit`` under ``folders``, and the files it changed there."""
    diff = git(repo, "show", "--format=", "--unified=0", commit, "--", *folders)
    return [line for line in diff.splitlines() if line[:1] in "+-"]


def printed_by_package(repo: Path, commit: str, quoted: str, folders: tuple[str, ...]) -> bool:
    """Whether the package's own code printed the quoted error: its message's literal text is in the package's
    source before the fix, or the fix changes a line naming one of the names the message quotes (an attribute,
    an object, a key its own frame used)."""
    message = quoted.split(": ", 1)[1]
    piece = template_piece(message)
    if piece and git(repo, "grep", "-F", "-l", piece, f"{commit}^", "--", *folders).strip():
        return True
    names = [n for n in re.findall(r"'([A-Za-z_][\w.]{2,})'", message) if n not in GENERIC_NAMES]
    changed = diff_lines(repo, commit, folders)
    return bool(names) and any(name.split(".")[-1] in line for name in names for line in changed)


def templates_of(package: str) -> list[tuple[str, str, str]]:
    """(template id, its longest literal piece, its file) of every catalog template the package's own code
    prints."""
    found = []
    for templates in catalog.load().values():
        for template in templates:
            if template.file.startswith(CATALOG_FOLDERS[package]):
                piece = template_piece(template.text)
                if piece is not None:
                    found.append((template.id, piece, template.file))
    return found


def lowest_release(repo: Path, commit: str) -> str:
    """The lowest release tag that contains ``commit`` ('' when none does)."""
    versions = []
    for tag in git(repo, "tag", "--contains", commit).split():
        match = RELEASE.match(tag)
        if match:
            try:
                versions.append(Version(match.group(1)))
            except InvalidVersion:
                continue
    return str(min(versions)) if versions else ""


def touches(repo: Path, commit: str, file: str) -> bool:
    """Whether ``commit`` changes the file that prints the message (its path in the package, wherever the
    repository keeps it): a commit that only quotes a message met elsewhere is not its fix."""
    changed = git(repo, "show", "--format=", "--name-only", commit).split()
    return any(path.endswith(file) for path in changed)


def raised_before(repo: Path, commit: str, piece: str, folders: tuple[str, ...]) -> bool:
    """Whether the package's code before ``commit`` raises or asserts with ``piece`` (a ``raise``, an ``assert``
    or an exception's call on its line or the three above): a warning or a log line is not an error it fixed."""
    found = git(repo, "grep", "-F", "-B3", piece, f"{commit}^", "--", *folders)
    return RAISES.search(found) is not None


def adds_piece(repo: Path, commit: str, piece: str) -> bool:
    """Whether ``commit``'s diff adds a line holding ``piece``."""
    diff = git(repo, "show", "--format=", "--unified=0", commit)
    return any(line.startswith("+") and piece in line for line in diff.splitlines())


def first_printed(repo: Path, piece: str, folders: tuple[str, ...]) -> str:
    """The first release that contains the oldest commit adding ``piece`` under ``folders`` ('' unknown)."""
    if not piece:
        return ""
    commits = git(repo, "log", "--format=%H", "-S", piece, "--", *folders).split()
    return lowest_release(repo, commits[-1]) if commits else ""


def corpus_threads(github: str) -> set[str]:
    """The thread numbers of ``github`` named in either corpus half's SOURCES.md: its threads' addresses and
    ``owner/name#N``, and the short ``name#N`` a label's words use (``pytorch#80809``)."""
    owner_name = re.escape(github.split("/")[1])
    numbers: set[str] = set()
    for half in ("train", "heldout"):
        text = (CORPUS / half / "SOURCES.md").read_text(encoding="utf-8")
        for pattern in (
            rf"[\w.-]+/{owner_name}(?:/(?:issues|pull|discussions)/|#)(\d+)",
            rf"(?<![\w/.-]){owner_name}#(\d+)\b",
        ):
            numbers.update(match.group(1) for match in re.finditer(pattern, text))
    return numbers


def rows_for(mirror: str, github: str, package: str, folders: tuple[str, ...]) -> tuple[list[tuple], int]:
    """(the rows of one repository, how many were left out as corpus threads)."""
    repo = MIRRORS / mirror / "repo"
    if not repo.is_dir():
        print(f"  {github}: not fetched", file=sys.stderr)
        return [], 0
    templates = templates_of(package)
    threads = corpus_threads(github)
    rows, excluded = [], 0
    for commit, subject, full in fix_commits(repo):
        message = " ".join(full.split())
        lowered = message.lower()
        hits = [
            (ident, piece, file)
            for ident, piece, file in templates
            if piece.lower() in lowered
            and not adds_piece(repo, commit, piece)
            and touches(repo, commit, file)
            and raised_before(repo, commit, piece, folders)
        ]
        hits += [
            (quoted, "", "")
            for quoted in quoted_errors(full)
            if not any(piece.lower() in quoted.lower() for _, piece, _ in hits)
            and printed_by_package(repo, commit, quoted, folders)
        ]
        for ident, piece, _ in last_quoted(hits, lowered):
            numbers = NUMBER.findall(message)
            if threads.intersection(numbers):
                excluded += 1
                continue
            fixed = lowest_release(repo, commit)
            if not fixed:
                continue
            pr = numbers[0] if numbers else ""
            since = first_printed(repo, piece or template_piece(ident.split(": ", 1)[-1]) or "", folders)
            rows.append(
                (
                    ident,
                    package,
                    fixed,
                    since,
                    commit[:12],
                    f"{github}#{pr}" if pr else github,
                    subject[:120],
                    f"git history of {github}",
                )
            )
    print(f"  {github}: {len(rows)} rows, {excluded} left out as corpus threads", file=sys.stderr)
    return rows, excluded


def last_quoted(hits: list[tuple[str, str, str]], lowered: str) -> list[tuple[str, str, str]]:
    """The hits a commit fixed: where it quotes several errors (a traceback with an error raised while handling
    the first), the last one quoted, with the others of its type (one fix of two classes' same error)."""
    if len(hits) < 2:
        return hits

    def at(hit: tuple[str, str, str]) -> int:
        text = hit[1] or hit[0].split(": ", 1)[-1]
        return lowered.rfind(" ".join(text.lower().split()))

    last = max(hits, key=at)
    kind = last[0].split(": ", 1)[0] if not last[1] else None
    return [
        h for h in hits if h == last or (kind is not None and not h[1] and h[0].split(": ", 1)[0] == kind)
    ]


def read_rows(path: Path = READ) -> tuple[list[tuple], int]:
    """(the rows of ``fixed_bugs_read.tsv`` whose PR and issues are no corpus thread, how many were left out)."""
    rows, excluded = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if line.startswith("#") or cells[0] == "message" or len(cells) != 8:
            continue
        message, package, fixed, since, pr, linked, what, source = cells
        threads = [pr, *filter(None, linked.split(","))]
        named = [t for t in threads if t.partition("#")[2] in corpus_threads(t.partition("#")[0])]
        if named:
            excluded += 1
            print(
                f"  left out ({', '.join(named)}: a corpus thread, or named in a SOURCES.md): {message}",
                file=sys.stderr,
            )
            continue
        rows.append((message, package, fixed, since, "", pr, what, f"read: {source}"))
    print(f"  {path.name}: {len(rows)} rows, {excluded} left out as corpus threads", file=sys.stderr)
    return rows, excluded


def build() -> None:
    header = [
        "# Catalog messages a library's own history says a commit fixed, read from the repositories' git history",
        "# by benchmarks/fixed_bugs.py --build: template id, package, the first release tag containing the fix,",
        "# the first release tag containing the line that prints it ('' unknown), commit, repository#PR, subject,",
        "# where it was read (the git history, or benchmarks/fixed_bugs_read.tsv's facts: no commit, our words).",
    ]
    lines, excluded = list(header), 0
    built = [rows_for(mirror, github, package, folders) for mirror, github, package, folders in REPOSITORIES]
    for rows, left_out in [*built, read_rows()]:
        excluded += left_out
        lines += ["\t".join(cell.replace("\t", " ") for cell in row) for row in rows]
    lines.append(f"#excluded\t{excluded}")
    TABLE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(
        f"{TABLE}: {len(lines) - len(header) - 1} rows, {excluded} left out as corpus threads",
        file=sys.stderr,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--build", action="store_true", help="read the fetched repositories and rewrite the table"
    )
    args = parser.parse_args(argv)
    if args.build:
        build()
        load.cache_clear()
    counts: dict[str, int] = {}
    for row in load():
        counts[row.package] = counts.get(row.package, 0) + 1
    for package, count in sorted(counts.items()):
        print(f"{package:12} {count} fixed messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
