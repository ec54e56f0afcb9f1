"""A notebook's traceback cut before its error line: IPython's header ("ValueError      Traceback (most recent call
last)") names the exception's type, read as likely, never certain (cut_traceback.reading). Real notebook logs of
the corpus's train half, cut here where a paste stops."""

from pathlib import Path

import pytest

from torchdoctor.explain.diagnose import explain

CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


def cut_before_error(tmp_path: Path, name: str, error: str, keep_header: bool = True) -> Path:
    """The corpus log ``name`` up to the line before its ``error`` line (and without its header's two lines)."""
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    kept = lines[: next(at for at, line in enumerate(lines) if line.startswith(f"{error}:"))]
    cut = tmp_path / name
    cut.write_text("\n".join(kept if keep_header else kept[2:]) + "\n", encoding="utf-8")
    return cut


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("1935.txt", "ValueError"),  # IPython 8: "Cell In[10], line 5" frames
        ("746.txt", "ImportError"),  # older IPython: "<ipython-input-13-...> in <module>"
    ],
)
def test_the_headers_type_names_a_cut_notebook_traceback_as_likely(tmp_path, name, error):
    lead = explain([str(cut_before_error(tmp_path, name, error))])[0]
    assert lead.id == "log.unrecognised" and lead.status == "skip", lead.summary
    assert lead.details["exception_type"] == error, lead.details
    assert lead.details["confidence"] == "likely"
    assert f"likely a {error}" in lead.summary


def test_a_notebook_traceback_with_its_error_line_is_read_by_that_line():
    lead = explain([str(CORPUS / "1935.txt")])[0]
    assert "exception_type" not in lead.details, lead.details


def test_without_the_header_nothing_names_the_type(tmp_path):
    lead = explain([str(cut_before_error(tmp_path, "1935.txt", "ValueError", keep_header=False))])[0]
    assert "exception_type" not in lead.details, lead.details
