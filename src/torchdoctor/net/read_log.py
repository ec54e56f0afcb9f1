"""``torchdoctor net --read-log``: findings from saved output (an NCCL_DEBUG=INFO log, torch's error output).

A file from someone else is untrusted input: a folder, a terminal or a FIFO nobody writes to is named or read
as empty, never waited on, and a stream is read only up to `READ_LOG_STREAM_LIMIT`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from torchdoctor.errors import BadInput
from torchdoctor.findings import Finding

# torch_errors kinds -> the finding id a live run would give for the same failure
_LOG_IDS = {
    "unreachable": "net.join",
    "rendezvous": "net.join",
    "collective_timeout": "net.collective",
    "peer_closed": "net.collective",
    "nccl_error": "net.nccl_error",
}

# A non-regular --read-log (a pipe, /dev/zero) is read up to this much; a regular file is read whole.
READ_LOG_STREAM_LIMIT = 256 * 2**20


def read_log_findings(*paths: Path) -> list[Finding]:
    """Findings from saved output: the NCCL summary and every torch.distributed failure in it.

    Several files are read as one log (a job's ranks). A file with neither NCCL lines nor a failure (empty,
    binary, or some other output) is a warning naming it, not a silent skip. Raises `BadInput` naming a file
    that cannot be read.
    """
    from torchdoctor.net.bandwidth import human_size
    from torchdoctor.net.nccl_log import findings as nccl_findings
    from torchdoctor.net.nccl_log import summarise
    from torchdoctor.net.torch_errors import classify

    texts, notes = [], []
    for path in paths:
        data, cut = _read_log_bytes(path)
        text = data.decode(errors="replace")
        texts.append(text)
        if cut:
            notes.append(
                Finding(
                    "net.log",
                    "warn",
                    f"read only the first {human_size(READ_LOG_STREAM_LIMIT)} of {path} (not a regular file)",
                    {"path": str(path), "bytes_read": READ_LOG_STREAM_LIMIT},
                    "Save the output to a file and pass that file",
                )
            )
        if summarise(text).empty and not classify(text):
            if not data.strip():
                why = "the file is empty"
            elif b"\0" in data:
                why = "the file is binary, not saved text output"
            else:
                why = "nor any torch.distributed failure"
            notes.append(
                Finding(
                    "net.log",
                    "warn",
                    f"no NCCL lines found in {path} ({why})",
                    {"path": str(path), "bytes": len(data)},
                    "Save the output of a run with NCCL_DEBUG=INFO and pass that file, e.g.\n"
                    "NCCL_DEBUG=INFO torchrun ... 2>&1 | tee run.log\n"
                    "torchdoctor net --read-log run.log",
                )
            )
    text = "\n".join(texts)
    source = ", ".join(str(p) for p in paths)
    summary = summarise(text)
    found = [] if summary.empty else nccl_findings(summary, source=source)
    for problem in classify(text):
        found.append(Finding(_LOG_IDS[problem.kind], "fail", problem.summary, problem.facts, problem.fix))
    return found + notes


def _read_log_bytes(path: Path) -> tuple[bytes, bool]:
    """The bytes of one --read-log file and whether a stream was cut at `READ_LOG_STREAM_LIMIT`.

    Opened non-blocking so that a FIFO nobody writes to reads as empty instead of waiting forever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise BadInput(f"--read-log {path}: {error.strerror or error}") from None
    _require_readable(fd, path)
    with os.fdopen(fd, "rb") as stream:  # buffered: read(n) goes on until n bytes or the end of a pipe
        try:
            os.set_blocking(fd, True)
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return stream.read(), False
            data = stream.read(READ_LOG_STREAM_LIMIT + 1)
        except OSError as error:
            raise BadInput(f"--read-log {path}: {error.strerror or error}") from None
    return data[:READ_LOG_STREAM_LIMIT], len(data) > READ_LOG_STREAM_LIMIT


def _require_readable(fd: int, path: Path) -> None:
    """Close ``fd`` and raise `BadInput` when ``path`` is a folder or a terminal (never a saved log)."""
    mode = os.fstat(fd).st_mode
    why = "is a folder" if stat.S_ISDIR(mode) else "is a terminal" if os.isatty(fd) else ""
    if why:
        os.close(fd)
        raise BadInput(f"--read-log {path}: {why}; give a saved log file")
