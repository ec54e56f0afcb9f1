"""An output file asked for in /proc or /sys: say what the folder is, not that a folder does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchdoctor.errors import BadInput, require_writable_file

pytestmark = pytest.mark.skipif(not Path("/proc/self/mountinfo").exists(), reason="needs Linux's /proc")


@pytest.mark.parametrize("path", ["/proc/report.txt", "/proc/self/report.txt", "/proc/self/status"])
def test_a_file_in_proc_is_refused_for_what_proc_is(path):
    with pytest.raises(BadInput) as refused:
        require_writable_file("--output", path)
    assert str(refused.value) == (
        f"--output {path}: /proc is the kernel's view of the processes, not a place for files; give a path on disk"
    )
    assert "does not exist" not in str(refused.value)


def test_a_file_in_sys_and_a_link_into_proc_are_refused(tmp_path):
    with pytest.raises(BadInput, match=r"^-o /sys/report.txt: /sys is the kernel's view of the devices"):
        require_writable_file("-o", "/sys/report.txt")
    link = tmp_path / "out"
    link.symlink_to("/proc/self")
    with pytest.raises(BadInput, match=rf"^-o {link}/x.txt: /proc is the kernel's view of the processes"):
        require_writable_file("-o", link / "x.txt")


def test_ordinary_places_are_still_fine(tmp_path):
    require_writable_file("-o", tmp_path / "report.txt")
    require_writable_file("-o", "/dev/null")
    assert not (tmp_path / "report.txt").exists()
    with pytest.raises(BadInput, match="the folder .* does not exist"):
        require_writable_file("-o", tmp_path / "missing" / "report.txt")
