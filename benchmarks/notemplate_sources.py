"""Where the decisive line of a missed log that holds no catalog template comes from: which sources are missing.

`catalog_unmapped_hits.py` counts the misses that hold no template at all, mapped or not: no mapping of a template
the catalog has can cure them. This sorts each such miss (the lead of `explain` not its label's kind) by where its
decisive line, the first exception line of the log (else its first error line), comes from:

- ``partly held``: not a missing source: the first 40 characters of a long literal piece of a template (`PARTLY`
  characters or more) are in the log, but no line of the template matches whole (the log cut inside the message, a prefix such as
  ``ERROR: `` the template spells and the log lacks, another release's words around it);
- ``package``: an installed package the catalog does not read (the innermost frame of that exception's traceback
  is in its site-packages folder, the exception's class is its own, or the error line names it);
- ``unread part``: a file of a package the catalog reads that its extraction leaves out (the innermost frame is
  there: torch's ``_dynamo``, transformers' ``models/``);
- ``python/os``: CPython's or the OS's own message (the standard library's frame innermost, an ``[Errno N]``, a
  signal, a shell's or the loader's line);
- ``user code``: the script's own frame innermost (or its own exception class) with no installed package below it;
- ``unknown``: a built-in exception or an error line with no frame, not CPython's or the OS's wording: whose it
  is cannot be told from the log alone (torch's C++, a library's, the script's);
- ``no error``: prose, a warning, or a log cut before any exception or error line.

    python benchmarks/notemplate_sources.py tests/fixtures/corpus/train            # per log: class, source, line
    python benchmarks/notemplate_sources.py --totals tests/fixtures/corpus/heldout  # counts only, no file names
    python benchmarks/notemplate_sources.py --partly tests/fixtures/corpus/train    # each partly held miss

``--partly`` prints, per partly held miss, the template, the piece of it the log holds, that line, whether an anchor
of the template's recognisers is on it and how explain took it (`partly_sort`); the last line, ``--totals`` too,
counts them so (train only: it names files and what explain found).

``--totals`` prints counts per class and per package (a read source's package, not its file; a catalog source, not
its template) only: the held-out half is reported that way alone.
"""

from __future__ import annotations

import argparse
import builtins
import re
import sys
from collections import Counter
from pathlib import Path

from catalog_unmapped_hits import _PLACEHOLDER, held, unmapped
from explain_corpus import judge, labels, refuse_unlabelled

from torchdoctor.explain.catalog import Template, load
from torchdoctor.explain.diagnose import explain

# the installed package of each catalog source that is read from a package's own code (not kept by hand)
READ = {
    "torch": "torch",
    "deepspeed": "deepspeed",
    "accelerate": "accelerate",
    "lightning": "lightning",
    "pytorch_lightning": "lightning",
    "lightning_fabric": "lightning",
    "transformers": "transformers",
    "datasets": "datasets",
    "PIL": "pillow",
    "webdataset": "webdataset",
    "streaming": "mosaicml_streaming",
    "torchvision": "torchvision",
}
# packages named in an error line without a traceback (a launcher's or a library's own prefix); the module name
# as imported, and what pip installs
NAMED = {
    "bitsandbytes": "bitsandbytes",
    "peft": "peft",
    "flash_attn": "flash-attn",
    "xformers": "xformers",
    "vllm": "vllm",
    "apex": "apex",
    "mmcv": "mmcv",
    "mmengine": "mmengine",
    "mmdet": "mmdet",
    "detectron2": "detectron2",
    "timm": "timm",
    "triton": "triton",
    "hydra": "hydra",
    "omegaconf": "omegaconf",
    "wandb": "wandb",
    "ray": "ray",
    "horovod": "horovod",
    "fairscale": "fairscale",
    "megatron": "megatron",
    "trl": "trl",
    "fairseq": "fairseq",
    "torch_xla": "torch_xla",
    "colossalai": "colossalai",
    "tensorboard": "tensorboard",
    "numpy": "numpy",
    "safetensors": "safetensors",
    "huggingface_hub": "huggingface_hub",
    "tokenizers": "tokenizers",
}
_FRAME = re.compile(r'File "(?P<file>[^"\n]{1,300})", line \d+')
_SITE = re.compile(
    r"(?:site|dist)-packages[\\/]+(?:[^\\/]+\.egg[\\/]+)?(?P<package>[A-Za-z_]\w*)(?P<rest>[\\/][^\"]*)?"
)
_STDLIB = re.compile(r"[\\/]lib[\\/]python3\.\d+[\\/](?!site-packages|dist-packages)(?P<module>[\w./\\-]+)")
_ERROR = re.compile(r"\b(?:error|failed|fatal|killed|segmentation fault|core dumped|abort)", re.IGNORECASE)
_OS = re.compile(
    r"\[Errno \d+\]|Segmentation fault|core dumped|Bus error|Killed|Illegal instruction|Aborted|"
    r"command not found|No such file or directory|Permission denied|cannot open shared object file|"
    r"signal \d+|SIG[A-Z]+"
)
# CPython's own wordings (Objects/, Python/ceval.c): what a script's own mistake makes the interpreter say
_CPYTHON = re.compile(
    r"object is not (?:iterable|subscriptable|callable)|has no len\(\)|takes (?:exactly |from )?\d+ "
    r"(?:positional )?arguments?|unexpected keyword ar|is not defined|cannot access local variable|"
    r"referenced before assignment|division (?:or modulo )?by zero|index out of range|expected str, bytes or "
    r"os\.PathLike|Overflow when unpacking|maximum recursion depth"
)
_BUILTIN = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
_WRAPPERS = {"ChildFailedError", "CalledProcessError", "SubprocessError"}


# what a launcher, logger or pasting puts before a line: [rank0]:, (pid=1) , a timestamp, "host | "
_PREFIX = r"^(?:\[[^\]]*\]:?\s*|\([^)]*\)\s*|\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\s*|[\w.-]+\s+\|\s*|\d+\s+)*"
_CLASS = (
    r"(?P<cls>(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Warning)|StopIteration))"
    r"(?::\s*(?P<msg>.*)|\s*$)"
)
_EXCEPTION = re.compile(_PREFIX + _CLASS)
_MENTION = re.compile(r"\b" + _CLASS)


def decisive(text: str) -> tuple[str, str, list[str]]:
    """How the log shows its decisive line and that line: ``exception`` (its first exception line that is not a
    launcher's wrapper or a warning), ``cut`` (a traceback whose exception line is not there: the line is ""),
    ``prose`` (an exception named inside a sentence), ``error`` (another error line) or ``none``; and the files
    of the traceback above it (a cut one's too), outermost first."""
    lines = text.splitlines()
    frames: list[str] = []
    for line in lines:
        stripped = line.strip()
        if "Traceback (most recent call last)" in stripped:
            frames = []
            continue
        frame = _FRAME.search(stripped)
        if frame:
            frames.append(frame["file"])
            continue
        found = _EXCEPTION.match(stripped)
        if (
            found
            and found["cls"].rsplit(".", 1)[-1] not in _WRAPPERS
            and not found["cls"].endswith("Warning")
        ):
            return "exception", found.group(0)[found.start("cls") :], frames
    if frames:
        return "cut", "", frames
    for line in lines:
        found = _MENTION.search(line)
        if found and not found["cls"].endswith("Warning") and not _EXCEPTION.match(line.strip()):
            return "prose", line.strip(), []
    for line in lines:
        if _ERROR.search(line) and "warn" not in line.lower() and not _EXCEPTION.match(line.strip()):
            return "error", line.strip(), []
    return "none", "", []


def _package(file: str) -> tuple[str, str]:
    """The installed package a frame's file is in and the file inside it (("", "") outside site-packages)."""
    site = _SITE.search(file.replace("\\", "/"))
    return (site["package"], (site["rest"] or "").lstrip("/")) if site else ("", "")


def sort_line(shown: str, line: str, frames: list[str]) -> tuple[str, str]:
    """The class of a decisive line and its source: (``package``, name), (``unread part``, package/file),
    (``python/os``, module or ""), (``user code``, ""), (``no error``, how: cut below a package's frame, prose,
    none)."""
    innermost = frames[-1] if frames else ""
    package, rest = _package(innermost)
    if shown in ("cut", "none"):
        where = f" below {package}" if package else ""
        return "no error", f"{shown}{where}"
    if shown == "prose":
        return "no error", "prose"
    if package and package not in sys.stdlib_module_names:
        if package in READ:
            return "unread part", f"{package}/{rest}"
        return "package", NAMED.get(package, package)
    exception = _MENTION.search(line) if shown == "exception" else None
    cls = exception["cls"] if exception else ""
    top = cls.split(".")[0] if "." in cls else ""
    if top in READ:
        return "unread part", f"{top} ({cls.rsplit('.', 1)[-1]})"
    if top in sys.stdlib_module_names:  # sqlite3.DatabaseError, json.decoder.JSONDecodeError
        return "python/os", top
    if top:
        return "package", NAMED.get(top, top)
    stdlib = _STDLIB.search(innermost.replace("\\", "/")) if innermost else None
    if stdlib:
        return "python/os", stdlib["module"]
    named = [NAMED[n] for n in NAMED if re.search(rf"\b{n}\b", line)]
    if named:
        return "package", named[0]
    if _OS.search(line) or _CPYTHON.search(line):
        return "python/os", ""
    if innermost or (cls and cls not in _BUILTIN):
        return "user code", ""
    # a built-in exception or an error line with no frame: its raiser cannot be told from the log
    return "unknown", "bare exception" if cls else "error line"


_DOTTED = re.compile(r"[\w.]+")
PARTLY = 30  # characters of a template's literal piece that, in a log, show the catalog has its message


def literal_pieces() -> list[tuple[str, Template]]:
    """Each catalog template's literal pieces (the text between its placeholders) as a log may print them partly:
    without a leading ``ERROR: ``, their first 40 characters; those of `PARTLY` characters or more, each with its
    template."""
    found = []
    for templates in load().values():
        for t in templates:
            for line in t.text.splitlines():
                for piece in _PLACEHOLDER.split(line):
                    piece = re.sub(r"^(?:(?:ERROR|Error|error)?: )", "", piece.strip())[:40]
                    # not a tail (", please report a bug"), nor a module's dotted path, which every message of
                    # that module's exceptions begins with ("torch.distributed.elastic.multiprocessin")
                    if len(piece) >= PARTLY and piece[0].isalnum() and not _DOTTED.fullmatch(piece):
                        found.append((piece, t))
    return found


def partly(text: str, pieces: list[tuple[str, Template]]) -> Template | None:
    """The first template one of whose long literal pieces begins a piece of ``text`` although no line of it matches
    whole: the message cut where the log was cut, without the prefix the template spells (``ERROR: ``), or another
    release's wording after the same words."""
    found = partly_where(text, pieces)
    return found[1] if found else None


def partly_where(text: str, pieces: list[tuple[str, Template]]) -> tuple[str, Template, str, int] | None:
    """`partly`'s piece, its template, the first line of ``text`` holding the piece and that line's number."""
    for piece, t in pieces:
        if piece in text:
            number, line = next((n, line) for n, line in enumerate(text.splitlines(), 1) if piece in line)
            return piece, t, line.strip(), number
    return None


def anchors_for(template: Template, line: str) -> tuple[list[str], list[str]]:
    """The recognisers that cite ``template`` or read its kind: their anchors on ``line``, and every anchor of
    theirs (what the line would need)."""
    from torchdoctor.explain.kinds import RECOGNISERS

    mine = [
        r for r in RECOGNISERS if template.id in r.templates or (template.kind and r.kind == template.kind)
    ]
    every = sorted({a for r in mine for a in r.anchors})
    return [a for a in every if a in line], every


def partly_sort(template: Template, on_line: list[str], read: bool) -> str:
    """How explain took a partly held message: ``read`` (a finding of the template's kind is made, or a finding
    was read on that line: the miss is the cause behind the message, not its reading), ``anchor, not read`` (an
    anchor is on the line, its confirming text is not), ``no anchor`` (the line lacks every anchor: cut, prefixed
    or reworded where the anchor is), ``no recogniser`` (the template has no kind and no finding is on the line)."""
    if read:
        return "read"
    if not template.kind:
        return "no recogniser"
    return "anchor, not read" if on_line else "no anchor"


def read_on(path: Path, kind: str, number: int) -> bool:
    """Whether explain makes a finding of ``kind`` on ``path``, or any finding read on its line ``number``."""
    findings = explain([str(path)])
    return any(
        f.id == f"log.{kind}" or any(str(w).endswith(f":{number}") for w in f.details.get("where", ()))
        for f in findings
    )


def partly_rows(rows: list[tuple[str, str, str, str, str]], folders: list[Path]) -> list[tuple]:
    """Per partly held miss: (file, label kind, template, piece, line, anchors on the line, every anchor of the
    template's recognisers, how explain took it (`partly_sort`))."""
    pieces = literal_pieces()
    by_file = {label.file: folder / label.file for folder in folders for label in labels(folder)}
    found = []
    for file, kind, cls, _source, _line in rows:
        if cls != "partly held":
            continue
        piece, t, line, number = partly_where(
            by_file[file].read_text(encoding="utf-8", errors="replace"), pieces
        )
        on, every = anchors_for(t, line)
        found.append(
            (
                file,
                kind,
                t,
                piece,
                line,
                on,
                every,
                partly_sort(t, on, read_on(by_file[file], t.kind, number)),
            )
        )
    return found


def partly_report(partly_held: list[tuple]) -> str:
    """Per partly held miss: its label, the template, the piece of it on the log, that line, the anchors of the
    template's recognisers on it, and how explain took it. Names files and what explain found: train only."""
    out = []
    for file, kind, t, piece, line, on, every, how in partly_held:
        out.append(f"{file}  label {kind}  template {t.id} (kind {t.kind or '-'}): {how}")
        out.append(f"    template: {t.text[:160]!r}")
        out.append(f"    piece:    {piece!r}")
        out.append(f"    line:     {line[:200]!r}")
        out.append(
            f"    anchors on line: {on or 'none'}; recognisers' anchors: {every[:6] or 'no recogniser'}"
        )
    out.append(partly_totals(partly_held))
    return "\n".join(out)


def partly_totals(partly_held: list[tuple]) -> str:
    """How explain took the partly held misses, counts only (`partly_sort`'s words)."""
    counts = Counter(row[-1] for row in partly_held)
    hows = ("read", "anchor, not read", "no anchor", "no recogniser")
    return "partly held, as explain took them: " + ", ".join(f"{how} {counts.get(how, 0)}" for how in hows)


def sort_misses(folders: list[Path]) -> list[tuple[str, str, str, str, str]]:
    """Every missed log holding no catalog template: (file, label kind, class, source, decisive line)."""
    every = unmapped() + unmapped(mapped=True)
    pieces = literal_pieces()
    rows = []
    for folder in folders:
        for label in labels(folder):
            outcome = judge(folder, label)
            if outcome.right:
                continue
            text = outcome.path.read_text(encoding="utf-8", errors="replace")
            if held(text, every):
                continue
            shown, line, frames = decisive(text)
            kind, source = sort_line(shown, line, frames)
            part = partly(text, pieces)
            if part is not None:
                kind, source = "partly held", f"{part.source}:{part.id.split(':', 1)[1]}"
            rows.append((label.file, label.kind, kind, source, line))
    return rows


CLASSES = ("partly held", "package", "unread part", "python/os", "user code", "unknown", "no error")


def coarse(cls: str, source: str) -> str:
    """What ``--totals`` prints of a source: a package, not its file (``torch/cuda/__init__.py`` -> ``torch``), a
    catalog source, not its template (``torch:some-template`` -> ``torch``)."""
    if cls == "unread part":
        return re.split(r"[/ ]", source, maxsplit=1)[0]
    if cls == "partly held":
        return source.split(":", 1)[0]
    return source


def report(rows: list[tuple[str, str, str, str, str]], totals: bool) -> str:
    """Per log (unless ``totals``), then counts per class and per source within a class."""
    out = [f"missed logs holding no template: {len(rows)}"]
    if not totals:
        for file, kind, cls, source, line in sorted(rows, key=lambda r: (CLASSES.index(r[2]), r[3], r[0])):
            out.append(f"{file:<10} {kind:<28} {cls:<11} {source:<40} {line[:140]}")
    by_class = Counter(r[2] for r in rows)
    for cls in CLASSES:
        out.append(f"{cls:<12} {by_class.get(cls, 0):>4}")
        sources = Counter((coarse(cls, r[3]) if totals else r[3]) for r in rows if r[2] == cls and r[3])
        for source, n in sorted(sources.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"  {source:<50} {n:>4}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders with a SOURCES.md table")
    parser.add_argument("--totals", action="store_true", help="counts per class and source only, no file")
    parser.add_argument(
        "--partly",
        action="store_true",
        help="per partly held miss: template, piece, line, anchors (train only)",
    )
    args = parser.parse_args(argv)
    if refuse_unlabelled(args.folders):
        return 2
    rows = sort_misses(args.folders)
    partly_held = partly_rows(rows, args.folders)
    if args.partly and not args.totals:
        print(partly_report(partly_held))
        return 0
    print(report(rows, args.totals))
    print(partly_totals(partly_held))
    return 0


if __name__ == "__main__":
    sys.exit(main())
