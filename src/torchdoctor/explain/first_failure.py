"""The error that started a failure: the first exception on the first rank that failed, and the user's line.

When one rank raises, the others fail after it with errors about *it* ("Connection closed by peer", an NCCL
communicator aborted, torchrun's SIGTERM). Those are consequences; the rank whose own exception is not one of
them, the first by torchrun's "Root Cause (first observed failure)", then by the times the logs state, then by
the order of the input, is the one that started it — whether or not torchdoctor knows that kind of error.

    >>> raised = exception_at("RuntimeError: boom", ['  File "train.py", line 3, in main', "    boom()"], [])
    >>> raised.type, raised.message, str(raised.frame)
    ('RuntimeError', 'boom', 'train.py:3 in main')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from torchdoctor.explain import traceback_styles
from torchdoctor.explain.reader import EXCEPTION_LINE
from torchdoctor.hang.source import Frame, is_library

# Messages of an error that another rank's failure caused (gloo's pair.cc, NCCL's remote-exit error, the
# ranks torchrun stops once one failed, a collective that timed out waiting for a rank that left).
_CONSEQUENCE = re.compile(
    r"Connection (?:closed|reset) by peer|remote process exited|Broken pipe|NCCL communicator was aborted|"
    r"collective operation timeout|Timed out waiting|Process \d+ terminated with signal|"
    r"Received \d+ death signal|Signal \d+ \(SIG\w+\) received|ProcessExitedException|"
    r"was aborted by the user|Some NCCL operations have failed or timed out|Connection was likely closed\. Did the remote|"
    r"retrieving ncclUniqueId from \[0\]|imed out initializing process group in store based barrier|"
    # gloo's monitored barrier naming the rank that never came, or that failed (ProcessGroupGloo.cpp)
    r"failed to pass monitoredBarrier in|timed out in monitoredBarrier after|waiting for send/recv from rank \d+|"
    # gloo's transport/tcp: its other pairs closed once an operation of this process timed out, a pair's read or
    # write that waited past the timeout, a socket the peer closed
    r"Application timeout caused pair closure|\] (?:Read|Write) timeout \[|Socket (?:unexpectedly )?closed \[|"
    r"\] Read error \[|"
    # ProcessGroupNCCL's WorkNCCL::synchronize under (TORCH_)NCCL_BLOCKING_WAIT=1: the wait for a rank that never came
    r"timed out in blocking wait"
)
# a launcher's report of a worker (or a build step) that failed: its own output above says why (kinds/exits.py)
_CONSEQUENCE_TYPES = frozenset(
    {
        "ChildFailedError",
        "SignalException",
        "KeyboardInterrupt",
        "SystemExit",
        "ProcessExitedException",
        "CalledProcessError",
    }
)
# a frame; a paste often starts inside one, its path cut before the quote that opened it
_FRAME = re.compile(
    r'^\s*(?:File "|(?=[^\s"]{1,500}\.py", line ))(?P<file>[^"]{1,500})", line (?P<line>\d+), in (?P<function>\S{1,200})'
)
# where a SyntaxError (IndentationError, TabError) was found: CPython's print_exception writes the file and line
# with no function (Lib/traceback.py TracebackException.format_exception_only, Python/pythonrun.c
# print_error_text), then the source line and a caret
_SYNTAX_AT = re.compile(r'^\s*File "(?P<file>[^"]{1,500})", line (?P<line>\d+)\s*$')
_SYNTAX_TYPES = frozenset({"SyntaxError", "IndentationError", "TabError"})
_WORKER = re.compile(r"^Caught (?P<type>\w+) in DataLoader worker process (?P<worker>\d+)")
# torch.multiprocessing.spawn's ProcessRaisedException (spawn.py's join): a spawned process's own exception, its
# traceback printed below this line under "-- Process 1 terminated with the following error:"
_SPAWNED = re.compile(r"^-- Process (?P<process>\d+) terminated with the following error:")
# torch.distributed.checkpoint's CheckpointException (checkpoint/api.py): the ranks' own exceptions, each printed
# below it with its traceback ("Traceback (most recent call last): (RANK 0)")
_DCP_RANKS = re.compile(r"^CheckpointException ranks:")
_TRACEBACK = re.compile(r"^\s*(?:Original )?Traceback \(most recent call last\):")
# Python between an exception and the one raised `from` it (PEP 3134; not "During handling of the above
# exception", an error while handling the first)
_RAISED_FROM = "The above exception was the direct cause of the following exception:"
# Python between an exception and one raised by the code that ran because of it (an `except` or `finally` block)
_WHILE_HANDLING = "During handling of the above exception, another exception occurred:"
# Python's header over an exception it printed and went on after (sys.unraisablehook: a `__del__`, a weakref
# callback; "Exception ignored in atexit callback" from 3.11): the process did not stop on it
_IGNORED = re.compile(r"^Exception ignored (?:in|on calling)\b")
MAX_TEXT = 240  # characters of a message quoted in a summary
# a fix's last line where it quotes the user's own code (the log's words, not advice)
REACHED = "Your code reached it at"
# When a line was written: ISO dates (Python's logging, torchrun's summary "2026-11-24_20:21:45"), glog's
# "E1124 20:21:45.417000"; compared only between errors that both carry the same form
_ISO = re.compile(r"(?P<date>\d{4}-\d\d-\d\d)[ T_](?P<time>\d\d:\d\d:\d\d)(?:[.,](?P<frac>\d{1,9}))?")
_GLOG = re.compile(r"\b[IWEF](?P<date>\d{4}) (?P<time>\d\d:\d\d:\d\d)\.(?P<frac>\d{1,9})")


@dataclass
class Raised:
    """One exception a log shows: its type and message, where it was raised, and whether it is a victim's."""

    type: str
    message: str
    detail: list[str] = field(default_factory=list)  # the lines a message ending in ":" continues on
    frame: Frame | None = None  # the innermost frame of the user's code in its traceback
    code: str = ""  # the source line of that frame, as the traceback printed it
    raised_in: Frame | None = None  # the innermost frame of all: where the exception was raised
    raised_code: str = ""  # its source line
    outermost: Frame | None = (
        None  # the outermost frame of its traceback: the script that was run, or a launcher
    )
    # the installed packages of the traceback's frames below the user's innermost one, outer first
    packages: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)  # every frame of its traceback, outermost first
    raised_from_above: bool = False  # raised `from` the exception printed above it
    while_handling: bool = False  # printed under "During handling of the above exception, ..."
    handling: Raised | None = None  # the exception printed above it that it was raised while handling
    ignored: bool = False  # printed under "Exception ignored in: ..." (a __del__, an atexit callback)
    wrapped_by: Raised | None = None  # the exception raised `from` this one, printed below it
    traceback: bool = False  # a "Traceback (most recent call last):" or frames above it
    above: int = 0  # lines above the exception line that are its traceback (its header and frames)
    source: str = ""
    line: int = 0
    rank: int | None = None
    order: int = 0
    worker: str = ""  # "DataLoader worker process 0" when a worker raised it
    stamp: tuple[str, str] | None = None  # (form, sortable time) of the nearest time stated above it

    @property
    def consequence(self) -> bool:
        """True when the message says another process failed first."""
        return self.type in _CONSEQUENCE_TYPES or bool(_CONSEQUENCE.search(self.message))

    def text(self) -> str:
        """``RuntimeError: boom`` (cut at a word, never mid-word)."""
        return cut(f"{self.type}: {self.message}" if self.message else self.type)


def details_of(raised: Raised, kind: str) -> dict:
    """A finding's details for ``raised`` read as the cause of ``kind``: the exception, the line it was read at,
    its rank, and the user's frame with its source line (``--json``)."""
    details: dict = {
        "kind": kind,
        "role": "cause",
        "exception": raised.text(),
        "where": [f"{raised.source}:{raised.line}" if raised.source else f"line {raised.line}"],
    }
    if raised.rank is not None:
        details["ranks"] = str(raised.rank)
    if raised.frame is not None:
        details["frame"] = str(raised.frame)
        if raised.code:
            details["code"] = raised.code
    return details


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` up to ``limit`` characters, cut after a whole word and marked with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:") + " …"


# pydantic's ValidationError (v1 and v2): "1 validation error for DeepSpeedZeroConfig", a field's dotted name on the
# next line (v2: "stage3_prefetch_bucket_size", v1 the same), its reason indented below it
_VALIDATION_HEADER = re.compile(r"^\d+ validation errors? for \w+$")
_VALIDATION_FIELD = re.compile(r"[\w.\[\]-]{1,120}$")


# the error a wrapper's header line stands for, retyped as its repr on the next line: torch.distributed.rpc's
# "RuntimeError: On WorkerInfo(id=1, name=worker1):" over "ValueError('...')" (rpc/internal.py's
# _handle_exception), the remote worker's error and the one to read
_REMOTE_REPR = re.compile(r"[A-Z]\w{0,60}(?:Error|Exception|Interrupt)\(['\"]")


def exception_at(line: str, before: list[str], following: list[str], said_at: str = "") -> Raised | None:
    """The exception a line states, with the user's frame from the traceback lines ``before`` it and the
    detail lines ``following`` a message that ends in ``:``; None when the line is not an exception. ``said_at``:
    what the log printed before the line (a time, a logger's level), read for when it was raised."""
    found = EXCEPTION_LINE.match(line)
    if found is None:
        return None
    message = (found.group("message") or "").strip()
    raised = Raised(found.group("type"), message)
    if raised.type == "ProcessRaisedException" and not message:
        raised.detail = [text.strip() for text in following[:3] if _SPAWNED.match(text.strip())][:1]
    elif message.endswith(":") or not message:
        for extra in following[:6]:
            if not extra.strip() or not (
                extra[:1].isspace()
                or extra.lstrip().startswith(("Missing", "Unexp"))
                or _REMOTE_REPR.match(extra)
            ):
                break
            raised.detail.append(cut(extra.strip(), 400))
    elif _VALIDATION_HEADER.search(message):
        # pydantic lists each refused field below its header: the field's name, then its reason indented
        for extra in following[:6]:
            if not (extra[:1].isspace() and extra.strip()) and not _VALIDATION_FIELD.match(extra):
                break
            if not extra.lstrip().startswith("For further information"):
                raised.detail.append(cut(extra.strip(), 400))
    raised.stamp = _stamp([*before, said_at + line])
    before = traceback_styles.as_python(before)
    frames: list[tuple[Frame, str]] = []
    start = None  # where the last traceback above the line begins (its header, or its first frame)
    for at, text in enumerate(before):
        if _TRACEBACK.match(text):
            frames, raised.traceback, start = [], True, at  # only the last traceback above the line
            continue
        if frames and not text[:1].isspace() and EXCEPTION_LINE.match(text):
            # another exception's own line: the frames above it were its traceback, not this one's
            frames, raised.traceback, start = [], False, None
            continue
        framed = _FRAME.match(text) or (_SYNTAX_AT.match(text) if raised.type in _SYNTAX_TYPES else None)
        if framed:
            start = at if start is None else start
            code = before[at + 1].strip() if at + 1 < len(before) else ""
            code = "" if _FRAME.match(code) or set(code) <= set("^~ ") else code
            if not code and framed["file"] == "<stdin>" and start is not None:
                # the interactive interpreter prints no source line: the statement is the one typed at >>> above
                code = _typed(before[:start])
            # a SyntaxError's own line names no function: the file was being compiled, not run
            function = framed.groupdict().get("function") or "<compiled>"
            frames.append((Frame(framed["file"], int(framed["line"]), function), code))
    if frames or start is None:
        # pytest's last entry: where the exception was raised is printed below it ("path.py:223: TypeError")
        last = traceback_styles.pytest_raised_at(before, following, raised.type)
        if last is not None:
            raised.traceback = True
            frames.append((Frame(last[0], last[1], last[2]), last[3]))
    crash = traceback_styles.PYTEST_CRASH.match(said_at.lstrip() + line) if said_at and not frames else None
    if crash is not None and crash["type"].rsplit(".", 1)[-1] == raised.type:
        # pytest's --tb=line put where it was raised before the exception: the only frame it prints
        frames.append((Frame(crash["file"], int(crash["line"]), "?"), ""))
    if start is not None:
        raised.above = len(before) - start
    above = [text for text in before[: len(before) if start is None else start] if text.strip()]
    raised.raised_from_above = bool(above) and above[-1].strip() == _RAISED_FROM
    raised.while_handling = bool(above) and above[-1].strip() == _WHILE_HANDLING
    raised.ignored = bool(above) and _IGNORED.match(above[-1].strip()) is not None
    if frames:
        raised.traceback = True
        users = [f for f in frames if not is_library(f[0].file)]
        raised.frame, raised.code = (users or frames)[-1]
        raised.raised_in, raised.raised_code = frames[-1]
        raised.outermost = frames[0][0]
        raised.frames = [f for f, _ in frames]
        mine = [at for at, (f, _) in enumerate(frames) if not is_library(f.file)]
        below = frames[mine[-1] + 1 :] if mine else frames
        raised.packages = list(dict.fromkeys(p for p in (installed_package(f.file) for f, _ in below) if p))
    return raised


def placed_by_pytest(raised: Raised, earlier: list[Raised]) -> bool:
    """Whether ``raised``, read on pytest 9's ``--tb=line`` place ("path.py:2: KeyError: ..."), repeats the
    exception of the same test printed just above it on its "E" line (pytest 9 prints both, older releases the place
    alone): that one then takes the place as its frame, and ``raised`` is not a failure of its own."""
    if not raised.frames or raised.frames[0].function != "?" or len(raised.frames) > 1 or not earlier:
        return False
    above = earlier[-1]
    same = (above.source, above.rank, above.type, above.message) == (
        raised.source,
        raised.rank,
        raised.type,
        raised.message,
    )
    if not same or above.frames or not 0 < raised.line - above.line <= 40:
        return False
    above.frame = above.raised_in = above.outermost = raised.frame
    above.frames, above.packages, above.traceback = raised.frames, raised.packages, True
    return True


def _typed(lines: list[str]) -> str:
    """The last statement typed at the interactive interpreter's ``>>>`` prompt among ``lines`` (its own
    traceback's frames say only ``File "<stdin>"``); '' when none is there.

    >>> _typed([">>> from ignite.handlers import Checkpoint", ""])
    'from ignite.handlers import Checkpoint'
    """
    typed = next((text for text in reversed(lines[-6:]) if text.startswith(">>> ")), "")
    return typed[4:].strip()


def cut_after_assert(lines: list[str]) -> Raised | None:
    """The AssertionError of a traceback that ``lines`` (the last lines of a log, in order) end inside: a
    frame and its ``assert`` line, the exception line that Python prints next cut off (a user pasted the
    traceback's end without it). None unless the last two lines that are not blank are exactly that.

    >>> raised = cut_after_assert(['File "/x/site-packages/deepspeed/zero.py", line 5, in f', "    assert a == b"])
    >>> raised.type, raised.raised_code, raised.message
    ('AssertionError', 'assert a == b', '(its line is cut from the log)')
    """
    shown = [line for line in lines if line.strip()]
    if len(shown) < 2 or not shown[-1].strip().startswith("assert ") or not _FRAME.match(shown[-2]):
        return None
    raised = exception_at("AssertionError: (its line is cut from the log)", shown, [])
    return raised if raised is not None and raised.raised_code == shown[-1].strip() else None


def _stamp(lines: list[str]) -> tuple[str, str] | None:
    """The time the last line that states one was written, as (form, text that sorts in time order)."""
    for text in reversed(lines):
        for form, pattern in (("iso", _ISO), ("glog", _GLOG)):
            found = pattern.search(text)
            if found:
                return form, f"{found['date']} {found['time']}.{(found['frac'] or '').ljust(9, '0')}"
    return None


def initiating(raised: list[Raised], root_rank: int | None = None) -> Raised | None:
    """The exception that started the failure: a cause's (not a victim's), on the rank torchrun observed
    failing first when it says so, else the earliest by the times the logs state (when every one states
    one, in the same form), else the first in the input; a DataLoader worker's original exception in
    place of the "Caught ... in DataLoader worker" that reports it. None when every exception is a victim's."""
    causes = [r for r in _unwrapped(raised) if not r.consequence and not after_a_victim(r)]
    causes = [r for r in causes if not after_the_failure(r)] or causes
    if not causes:
        return None
    if root_rank is not None:
        on_root = [r for r in causes if r.rank == root_rank]
        if on_root:
            return min(on_root, key=lambda r: r.order)
    forms = {r.stamp[0] if r.stamp else None for r in causes}
    if len(forms) == 1 and None not in forms:  # every one says when, in the same form: the earliest
        return min(causes, key=lambda r: (r.stamp, r.order))
    return min(causes, key=lambda r: r.order)


def after_the_failure(raised: Raised) -> bool:
    """Whether ``raised`` came from code that ran because another error had already happened: an exception
    Python printed and ignored (a ``__del__``, an atexit callback), or one raised while handling the exception
    printed above it by the user's own handling code, an ``except``/``finally`` block elsewhere than the line
    that failed (its user's frame is none of that exception's frames), or while handling another rank's failure.
    A library that catches its own error and raises a clearer one is not that: the first exception's traceback
    then holds no frame of the user's, or the second's user's line is one of its frames (found with
    pytorch/examples' mnist under DDP: a `finally` that saved into a missing folder, and a `__del__` that did,
    printed below the ValueError that stopped the run). Not the user's own ``raise X(...)`` in an ``except``:
    that says the first error in the user's words.

    >>> first = exception_at("ValueError: bad batch", ['  File "train.py", line 9, in main', "    step()"], [])
    >>> later = exception_at("RuntimeError: no folder", ['  File "train.py", line 14, in main', "    save()"], [])
    >>> later.handling = first
    >>> after_the_failure(later), after_the_failure(first)
    (True, False)
    """
    if raised.ignored:
        return True
    first = raised.handling
    if first is None:
        return False
    if first.consequence or after_the_failure(first):
        return True
    if (
        raised.frame is None
        or is_library(raised.frame.file)
        or first.frame is None
        or is_library(first.frame.file)
    ):
        return False
    if raised.raised_in == raised.frame and raised.code.startswith("raise "):
        # the user's own `raise X(...)` in an `except`: their clearer word for the first error (KeyError
        # 'WORLD_SIZE' re-raised as "... expected, but not set: start this script with torchrun"), not a fault
        # of its own
        return False
    return all((f.file, f.line) != (raised.frame.file, raised.frame.line) for f in first.frames)


def after_a_victim(raised: Raised) -> bool:
    """Whether ``raised`` was raised while handling a victim's error (a lost peer, a stop by the launcher), itself
    or one handled before it: the cause is that other process's, as for the victim's own error (one rank's log
    of a job whose `finally` saved into a missing folder after "Connection closed by peer")."""
    handled, seen = raised.handling, 0
    while handled is not None and seen < 8:
        if _CONSEQUENCE.search(handled.message) or handled.type == "ProcessExitedException":
            # another process's end (not the user's Ctrl-C, the script's own sys.exit, a launcher's signal: no
            # peer was lost there, and the cause may well be in this log)
            return True
        handled, seen = handled.handling, seen + 1
    return False


def _printed_below(raised: list[Raised], at: int, also=lambda later: True) -> Raised | None:
    """The first exception printed within 200 lines below ``raised[at]`` in the same input and rank (that ``also``
    accepts): the one a report of it (mp.spawn's, a DataLoader's) quotes."""
    item = raised[at]
    return next(
        (
            later
            for later in raised[at + 1 :]
            if later.source == item.source
            and later.rank == item.rank
            and 0 < later.line - item.line <= 200
            and also(later)
        ),
        None,
    )


def _unwrapped(raised: list[Raised]) -> list[Raised]:
    """Each "Caught X in DataLoader worker process N" replaced by the worker's original X that follows it,
    mp.spawn's ProcessRaisedException by the spawned process's own exception printed below it, and DCP's "CheckpointException ranks:..." by the first rank's own exception printed below it."""
    kept: list[Raised] = []
    skip: set[int] = set()
    for at, item in enumerate(raised):
        if id(item) in skip:
            continue
        if _DCP_RANKS.match(item.message):
            inner = next(
                (
                    later
                    for later in raised[at + 1 :]
                    if later.source == item.source
                    and later.rank == item.rank
                    and 0 < later.line - item.line <= 400
                    and not _DCP_RANKS.match(later.message)
                ),
                None,
            )
            if inner is not None:
                skip.add(id(inner))
                inner.order = item.order
                kept.append(inner)
                continue
        spawned = (
            _SPAWNED.match(item.detail[0]) if item.type == "ProcessRaisedException" and item.detail else None
        )
        if spawned:
            own = _printed_below(raised, at)
            if (
                own is not None
            ):  # the spawned process's own exception, printed below the parent's report of it
                skip.add(id(own))
                own.worker = own.worker or f"mp.spawn process {spawned['process']}"
                own.order = item.order
                kept.append(own)
                continue
        worker = _WORKER.match(item.message)
        if worker:
            kind = worker["type"]
            original = _printed_below(
                raised, at, lambda later, kind=kind: later.type == kind and not _WORKER.match(later.message)
            )
            if original is not None:
                skip.add(id(original))
                original.worker = f"DataLoader worker process {worker['worker']}"
                original.order = item.order
                if _no_own_frame(original) and not _no_own_frame(item):
                    # the worker's traceback is torch's alone (its collate given what the dataset returned): the
                    # user's line is the loop that read the DataLoader, in the report's own traceback
                    original.frame, original.code = item.frame, item.code
                handled, seen = original.handling, 0
                while handled is not None and handled.line > item.line and seen < 8:
                    # the worker's exceptions its own `except`/`finally` handled, printed in the same report
                    handled.worker, handled, seen = original.worker, handled.handling, seen + 1
                kept.append(original)
                continue
        kept.append(item)
    return kept


def _no_own_frame(raised: Raised) -> bool:
    """Whether ``raised``'s traceback shows no frame of the user's own code (its frame is a library's, or none)."""
    return raised.frame is None or is_library(raised.frame.file)


# a package folder only: a module alone in site-packages (flash_attn_2_cuda.cpython-310-...so) is often named
# otherwise than what pip installs (flash-attn)
_SITE_PACKAGE = re.compile(r"[/\\](?:site|dist)-packages[/\\](?P<package>[A-Za-z_]\w*)[/\\]")


def installed_package(file: str) -> str | None:
    """The installed package a file is in (``.../site-packages/deepspeed/ops/x.py`` -> ``deepspeed``), None
    outside a package folder of site-packages / dist-packages."""
    found = _SITE_PACKAGE.search(file)
    return found["package"] if found else None


def installed_module(file: str) -> str | None:
    """The module of an installed package a file is (``.../site-packages/torch/utils/data/_utils/collate.py`` ->
    ``torch.utils.data._utils.collate``), None outside a package folder of site-packages / dist-packages."""
    found = _SITE_PACKAGE.search(file)
    if found is None:
        return None
    path = file[found.start("package") :].replace("\\", "/")
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def where(raised: Raised) -> str:
    """``train.py:12 in main (`raise RuntimeError(...)`)`` or, without a frame, the log's file and line."""
    if raised.frame is None:
        return f"{raised.source}:{raised.line}" if raised.source else f"line {raised.line}"
    text = str(raised.frame)
    return text + (f": {cut(raised.code, 120)}" if raised.code else "")
