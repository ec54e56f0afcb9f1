"""Which releases of a library print an exception's message, read from the released packages themselves.

`--build` reads, for each release api_history.py downloads (one wheel per minor release, its last patch, cached in
/tmp/v_wheels, never in the repository), the messages of the package's own exceptions (``raise X("...")``, or a
message assigned first) and asserts (`ast`; the downloaded code is never imported), and writes
src/torchdoctor/explain/catalog/message_history.tsv: only the messages that some releases print and the newest release read no longer does, each with the first and
last release that print it and the first after it that does not. An exception raised in that package's frame
with such a message comes from a release older than the one that dropped it (kinds/message_history.py).

Left out, so that a row never says a message went when it was only reworded or moved: a message gone for a while
and back; one whose first words (its literal text, values aside) still open a message of a later release, or
whose own words are mostly in a message its file raises in the release after its last (the same check, reworded);
a message of fewer than four words. Model and pipeline folders (transformers/models/,
diffusers/pipelines/) are not read: their messages are about one model's inputs, not a release.

    python benchmarks/message_history.py --build      # read (wheels cached) and write
    python benchmarks/message_history.py              # the rows per package in the table
"""

from __future__ import annotations

import re
import sys

from api_history import MINORS, download, package_files, version_of, write
from api_keywords import wants_build
from catalog_coverage import clean, python_messages, worth_keeping

from torchdoctor.explain.kinds.message_history import TABLE, literal_words, load

# the packages read (MINORS' releases of each), and the folders of each that are read; torch only where a
# training script reaches its Python (its operators' messages are C++)
FOLDERS = {
    "transformers": ("transformers/",),
    "accelerate": ("accelerate/",),
    "peft": ("peft/",),
    "trl": ("trl/",),
    "datasets": ("datasets/",),
    "huggingface_hub": ("huggingface_hub/",),
    "pytorch_lightning": ("pytorch_lightning/",),
    "lightning": ("lightning/pytorch/", "lightning/fabric/"),
    "deepspeed": ("deepspeed/",),
    "diffusers": ("diffusers/",),
    "torchvision": ("torchvision/",),
    "timm": ("timm/",),
    "bitsandbytes": ("bitsandbytes/",),
    "torchmetrics": ("torchmetrics/",),
    "sentence_transformers": ("sentence_transformers/",),
    "torch": (
        "torch/distributed/",
        "torch/utils/data/",
        "torch/nn/parallel/",
        "torch/cuda/",
        "torch/amp/",
        "torch/optim/",
        "torch/utils/checkpoint.py",
        "torch/serialization.py",
    ),
}
SKIPPED = re.compile(
    r"/(?:tests?|test_utils|testing|examples?|models|pipelines|benchmarks?)/|_tf_|_flax_|modeling_tf|modeling_flax"
)
# the first words of a message that say it is the same check when a later release still opens a message so
OPENING = 5
# a message whose words (these aside) are mostly in a message the same file raises in the release after its last
# is that message reworded
COMMON = frozenset(
    "a an the to of in is be it or and but not you your for with this that on by as are".split()
)
SHARED = 0.5
# the calls whose first text argument is an exception's message (ValueError(...), MisconfigurationException(...))
EXCEPTIONS = re.compile(r"(?:Error|Exception)$")


def raised_messages(source: str) -> list[str]:
    """The literal messages of one file's exceptions (``raise X("...")``, a message assigned first) and asserts
    (``{}`` where a value goes); not its warnings and log lines."""
    found = python_messages(source, EXCEPTIONS)
    return [clean(m) for m in found if worth_keeping(m) and len(literal_words(m)) >= 4]


def read_release(package: str, wheel) -> dict[str, str]:
    """{message: the file that raises it} of one release."""
    folders = FOLDERS[package]
    messages: dict[str, str] = {}
    for path, text in sorted(package_files(wheel).items()):  # its Python files, by the path they install to
        if not path.endswith(".py") or not path.startswith(folders) or SKIPPED.search("/" + path):
            continue
        for message in raised_messages(text):
            messages.setdefault(message, path)
    return messages


def reworded(message: str, later: list[str]) -> bool:
    """Whether most of ``message``'s own words are in one of the messages ``later`` (the same file, the next
    release): the same check under other words."""
    words = set(literal_words(message)) - COMMON
    return any(len(words & set(literal_words(m))) >= SHARED * len(words) for m in later)


def rows_for(package: str) -> tuple[list[str], list[tuple]]:
    """(the releases read, the rows of the messages some of them print and the newest does not)."""
    releases: list[tuple[str, dict[str, str]]] = []
    for minor in MINORS[package]:
        wheel = download(package, minor)
        if wheel is not None:
            releases.append((version_of(wheel), read_release(package, wheel)))
            print(f"  {package} {version_of(wheel)}: {len(releases[-1][1])} messages", file=sys.stderr)
    return [v for v, _ in releases], changes(releases)


def changes(releases: list[tuple[str, dict[str, str]]]) -> list[tuple]:
    """The rows of the messages some of ``releases`` ((version, {message: file}), oldest first) print and the
    newest does not: (first, last, gone, file, message escaped)."""
    versions = [v for v, _ in releases]
    # the openings of the messages each release or a later one prints
    openings: list[set[tuple[str, ...]]] = [set() for _ in releases]
    for at in range(len(releases) - 1, -1, -1):
        openings[at] = {tuple(literal_words(m)[:OPENING]) for m in releases[at][1]}
        if at + 1 < len(releases):
            openings[at] |= openings[at + 1]
    seen: dict[str, list[bool]] = {}
    files: dict[str, str] = {}
    for at, (_, messages) in enumerate(releases):
        for message, path in messages.items():
            seen.setdefault(message, [False] * len(releases))[at] = True
            files[message] = path
    rows = []
    for message, where in sorted(seen.items()):
        first = where.index(True)
        last = len(where) - 1 - where[::-1].index(True)
        if where[-1] or not all(where[first : last + 1]):
            continue  # still printed, or gone for a while and back
        after = releases[last + 1][1]
        if tuple(literal_words(message)[:OPENING]) in openings[last + 1] or reworded(
            message, [m for m, path in after.items() if path == files[message]]
        ):
            continue  # a later release opens a message the same way, or words it otherwise: the same check
        escaped = message.replace("\\", "\\\\").replace("\t", " ").replace("\n", "\\n")
        rows.append((versions[first], versions[last], versions[last + 1], files[message], escaped))
    return rows


def build() -> None:
    """Read every package's releases and write the table."""
    header = [
        "# Messages of a library's own exceptions and asserts that some releases print and the newest release",
        "# read does not, read from the released wheels by benchmarks/message_history.py --build (ast; never",
        "# imported). A '#releases' line lists a package's releases read; a row: the first release read that",
        "# prints it, the last that does, the first after it that does not, the file, the message ({} where a",
        "# value goes; \\n between its lines).",
    ]
    write(TABLE, header, {package: rows_for(package) for package in FOLDERS})


def main(argv: list[str] | None = None) -> int:
    if wants_build(argv, __doc__ or ""):
        build()
        load.cache_clear()
    for package, (versions, rows) in load().items():
        print(
            f"{package:22} {versions[0]}..{versions[-1]} ({len(versions)} releases): {len(rows)} messages gone"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
