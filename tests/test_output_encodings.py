"""A terminal that cannot show ✓ (``PYTHONIOENCODING=ascii``, a latin-1 locale): every command prints its
report with ASCII stand-ins and its own exit status, never a `UnicodeEncodeError`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchdoctor.findings import ASCII_FALLBACK, fall_back_to_ascii, shows_marks

FIXTURES = Path(__file__).parent / "fixtures"
COMMANDS = [
    ["check", "--skip", "net"],
    ["check", "-v", "--skip", "net"],
    ["env"],
    ["explain", str(FIXTURES / "logs" / "002_nccl_watchdog_timeout.txt")],
    ["net", "--read-log", str(FIXTURES / "nccl" / "ib-roce-ibv-create-cq-failed.log")],
    ["report", "--skip", "net"],
    ["scale", "--devices", "8", "--per-device-batch", "32", "--target-devices", "3", "--lr", "0.1"],
    ["launch", "--help"],
    ["net", "--nproc-per-node", "0"],  # bad input: the error line itself
]


# Which command and which encoding: one real process per encoding (Python itself turns PYTHONIOENCODING into
# the stream that `main` finds, and its stderr's own error handler), the other commands through the same `main`
# in this process with stdout and stderr built as Python builds them for that encoding: what a command prints
# is `main`'s, and a process each (up to 4 s of CPU for `check`) proved nothing more.
# The real ones print marks their encoding cannot show (explain's ✗; net's ✗ beside a × latin-1 can) and start
# no torch of their own, so the process boundary costs well under a second.
IN_A_REAL_PROCESS = {
    (tuple(COMMANDS[3]), "ascii"),
    (tuple(COMMANDS[4]), "latin-1"),
}  # explain, net --read-log


def _in_this_process(args, encoding):
    """``torchdoctor ARGS`` through `main` here, stdout and stderr of ``encoding`` as Python makes them under
    ``PYTHONIOENCODING`` (stdout strict, stderr ``backslashreplace``): (status, stdout bytes, stderr bytes)."""
    import contextlib
    import io

    from torchdoctor.cli import main

    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="backslashreplace", write_through=True)
    saved = dict(os.environ)
    os.environ["COLUMNS"] = "200"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(args, status, out.buffer.getvalue(), err.buffer.getvalue())


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_command_prints_in_ascii_where_unicode_cannot_be_shown(args, encoding):
    if (tuple(args), encoding) in IN_A_REAL_PROCESS:
        env = {**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "200"}
        result = subprocess.run(
            [sys.executable, "-m", "torchdoctor", *args], capture_output=True, timeout=180, env=env
        )
    else:
        result = _in_this_process(args, encoding)
    out, err = result.stdout.decode(encoding), result.stderr.decode(encoding)
    assert "Traceback" not in err and "UnicodeEncodeError" not in err, err
    assert result.returncode in (0, 1, 2), err
    assert (result.returncode == 2) == (args[-1] == "0"), err
    if args[0] in ("check", "env"):
        assert "\n+ " in "\n" + out or "\nx " in "\n" + out or "\n! " in "\n" + out, out
    result.stdout.decode("ascii") if encoding == "ascii" else None  # nothing outside the encoding


def test_the_marks_and_the_common_signs_have_stand_ins(tmp_path):
    path = tmp_path / "out.txt"
    with open(path, "w", encoding="ascii") as stream:
        assert not shows_marks(stream)
        fall_back_to_ascii(stream)
        stream.write("✓ ✗ – … × ≤ → ünknown")
    assert path.read_text() == "+ x - ... x <= -> ?nknown"
    assert all(ord(c) < 128 for value in ASCII_FALLBACK.values() for c in value)
    with open(path, "w", encoding="utf-8") as stream:
        assert shows_marks(stream)
