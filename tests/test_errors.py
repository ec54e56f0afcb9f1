"""The shared path checks: one vocabulary for every flag that names a file or a folder."""

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from torchdoctor.errors import BadInput, require_folder, require_readable_file, require_writable_file

LONG = "n" * 300  # longer than any file system's name limit (255 on ext4, xfs, btrfs, tmpfs)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A folder with every kind of thing a path flag can meet, as the working directory."""
    (tmp_path / "bin.dat").write_bytes(b"\0")
    (tmp_path / "folder").mkdir()
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    (tmp_path / "dangling").symlink_to("gone")
    os.mkfifo(tmp_path / "pipe")
    monkeypatch.chdir(tmp_path)
    return tmp_path


WRITE_REFUSED = [
    ("bin.dat/x", "bin.dat is a file, not a folder"),
    ("bin.dat/deeper/x", "bin.dat is a file, not a folder"),
    ("missing/x", "the folder missing does not exist"),
    ("folder/missing/x", "the folder folder/missing does not exist"),
    ("loop-a", "a symbolic link loop"),
    ("loop-a/x", "a symbolic link loop"),
    (LONG, "name too long (300 characters"),
    (f"folder/{LONG}", "name too long (300 characters"),
    (f"{LONG}/x", "name too long (300 characters"),
    ("folder/" + "d/" * 3000 + "x", "path too long"),
    ("pipe", "a named pipe that nothing reads"),
    ("folder", "is a folder, not a file"),
    ("", "empty"),
]


@pytest.mark.parametrize("path, reason", WRITE_REFUSED)
def test_unwritable_paths_are_named_with_the_reason(tree, path, reason):
    before = sorted(os.listdir(tree))
    with pytest.raises(BadInput) as caught:
        require_writable_file("-o", path)
    message = str(caught.value)
    assert message.startswith(f"-o {path or repr('')}: ") and reason in message, message
    assert "\n" not in message
    assert sorted(os.listdir(tree)) == before


@pytest.mark.parametrize("path", ["new.md", "bin.dat", "folder/new.md", "dangling"])
def test_writable_paths_pass_and_leave_the_tree_as_it_was(tree, path):
    before = {p: (tree / p).lstat().st_size for p in os.listdir(tree)}
    require_writable_file("-o", path)
    assert {p: (tree / p).lstat().st_size for p in os.listdir(tree)} == before


READ_REFUSED = [
    ("bin.dat/x", "bin.dat is a file, not a folder"),
    ("missing/x", "the folder missing does not exist"),
    ("nothing.txt", "does not exist"),
    ("loop-a", "a symbolic link loop"),
    ("dangling", "a symbolic link to gone, which does not exist"),
    (LONG, "name too long (300 characters"),
    ("folder", "is a folder, not a file"),
    ("", "empty"),
]


@pytest.mark.parametrize("path, reason", READ_REFUSED)
def test_unreadable_paths_are_named_with_the_reason(tree, path, reason):
    with pytest.raises(BadInput) as caught:
        require_readable_file("--read-log", path)
    message = str(caught.value)
    assert message.startswith(f"--read-log {path or repr('')}: ") and reason in message, message
    assert "no such file" not in message.lower()


def test_a_pipe_nobody_writes_is_readable_without_waiting(tree):
    require_readable_file("--read-log", "pipe")  # would block forever if opened without O_NONBLOCK


@pytest.mark.parametrize(
    "path, reason",
    [
        ("bin.dat", "is a file, not a folder"),
        ("nowhere", "does not exist"),
        ("loop-a", "a symbolic link loop"),
        (LONG, "name too long"),
        ("", "empty"),
    ],
)
def test_folders_share_the_vocabulary(tree, path, reason):
    with pytest.raises(BadInput) as caught:
        require_folder("--root", path)
    assert reason in str(caught.value)


def test_no_permission_is_named_as_such():
    """Run as an ordinary user (root ignores permissions): a closed folder, a read-only file, a closed parent."""
    with tempfile.TemporaryDirectory(
        prefix="td-permissions-"
    ) as where:  # pytest's own tmp is closed to others
        _check_permissions(Path(where))


def _check_permissions(tmp_path):
    shut = tmp_path / "shut"
    shut.mkdir(mode=0o555)
    (shut / "existing.md").write_text("x")
    (shut / "existing.md").chmod(0o444)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "secret.txt").write_text("x")
    tmp_path.chmod(0o755)
    script = textwrap.dedent(
        f"""
        import os
        from torchdoctor.errors import BadInput, require_readable_file, require_writable_file
        if os.geteuid() == 0:
            os.setgid(65534)
            os.setuid(65534)
        for check, path in [
            (require_writable_file, {str(shut / "new.md")!r}),
            (require_writable_file, {str(shut / "existing.md")!r}),
            (require_readable_file, {str(private / "secret.txt")!r}),
            (require_writable_file, {str(private / "new.md")!r}),
        ]:
            try:
                check("-o", path)
                print("accepted", path)
            except BadInput as error:
                print(error)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"-o {shut / 'new.md'}: no permission to write in the folder {shut}",
        f"-o {shut / 'existing.md'}: no permission to write it",
        f"-o {private / 'secret.txt'}: no permission to enter the folder {private}",
        f"-o {private / 'new.md'}: no permission to enter the folder {private}",
    ]
