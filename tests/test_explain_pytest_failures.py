"""A failure pasted from a test run is read by its error: pytest's ``E   ValueError: ...`` is the exception's line,
its entries (``path.py:6: in build``, the long style's source with the ``>`` line and ``path.py:2: ValueError``
below it) are the traceback's frames, and its own assertion diff (the ``E`` lines after an AssertionError) is not a
new error (reader.clean, traceback_styles' pytest entries). The real report of train/6470 (huggingface/accelerate
#1531), and pytest's own output, made here by running it on a failing test."""

import subprocess
import sys
from pathlib import Path

import pytest

from torchdoctor.explain.collect import Collector
from torchdoctor.explain.diagnose import explain

CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"

FAILING = """
def load(path):
    raise ValueError(f"no such split: {path}")


def build(path):
    return load(path)


def test_raises():
    build("validation")


def test_diff():
    assert {"split": "train", "error": "ValueError: old"} == {"split": "valid", "error": "ValueError: new"}
"""


def pytest_report(folder: Path, style: str) -> Path:
    """pytest's output on `FAILING` in ``style`` (--tb=...), written to a file in ``folder``."""
    (folder / "test_demo.py").write_text(FAILING.lstrip())
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tb={style}", "test_demo.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "E   " in ran.stdout or style == "native", ran.stdout + ran.stderr
    report = folder / "report.txt"
    report.write_text(ran.stdout)
    return report


def raised_in(path: Path) -> list[str]:
    collector = Collector()
    with path.open("rb") as stream:
        collector.read(stream, str(path), head=path.read_bytes()[: 64 * 1024])
    return [r.text() for r in collector.raised]


@pytest.mark.parametrize("style", ["auto", "long", "short", "native"])
def test_a_failed_tests_error_and_the_line_that_raised_it_are_read(tmp_path, style):
    report = pytest_report(tmp_path, style)
    lead = explain([str(report)])[0]
    assert lead.details["exception"] == "ValueError: no such split: validation", lead.summary
    assert lead.details["frame"].endswith("test_demo.py:2 in load"), lead.details
    assert lead.details["code"] == 'raise ValueError(f"no such split: {path}")'


@pytest.mark.parametrize("style", ["auto", "short"])
def test_pytests_assertion_diff_is_not_a_new_error(tmp_path, style):
    # the diff quotes "ValueError: old" on lines of pytest's own ("E         {'error': 'ValueError: old'} != ...")
    read = raised_in(pytest_report(tmp_path, style))
    assert read == [
        "ValueError: no such split: validation",
        "AssertionError: assert {'split': 'tr...ueError: old'} == {'split': 'va...ueError: new'}",
    ], read


def test_a_real_pasted_report_names_the_library_line_that_raised():
    # train/6470: pytest's long entry in accelerate's operations.py, "data = None" above it
    lead = explain([str(CORPUS / "6470.txt")])[0]
    assert lead.details["frame"] == "../accelerate/src/accelerate/utils/operations.py:223 in find_batch_size"
    assert lead.details["code"].startswith('raise TypeError(f"Can only find the batch size')
    assert lead.details["facts"]["traceback_frame"] is True


def test_the_place_tb_line_prints_is_where_the_error_was_raised(tmp_path):
    # --tb=line: "<path>:<lineno>: <message>" (pytest's ReprFileLocation); pytest 9 prints the "E" lines above it, and
    # before 9 only that line per failure: both read as the error raised at that place, a failure (exit status 1),
    # not an error line of the log with no place (until session 41, "at report.txt:3", exit status 0)
    report = pytest_report(tmp_path, "line")
    place = f"{tmp_path}/test_demo.py:2: ValueError: no such split: validation"
    assert place in report.read_text().splitlines()
    alone = tmp_path / "alone.txt"
    alone.write_text(
        "".join(line + "\n" for line in report.read_text().splitlines() if not line.startswith("E "))
    )
    for path in (report, alone):
        lead, *others = explain([str(path)])
        assert lead.status == "fail" and lead.details["exception"] == "ValueError: no such split: validation"
        assert lead.details["frame"] == f"{tmp_path}/test_demo.py:2 in ?", (path.name, lead.details)
        assert [f.details.get("exception") for f in others if f.status == "fail"] != [
            lead.details["exception"]
        ]
