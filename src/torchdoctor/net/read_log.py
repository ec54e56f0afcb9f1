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
        texts, notes = {}, []
        for log in logs(names):
            data = log.stream.read(NCCL_SUMMARY_LIMIT)
            texts[log.source] = data.decode("utf-8", "replace")
            if not summarise(texts[log.source]).lines:
                notes.append(_no_nccl_lines(log.source, data))
    except BadInput as error:
        raise BadInput(str(error).replace("explain ", "--read-log ", 1)) from None
    failures = [f for f in found if f.id != "log.unrecognised"]
    summary = summarise("\n".join(texts.values()))
    nccl = [] if summary.empty else nccl_findings(summary, source=", ".join(names))
    if failures or nccl:
        return failures + _said_once(nccl, failures, texts)
    return notes


def _said_once(nccl: list[Finding], failures: list[Finding], texts: dict[str, str]) -> list[Finding]:
    """The WARN lines a failure above was read from keep their place in the list, but point at that failure
    instead of repeating its fix in other words."""
    read_from = {}  # line of the log -> the failure read from it
    for failure in failures:
        for where in failure.details.get("where", []):
            source, _, number = str(where).rpartition(":")
            if source in texts and number.isdigit():
                read_from.setdefault((source, int(number)), failure.id)
    lines = {}
    for (source, number), failure_id in read_from.items():
        before = texts[source].split("\n", number)  # the line and what comes before it, not the whole log
        if 1 <= number <= len(before):
            lines[before[number - 1]] = failure_id
    for finding in nccl:
        if finding.id != "net.nccl_warn":
            continue
        explained = next((f for line, f in lines.items() if finding.details["message"] in line), None)
        if explained is not None:
            finding.fix = f"This is the line the failure above ({explained}) was read from: its fix is there."
    return nccl


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
