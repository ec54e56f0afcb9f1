"""``torchdoctor net --read-log``: the same diagnosis as ``torchdoctor explain``, plus the NCCL summary `net` shows.

Every failure is named by `torchdoctor.explain` (``log.<kind>``, the root cause first); what NCCL says about the
network it built (version, interfaces, transport per rank pair, every ``NCCL WARN`` line with its hint) is
added from `net.nccl_log`. A file with neither NCCL lines nor a failure is a warning naming it.
"""

from __future__ import annotations

import os
from pathlib import Path

from torchdoctor.errors import BadInput, given_path
from torchdoctor.findings import Finding

# What the NCCL summary reads of one file: NCCL's INFO lines come early and the summary does not need more.
NCCL_SUMMARY_LIMIT = 256 * 2**20


def read_log_findings(*paths: str | Path) -> list[Finding]:
    """Findings for saved output at ``paths`` (files or folders), as `explain` gives them, with the NCCL summary.

    Raises `BadInput` naming a path that is missing or cannot be read.
    """
    from torchdoctor.explain.diagnose import explain
    from torchdoctor.explain.inputs import logs
    from torchdoctor.net.nccl_log import findings as nccl_findings
    from torchdoctor.net.nccl_log import summarise

    for path in paths:  # `--read-log "$LOG"` with LOG unset
        given_path("--read-log", path, "a saved log file or folder")
    names = [os.fspath(p) for p in paths]
    try:
        found = explain(names)
        texts, notes = [], []
        for log in logs(names):
            data = log.stream.read(NCCL_SUMMARY_LIMIT)
            texts.append(data.decode("utf-8", "replace"))
            if not summarise(texts[-1]).lines:
                notes.append(_no_nccl_lines(log.source, data))
    except BadInput as error:
        raise BadInput(str(error).replace("explain ", "--read-log ", 1)) from None
    failures = [f for f in found if f.id != "log.unrecognised"]
    summary = summarise("\n".join(texts))
    nccl = [] if summary.empty else nccl_findings(summary, source=", ".join(names))
    if failures or nccl:
        return failures + nccl
    return notes


def _no_nccl_lines(source: str, data: bytes) -> Finding:
    if not data.strip():
        why = "the file is empty"
    elif b"\0" in data:
        why = "the file is binary, not saved text output"
    else:
        why = "nor any failure torchdoctor knows"
    return Finding(
        "net.log",
        "warn",
        f"no NCCL lines found in {source} ({why})",
        {"path": source, "bytes": len(data)},
        "Save the output of a run with NCCL_DEBUG=INFO and pass that file, e.g.\n"
        "NCCL_DEBUG=INFO torchrun ... 2>&1 | tee run.log\n"
        "torchdoctor explain run.log   # the same as torchdoctor net --read-log run.log",
    )
