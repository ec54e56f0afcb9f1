"""benchmarks/explain_throughput.py's side of the comparison: grep given every anchor of every recogniser. Joined into
one argument the anchors outgrew the 128 KiB the kernel allows a single argument (grep never started: "Argument list
too long"); one a line in a file for ``grep -E -f``, grep reads them all and counts the failure lines."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import explain_throughput  # noqa: E402 - the benchmark's own functions

from torchdoctor.explain.kinds import RECOGNISERS  # noqa: E402


@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep to compare with")
def test_grep_reads_every_anchor_from_a_file_and_counts_the_buried_failure(tmp_path):
    patterns = tmp_path / "anchors.txt"
    patterns.write_text(explain_throughput.grep_patterns(), encoding="utf-8")
    anchors = {a for r in RECOGNISERS for a in r.anchors}
    assert len(patterns.read_text(encoding="utf-8").splitlines()) >= len(anchors)
    log = tmp_path / "train.log"
    explain_throughput.generate(log, 200_000)
    done = subprocess.run(
        ["grep", "-E", "-c", "-f", str(patterns), str(log)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 2  # the out-of-memory line and the watchdog's timeouts
