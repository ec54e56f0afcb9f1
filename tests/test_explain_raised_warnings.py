"""Under PYTHONWARNINGS=error (or warnings.simplefilter("error")) a library's warning is raised as the exception
that stops the run; explain read it as "a warning, the run went on" (USER10's trial, session 41). A warning at the
end of a traceback is the run's error, with the filter that keeps errors for the script's own warnings; the same
warning printed (path:line: UserWarning: ...) is still a warning. Recorded (fixtures/raised_warnings/) and made
here by a real DataLoader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from explaining import explained

FIXTURES = Path(__file__).parent / "fixtures" / "raised_warnings"


def _is_the_runs_error(found, warning: str = "UserWarning") -> None:
    assert (found.id, found.status) == ("log.dataloader_workers_oversubscribed", "fail"), found.summary
    assert f"a {warning} raised as an error" in found.summary and "the run went on" not in found.summary
    assert "PYTHONWARNINGS=error:::__main__" in found.fix, found.fix


def test_a_warning_raised_by_pythonwarnings_error_is_the_runs_error():
    _is_the_runs_error(explained((FIXTURES / "u10_dataloader_workers_pythonwarnings_error.txt").read_text()))


def test_the_same_warning_printed_is_still_a_warning_the_run_went_on_after():
    found = explained((FIXTURES / "dataloader_workers_printed.txt").read_text())
    assert (found.id, found.status) == ("log.dataloader_workers_oversubscribed", "warn"), found.summary
    assert "the run went on" in found.summary and "raised as an error" not in found.summary


def test_a_real_dataloader_under_simplefilter_error_is_read_as_stopped_by_its_warning(tmp_path):
    script = (
        "import warnings\nimport torch.utils.data as d\nwarnings.simplefilter('error')\n"
        "d.DataLoader(list(range(4)), num_workers=(os.cpu_count() or 1) * 8 + 8)\n"
    )
    (tmp_path / "train.py").write_text("import os\n" + script)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    done = subprocess.run(
        [sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode != 0 and "UserWarning: This DataLoader will create" in done.stderr, done.stderr[
        -2000:
    ]
    _is_the_runs_error(explained(done.stderr))
