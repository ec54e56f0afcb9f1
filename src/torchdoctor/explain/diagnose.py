"""`explain`: what a failed run left behind (logs, folders of per-rank logs, flight-recorder dumps) -> findings.

>>> import io
>>> [f.id for f in explain(["-"], stdin=io.BytesIO(b"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"))]
['log.cuda_oom']
"""

from __future__ import annotations

from pathlib import Path

from torchdoctor.explain import console_attempts, cut_traceback
from torchdoctor.explain.collect import Collector
from torchdoctor.explain.flight_recorder.findings import explain_dumps
from torchdoctor.explain.flight_recorder.records import looks_like_dump
from torchdoctor.explain.inputs import logs, looks_binary, why_binary, why_not_a_log
from torchdoctor.explain.kinds import config_checks
from torchdoctor.explain.uncovered import quoted_in_prose
from torchdoctor.explain.verdict import per_attempt
from torchdoctor.findings import Finding
from torchdoctor.hang.files import REPORT_FILE, WATCHDOG_PREFIX, is_watchdog_folder, written_at


def explain(paths: list[str] | tuple[str, ...] = (), stdin=None) -> list[Finding]:
    """Findings for the logs at ``paths`` (files, ``.gz`` files, folders; ``-`` or nothing: ``stdin``).

    One finding per kind of failure, id ``log.<kind>``, the root cause first; flight-recorder dumps found
    among the files are read together. Nothing recognised is one ``log.unrecognised`` finding (status
    ``skip``). Raises `BadInput` naming a path that is missing or unreadable.
    """
    collector = Collector()
    collectors: dict[int | None, Collector] = {}  # one per torchrun restart (attempt_N folder)
    dumps: list[Path] = []
    notes: list[Finding] = []
    skipped: dict[str, str] = {}  # a binary file in a folder, not read: why
    no_text: dict[str, str] = {}  # an input given by name or on stdin that holds no log: why
    watched = [Path(p).resolve() for p in paths if p != "-" and is_watchdog_folder(Path(p))]
    newest, earlier = _kept_with_the_logs(paths)
    # the report written beside the logs says what its folder says
    reported = {folder.parent for folder in newest}
    # a folder also given by its own name is read once, as given
    kept, earlier = [f for f in newest if f not in watched], [f for f in earlier if f not in watched]
    hangs, is_ours, failed = [], None, []
    if (
        watched or kept
    ):  # the hang folder's reader only where there is one (its imports cost each start ~10 ms)
        from torchdoctor.hang.folder import folder_finding, is_ours

        hangs = [folder_finding(folder) for folder in watched]
        for folder in kept:
            finding = folder_finding(folder)
            # a failed job's tracebacks lead where the logs beside it hold them (--tee 3); its verdict otherwise
            (failed if finding.details.get("kind") == "failed" else hangs).append(finding)
        watched += kept + earlier
    for log in logs(list(paths), stdin):
        parent = log.path.resolve().parent if log.path is not None and (watched or reported) else None
        if is_ours and parent in watched and is_ours(log.path):
            continue  # read with its folder: the hang verdict above
        if parent in reported and log.path.name == REPORT_FILE:
            continue
        if parent in earlier:
            continue  # an older run's folder (named in a note below): none of its files is this run's log
        if log.path is not None and looks_like_dump(log.head):
            dumps.append(log.path)
            continue
        if log.in_folder and looks_binary(log.head):  # a checkpoint beside the logs: not worth reading
            skipped[log.source] = why_binary(log.head)
            continue
        if not log.in_folder and (why := why_not_a_log(log.head)):
            no_text[log.source] = why
        collector = collectors.setdefault(log.attempt, Collector())
        collector.read(log.stream, log.source, log.rank, log.head, log.size)
        if log.stream.truncated and not log.head:
            # a compressed file cut before its first block ends: nothing to read, not an empty log
            no_text[log.source] = (
                f"is cut off before its first line ({log.stream.truncated}): nothing in it can be read"
            )
        elif log.stream.truncated:
            notes.append(
                Finding(
                    "log.truncated_file",
                    "warn",
                    f"{log.source} is cut off ({log.stream.truncated}); read what came before the cut",
                    {"file": log.source},
                )
            )
    if list(collectors) == [None]:
        # one console of a job torchrun restarted: each attempt on its own, as its --log-dir folder reads
        collectors = console_attempts.split(collectors[None]) or collectors
    found = per_attempt(collectors)
    if dumps:
        found = _merge(found, explain_dumps(dumps))
    if failed and not any(f.status == "fail" for f in found):
        found = (
            failed + found
        )  # the ranks' output went to the console (no --tee): the folder's verdict says it
    found = hangs + found
    if earlier:
        notes.append(_earlier_folders_note(earlier))
    if not any(
        f.status in ("fail", "warn") or f.id in ("log.unrecognised", "log.interrupted") for f in found
    ):
        found.append(quoted_in_prose(collector.ctx) or _nothing(collector, no_text, skipped))
        if skipped:
            found[-1].details["binary_files_skipped"] = list(skipped)[:20]
    return found + notes


def _kept_with_the_logs(paths) -> tuple[list[Path], list[Path]]:
    """The watchdog folders `launch --watchdog --log-dir LOG_DIR` kept in the given folders, one level down: the
    newest in each (the last run's, whose report the launcher wrote beside it), and those written before it (earlier
    runs in the same log dir, or other nodes' folders on a shared filesystem), which are not read."""
    newest, earlier = [], []
    for path in paths:
        folder = Path(path) if path != "-" else None
        if folder is None or not folder.is_dir() or is_watchdog_folder(folder):
            continue
        try:
            children = [
                child.resolve() for child in folder.glob(f"{WATCHDOG_PREFIX}*") if is_watchdog_folder(child)
            ]
        except OSError:  # unreadable: the log reader says so
            continue
        children.sort(
            key=lambda child: (max(written_at(child / "verdict.json"), written_at(child)), child.name)
        )
        newest += children[-1:]
        earlier += children[:-1]
    return newest, earlier


def _earlier_folders_note(earlier: list[Path]) -> Finding:
    """What was left unread: the watchdog folders in a log dir older than the one read."""
    named = ", ".join(str(folder) for folder in earlier[:3]) + (
        f" and {len(earlier) - 3} more" if len(earlier) > 3 else ""
    )
    return Finding(
        "log.earlier_watchdog_folders",
        "skip",
        f"not read: {len(earlier)} older watchdog folder(s) beside the newest one ({named}), from earlier runs "
        "with this --log-dir or from other nodes on a shared filesystem",
        {"folders": [str(folder) for folder in earlier[:20]]},
        "`torchdoctor explain FOLDER` reads one of them on its own.",
    )


def _merge(from_logs: list[Finding], from_dumps: list[Finding]) -> list[Finding]:
    """Causes read in the logs, then what the dumps say about the hang, then the consequences."""
    causes = [f for f in from_logs if f.details.get("role") == "cause"]
    rest = [f for f in from_logs if f.details.get("role") != "cause"]
    return causes + from_dumps + rest


def _nothing(collector: Collector, no_text: dict[str, str], skipped: dict[str, str]) -> Finding:
    """The finding where nothing was recognised: why each input holds no log where none does (empty, not text,
    or a folder's binary files, named rather than "the input"), else that nothing known was found."""
    ctx = collector.ctx
    if (ctx.sources or skipped) and all(source in no_text for source in ctx.sources):
        said = {source: no_text[source] for source in ctx.sources} | {
            source: f"was not read: it {why}" for source, why in skipped.items()
        }
        named = "; ".join(f"{source} {why}" for source, why in list(said.items())[:3])
        return Finding(
            "log.unrecognised",
            "skip",
            named,
            {"files": len(ctx.sources), "no_text": dict(list(said.items())[:20])},
            "Give explain the run's log: the console's output saved to a file (python train.py 2>&1 | tee "
            "train.log), torchrun's --log-dir folder, or the file the scheduler wrote (SLURM's --output). A run "
            "killed before Python flushed its output can leave its log empty: python -u or PYTHONUNBUFFERED=1 "
            "writes each line at once.",
        )
    sources = ", ".join(ctx.sources[:3]) + (
        f" and {len(ctx.sources) - 3} more" if len(ctx.sources) > 3 else ""
    )
    cut = cut_traceback.reading(
        ctx.facts, ctx.last_error_line, sources or "the input", config_checks.cut_in_config(ctx.facts)
    )
    if cut is not None:
        cut.details.update(files=len(ctx.sources), lines_looked_at=ctx.candidates)
        return cut
    summary = f"no known failure recognised in {sources or 'the input'}"
    details = {"files": len(ctx.sources), "lines_looked_at": ctx.candidates}
    if ctx.last_error_line:
        summary += f"; its last error line: {ctx.last_error_line}"
        details["last_error_line"] = ctx.last_error_line
    fix = (
        "torchdoctor knows no failure in this log, so it will not guess one. If the run failed, paste the "
        "log with the machine's facts into an issue:\n"
        "torchdoctor report > report.md   # the machine, torch, CUDA, NCCL and the checks, as Markdown"
    )
    return Finding("log.unrecognised", "skip", summary, details, fix)
