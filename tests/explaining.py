"""What the explain tests feed `explain` and read back: a log of the corpus's train half, or a text given on
standard input, and the lead finding. Not a test module; imported as ``from explaining import ...`` (pytest puts
``tests/`` on ``sys.path``)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.diagnose import explain

CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


def lead(name: str):
    """The lead finding on the corpus's train log ``name``."""
    (found, *_) = explain([str(CORPUS / name)])
    return found


def read(name: str, kind: str = "dependency_version", confidence: str = "certain"):
    """The lead finding on the train log ``name``, asserted to be ``kind`` at ``confidence``."""
    found = lead(name)
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", confidence), (name, found.summary)
    return found


def explained(text: str):
    """The lead finding on ``text`` read from standard input."""
    (found, *_) = explain(["-"], stdin=io.BytesIO(text.encode()))
    return found


def likely_with(text: str, kind: str, other: str):
    """The lead finding on ``text``: asserted to be ``kind``, only likely, with ``other`` among its other
    readings."""
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    assert other in found.details["alternatives"], found.details["alternatives"]
    return found


def certain(text: str, kind: str):
    """The lead finding on ``text``: asserted to be ``kind``, certain."""
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "certain", found.summary
    return found


def certain_saying(text: str, kind: str, said: list[str], fix: list[str]):
    """The lead finding on ``text``: asserted to be ``kind``, certain, each of ``said`` in its summary and each of
    ``fix`` in its fix."""
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "certain", (found.id, found.summary)
    for words in said:
        assert words in found.summary, (words, found.summary)
    for words in fix:
        assert words in found.fix, (words, found.fix)
    return found


def called_from(path: str, code: str, message: str, error: str = "TypeError") -> str:
    """A traceback whose innermost frame, in ``path``, runs ``code`` and raises ``error: message`` (the project's
    train.py calls it)."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 88, in <module>\n'
        "    main()\n"
        f'  File "{path}", line 41, in main\n'
        f"    {code}\n"
        f"{error}: {message}"
    )


def leads_with(text: str, kind: str, confidence: str, words: list[str]):
    """The lead finding on ``text``: asserted to be ``kind`` at ``confidence``, every one of ``words`` in its
    summary or fix."""
    found = explained(text + "\n")
    assert found.id == f"log.{kind}", (text, found.id, found.summary)
    assert found.details["confidence"] == confidence, (text, found.summary)
    said = found.summary + "\n" + found.fix
    for word in words:
        assert word in said, (word, said)
    return found


def names_its_kind(text: str, kind: str, confidence: str, words: list[str]):
    """The lead finding on ``text`` (as pasted): asserted to be ``kind`` at ``confidence``, every one of ``words``
    in its summary or fix, whatever their case."""
    finding = explained(text)
    assert finding.id == f"log.{kind}", (finding.id, finding.summary)
    assert finding.details["confidence"] == confidence, finding.summary
    for word in words:
        assert word.lower() in (finding.summary + finding.fix).lower(), (word, finding.summary, finding.fix)
    return finding


def template(ident: str, *values: str) -> str:
    """The catalog template ``ident`` with its ``{}`` placeholders filled in order (others left as printed:
    `test_explain_coverage.template` fills ``%s``-style ones too)."""
    text = by_id()[ident].text
    for value in values:
        text = text.replace("{}", value, 1)
    return text


def filled(ident: str, *values: str) -> str:
    """The catalog template ``ident`` with its placeholders (``{}``, ``%s``, ``%d``) filled in the order they
    stand in the text."""
    text = by_id()[ident].text
    for value in values:
        marks = [(text.find(m), m) for m in ("{}", "%s", "%d") if m in text]
        if marks:
            at, mark = min(marks)
            text = text[:at] + value + text[at + len(mark) :]
    return text


def made_wheel(folder: Path, name: str, files: dict[str, str]) -> Path:
    """A wheel ``name`` made in ``folder`` holding ``files`` ({path inside: text}), for the generators that read
    released wheels (benchmarks/api_history.py, api_keywords.py) without a download."""
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for inside, text in files.items():
            archive.writestr(inside, text)
    return path


def traceback_of(call) -> str:
    """The traceback ``call()`` raises, as Python prints it (the test fails when it raises nothing)."""
    import traceback

    try:
        call()
    except Exception as error:  # noqa: BLE001 - any exception: the message under test is whatever torch raised
        return "".join(traceback.format_exception(error))
    raise AssertionError(f"{call} raised nothing")
