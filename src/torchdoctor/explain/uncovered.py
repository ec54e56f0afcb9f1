"""The error that started a failure when no known kind covers it: read from its type, its message and the frame
it was raised in where a table knows them (a keyword a release does not take, a message only older releases
print, a bug type raised inside an installed package — each likely), else named as it is, with its rank and the
user's line, and no fix guessed.
"""

from __future__ import annotations

from torchdoctor.explain import cut_traceback, first_failure, fixed_upstream
from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.kinds import (
    api_history,
    api_keywords,
    api_members,
    api_signatures,
    config_checks,
    config_keys,
    gather_shapes,
    grad_loops,
    launch_options,
    message_history,
    module_train,
    python_syntax,
    release_changes,
    tokenizer_classes,
    versions,
)
from torchdoctor.explain.recognisers import Context
from torchdoctor.findings import Finding
from torchdoctor.hang.source import Frame

# the unrecognised finding's fix: where the error was raised (the log's own words), then no advice but a report
STARTED = "This error started the failure; the other ranks' errors follow from it."
STOPPED = "The run stopped on this error, raised at"
IGNORED = "Python printed this error from a `__del__` or an atexit callback and went on; it was raised at"
NO_RECIPE = (
    "torchdoctor has no recipe for it, so it will not guess one. If it is not your code's own error, "
    "paste the log with the machine's facts into an issue:\n"
    "torchdoctor report > report.md   # the machine, torch, CUDA, NCCL and the checks, as Markdown"
)


def reading(raised: Raised, ctx: Context) -> Finding:
    """The exception that started the failure, which no known kind covers: named, not explained — or, when
    it was raised inside an installed package with a type a version's bug raises, that (likely)."""
    refused = config_checks.deepspeed_refusal(raised)
    if refused is not None:
        # DeepSpeed's config checks raised it (by its type or the frame): the config, not a DeepSpeed bug
        summary, fix = refused
        if config_checks.string_for_number(raised):  # a string where a number belongs: so in every release
            details = likely_from(raised, "deepspeed_config_mismatch")
            summary = f"likely: {summary}"
        else:
            details = likely_from(
                raised, "deepspeed_config_mismatch", alternatives=["log.dependency_version"]
            )
            summary = f"likely: {summary}; or a config written for another DeepSpeed release"
        return Finding("log.deepspeed_config_mismatch", "fail", summary, details, fix)
    flattened = gather_shapes.flattened_objects(raised) or gather_shapes.emptied_by_old_accelerate(raised)
    if flattened is not None:
        summary, fix = flattened
        details = likely_from(raised, "gather_not_tensors")
        if raised.frame is not None:
            details["frame"] = str(raised.frame)
            fix += f"\n{first_failure.REACHED} {first_failure.where(raised)}."
        return Finding("log.gather_not_tensors", "fail", f"likely: {summary}", details, fix)
    unset = launch_options.unset_option(raised)
    if unset is not None:
        summary, fix = unset
        details = likely_from(raised, "launch_command")
        return Finding("log.launch_command", "fail", f"likely: {summary}", details, fix)
    tokenizer = tokenizer_classes.reading(raised)
    if tokenizer is not None:
        # AutoTokenizer could not find the class the checkpoint names: the name says which release or code
        kind, summary, fix, certain, others = tokenizer
        details = likely_from(raised, kind, alternatives=[f"log.{other}" for other in others])
        details["confidence"] = "certain" if certain else "likely"
        return Finding(f"log.{kind}", "fail", summary if certain else f"likely: {summary}", details, fix)
    keyword = (
        api_keywords.diagnosis(raised, ctx.facts)
        or api_signatures.diagnosis(raised, ctx.facts)
        or api_members.diagnosis(raised, ctx.facts)
        # CPython 3.6's "cannot import name 'X'" on a `from <package> import X` line; MMEngine's error for a
        # class whose config lacks a key it reads: the code (or config) and the installed release disagree too
        or release_changes.ignite_import(raised)
        or api_history.bare_import(raised, f"{versions.LIBRARIES}|{versions.OPENMMLAB}")
        or config_keys.diagnosis(raised)
        # torch's nn.Module.train (3.10+ names it) given a library's training arguments
        or module_train.diagnosis(raised)
    )
    if keyword is not None:
        # before library_bug: a library calling another with a keyword (or positional arguments) the installed
        # release does not take is the pair of releases, which the tables name
        summary, fix, certain = keyword
        details = likely_from(raised, "dependency_version")
        details["confidence"] = "certain" if certain else "likely"
        if raised.frame is not None:
            details["frame"] = str(raised.frame)
            fix += f"\nThe call is at {first_failure.where(raised)}."
        return Finding(
            "log.dependency_version", "fail", summary if certain else f"likely: {summary}", details, fix
        )
    syntax = python_syntax.diagnosis(raised)
    if syntax is not None:
        # CPython's bare "invalid syntax" on a line with a newer release's syntax: the interpreter, not the code
        summary, fix = syntax
        details = likely_from(raised, "dependency_version")
        return Finding("log.dependency_version", "fail", f"likely: {summary}", details, fix)
    dropped = _dropped_message(raised, ctx)
    if dropped is not None:
        return dropped
    fixed = fixed_upstream.lead(raised, ctx.facts, likely_from(raised, "library_version_bug"))
    if fixed is not None:
        return fixed
    loop = grad_loops.grad_none(raised)
    if loop is not None:
        summary, fix = loop
        details = likely_from(raised, "library_version_bug")
        return Finding("log.library_version_bug", "fail", f"likely: {summary}", details, fix)
    bug = versions.library_bug(raised)
    if bug is not None:
        package, summary, fix = bug
        details = likely_from(raised, "library_version_bug", package=package, raised_in=str(raised.raised_in))
        if raised.frame is not None and raised.frame != raised.raised_in:
            details["frame"] = str(raised.frame)  # the user's call that led there
            fix += f"\n{first_failure.REACHED} {first_failure.where(raised)}."
        return Finding("log.library_version_bug", "fail", f"likely: {summary}", details, fix)
    unbound = versions.unbound_name(raised)
    if unbound is not None:
        summary, fix = unbound
        details = likely_from(raised, "library_version_bug")
        if raised.raised_in is not None:
            details["raised_in"] = str(raised.raised_in)
        if raised.type == "UnboundLocalError":  # a variable a loop over the data assigns: no item, no pass
            summary += (
                "; or data that gave a loop no item to assign it (an empty or differently laid out folder)"
            )
            details["alternatives"] = ["log.dataset_folder_layout"]
        return Finding("log.library_version_bug", "fail", f"likely: {summary}", details, fix)
    call = versions.library_call(raised)
    if call is not None:
        library, summary, fix = call
        details = likely_from(raised, "dependency_version", package=library)
        if raised.frame is not None:
            details["frame"] = str(raised.frame)
            fix += f"\nThe call is at {first_failure.where(raised)}."
        return Finding("log.dependency_version", "fail", f"likely: {summary}", details, fix)
    who = f"rank {raised.rank}" if raised.rank is not None else "the run"
    first = raised.rank is not None and len(ctx.ranks | {raised.rank}) > 1 and not raised.consequence
    worker = f" (in its {raised.worker})" if raised.worker else ""
    # raised `from` another: the code that caught the first error said what it meant where it failed (a load's
    # "Failed to load checkpoint X" from a KeyError), and the run stopped on that one: it leads, the first after it
    said = wrapper(raised)
    text = said.text()
    if said.detail and text.endswith(":"):  # "Error(s) in loading state_dict for Net:" and what follows
        text = first_failure.cut(f"{text} {said.detail[0]}")
    summary = f"{who} failed{' first' if first else ''}{worker}: {text} at {first_failure.where(said)}"
    if said is not raised:
        summary += f", raised from {first_failure.cut(raised.text(), 120)}"
    summary += "; torchdoctor knows no fix for this error"
    details = first_failure.details_of(said, "unrecognised")
    if said.detail:
        details["detail"] = said.detail
    if said is not raised:
        details["raised_from"] = raised.text()
        details["raised_from_at"] = first_failure.where(raised)
    if raised.worker:
        details["worker"] = raised.worker
    if raised.ignored:
        # printed under "Exception ignored in" (a `__del__`, an atexit callback) and nothing else failed in the
        # log: Python went on after it, so it is not what stopped the run (the DataLoader iterator's __del__
        # "can only test a child process" at the end of a run that finished)
        summary = (
            f"{who}{worker} printed an error Python ignored, in a `__del__` or atexit callback: {text} at "
            f"{first_failure.where(raised)}; the run went on after it, and torchdoctor knows no fix for it"
        )
        fix = (
            f"{IGNORED} {first_failure.where(raised)}: it did not stop the run. If the run failed, its own error "
            "is not in this log (the rank that stopped first, or the part of the log above)."
        )
        return Finding(
            "log.unrecognised", "warn", summary, first_failure.details_of(raised, "unrecognised"), fix
        )
    lines = [
        f"{STARTED} It was raised at {first_failure.where(said)}."
        if first
        else f"{STOPPED} {first_failure.where(said)}."
    ]
    lines += [f"    {d}" for d in said.detail[:3]]
    if said is not raised:
        lines.append(f"It was raised from {raised.text()}, at {first_failure.where(raised)}.")
    lines.append(NO_RECIPE)
    clear = raised.traceback or bool(ctx.facts.get("failure_summary_in_input"))
    status = "fail" if clear else "skip"
    summary, fix = fixed_upstream.beside_unrecognised(raised, ctx.facts, summary, details, "\n".join(lines))
    return Finding("log.unrecognised", status, summary, details, fix)


def wrapper(raised: Raised) -> Raised:
    """The last exception raised `from` ``raised``, one from the other (``raise CheckpointError("Failed to load
    X") from e``): the words of the code that caught it, and the error the run stopped on; ``raised`` itself when
    none was, or when the wrapper only says another process failed first (a victim's words, not what failed)."""
    said, seen = raised, 0
    while said.wrapped_by is not None and not said.wrapped_by.consequence and seen < 8:
        said, seen = said.wrapped_by, seen + 1
    return said


def quoted_in_prose(ctx: Context) -> Finding | None:
    """A keyword or positional refusal the release tables know, quoted inside a sentence ("Raises the error
    TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'") in a log where nothing
    else was recognised: likely, never certain (no traceback says who called it, and prose may quote an error
    it did not hit). None when there is no such quote or the tables do not know it."""
    if ctx.prose_exception is None:
        return None
    type_, message, source, line, sentence = ctx.prose_exception
    joined = _joined_to_cut_traceback(ctx)
    if joined is not None:
        return joined
    # the sentence stands for the traceback's call line: a bare __init__() is the one class it names, or the one
    # the call near it that passed the keyword names (collect._call_passing)
    call = ctx.facts.get("prose_call")
    raised = Raised(
        type_, message, source=source, line=line, raised_code=f"{sentence} {call}" if call else sentence
    )
    keyword = (
        api_keywords.diagnosis(raised, ctx.facts)
        or api_signatures.diagnosis(raised, ctx.facts)
        or api_members.diagnosis(raised, ctx.facts)
        # CPython 3.6's "cannot import name 'X'" in a sentence that names the package it was imported from
        or api_history.bare_import(raised, f"{versions.LIBRARIES}|{versions.OPENMMLAB}")
    )
    if keyword is None:
        return _dropped_message(raised, ctx, quoted_in_prose=True)
    summary, fix, _ = keyword
    details = likely_from(raised, "dependency_version", quoted_in_prose=True)
    return Finding("log.dependency_version", "fail", f"likely: {summary}", details, fix)


def _joined_to_cut_traceback(ctx: Context) -> Finding | None:
    """The quoted exception read as the error line of an IPython traceback cut before it (a Colab paste whose
    message the filer wrote above it): only where the quote's type is the one IPython's header names and the log
    has no error line of its own, raised at the traceback's innermost frame; None where that reads as nothing
    known (cut_traceback.py then says the traceback stops before its error line)."""
    type_, message, source, line, _ = ctx.prose_exception
    facts = ctx.facts
    if (
        ctx.last_error_line
        or facts.get("ipython_type") != type_
        or not cut_traceback.FRAME_KEYS <= facts.keys()
    ):
        return None
    at = Frame(facts["last_frame_file"], int(facts["last_frame_line"]), facts["last_frame_function"])
    raised = Raised(type_, message, source=source, line=line, raised_in=at, traceback=True)
    found = reading(raised, ctx)
    if found.id == "log.unrecognised":
        return None
    found.details["quoted_above_cut_traceback"] = True
    return found


def _dropped_message(raised: Raised, ctx: Context, **facts) -> Finding | None:
    """The package's release behind, likely, when ``raised`` carries a message only its older releases raise
    (kinds/message_history.py); None otherwise."""
    dropped = message_history.diagnosis(raised, ctx.facts)
    if dropped is None:
        return None
    package, summary, fix = dropped
    details = likely_from(
        raised, "library_version_bug", package=package, alternatives=["log.dependency_version"], **facts
    )
    if raised.raised_in is not None:
        details["raised_in"] = str(raised.raised_in)
    return Finding("log.library_version_bug", "fail", f"likely: {summary}", details, fix)


def likely_from(raised: Raised, kind: str, **facts) -> dict:
    """The details of a likely cause read from the exception ``raised`` alone (no recogniser's line): its
    kind, the exception, where it was raised and on which rank, and ``facts``."""
    details: dict = {
        "kind": kind,
        "role": "cause",
        "confidence": "likely",
        "exception": raised.text(),
        "where": [f"{raised.source}:{raised.line}" if raised.source else f"line {raised.line}"],
        **facts,
    }
    if raised.rank is not None:
        details["ranks"] = str(raised.rank)
    return details
