"""Every place a command is told to write (``--log-dir``, ``-o``, ``--plot``), where it cannot: one line naming
the flag, the path and why, exit 2, before anything starts — never torch's traceback seconds later."""

import os
import shutil
import subprocess
import sys

import pytest

# (command and flag, how the path is given: "=" joins it to the flag)
WRITERS = [
    (["launch", "--nproc-per-node", "1", "--log-dir"], "folder"),
    (["net", "--nproc-per-node", "2", "--log-dir"], "folder"),
    (["report", "--skip", "net", "-o"], "file"),
    (["net", "--bench", "--plot"], "file"),
]


def places(tmp_path):
    """(where, what the message must say) for each kind of place that cannot be written."""
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    return [
        ("/proc/torchdoctor-logs/x", "/proc"),
        ("/sys/torchdoctor-logs", "/sys"),
        (str(a_file / "logs"), "is a file, not a folder"),
    ]


def run(args, cwd, prefix=()):
    return subprocess.run(
        [*prefix, sys.executable, "-m", "torchdoctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def command(writer, where, tmp_path):
    args, kind = writer
    script = tmp_path / "train.py"
    script.write_text("print('started')\n")
    target = where + ("/plot.png" if args[-1] == "--plot" else "/report.md" if kind == "file" else "")
    return [*args, target, *([str(script)] if args[0] == "launch" else [])], target


def run_here(args, cwd, capsys, monkeypatch):
    """``torchdoctor ARGS`` in this process (the same `main` a real one runs): (status, stdout, stderr)."""
    from torchdoctor.cli import main

    monkeypatch.chdir(cwd)
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err


# A read-only file system is mounted in a mount namespace of its own, which needs root.
CAN_MOUNT = os.geteuid() == 0 and shutil.which("unshare") is not None and shutil.which("mount") is not None
needs_mount = pytest.mark.skipif(
    not CAN_MOUNT,
    reason="a read-only file system is mounted in a mount namespace of its own, which needs root",
)


@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: " ".join(w[0][:1] + w[0][-1:]))
def test_a_place_that_cannot_hold_files_is_refused_in_one_line(writer, tmp_path, capsys, monkeypatch):
    # Through the same `main` in this process, which has torch imported already (a `net` of its own imports it
    # before it refuses: 2-3 s of CPU for each refusal). The refusal as a user meets it, in a real process, is
    # test_a_read_only_file_system_is_named's, for every writer here (its status, its one line, nothing started);
    # where that test cannot mount, the first place here runs in a real process instead.
    for index, (where, said) in enumerate(places(tmp_path)):
        args, target = command(writer, where, tmp_path)
        if index == 0 and not CAN_MOUNT:
            result = run(args, tmp_path)
            status, out, err = result.returncode, result.stdout, result.stderr
        else:
            status, out, err = run_here(args, tmp_path, capsys, monkeypatch)
        assert status == 2, (args, err)
        (line,) = err.strip().splitlines()
        assert line.startswith(f"torchdoctor: error: {writer[0][-1]} "), line
        assert said in line, line
        assert "started" not in out


@needs_mount
@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: " ".join(w[0][:1] + w[0][-1:]))
def test_a_read_only_file_system_is_named(writer, tmp_path):
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    args, target = command(
        writer, str(read_only / "logs") if writer[1] == "folder" else str(read_only), tmp_path
    )
    # a private mount namespace: the read-only mount is seen by this one command only, and ends with it
    mount = f'mount -t tmpfs -o ro,size=64k tmpfs {read_only} && exec "$@"'
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, "sh"]
    result = run(args, tmp_path, prefix)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"torchdoctor: error: {writer[0][-1]} "), line
    assert "on a read-only file system" in line, line
    assert target in line
    assert "started" not in result.stdout  # refused before anything started


def test_launch_leaves_no_folder_of_its_check_behind(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit(3)\n")
    logs = tmp_path / "new" / "logs"
    args = ["launch", "--nproc-per-node", "1", "--log-dir", str(logs), "--nnodes", "x", str(script)]
    status, _, _ = run_here(args, tmp_path, capsys, monkeypatch)
    assert status == 2
    assert not (tmp_path / "new").exists()
