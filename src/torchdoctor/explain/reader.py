"""Finding the few lines of a log that can be about a failure, in time linear in its size and bounded memory.

A log is read in chunks. Far from both of its ends, a line is a *candidate* only when it holds one of a few
literal `TRIGGERS` (``Error``, ``Timeout``, ``NCCL WARN``, ``Exception``, ...), found with the C library's
``memmem`` (`literals.finder`), one pass each over a buffer filled in place; a short log, and the first and
last `TAIL` bytes of a long one, are looked at line by line. Only candidates are decoded and handed to the recognisers, with the few lines after them (a
message printed over several lines, NCCL's ``Last error:``). A line longer than `MAX_LINE` is cut around the
trigger, so one 2 GB line costs no more than 2 GB of short ones.

    >>> import io
    >>> [w.line for w in windows(io.BytesIO(b"step 1\\nRuntimeError: boom\\nstep 2\\n"))]
    ['RuntimeError: boom']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from torchdoctor.explain import traceback_styles
from torchdoctor.explain.literals import finder

# Literal text one of which a failure line far from the end of a long log holds (Python prints exceptions as
# "SomethingError:"; C++ torch logs its timeouts; NCCL warns). Each costs one pass over the input (the C
# library's memmem, `literals.finder`), so the list is short and each entry is rare in a healthy run's output
# ("nan", which Megatron prints on every step as "number of nan iterations", counts only after "=", ": ",
# "is ", "= " or "/", see `_NAN_AFTER`; not "default", part of every "[default0]:" prefix). A short log, and the first and last `TAIL` bytes of a
# long one, have every line looked at: what a run prints as it starts (CUDA's and NCCL's warnings: "The
# NVIDIA driver on your system is too old", "... is not compatible with the current PyTorch installation")
# and as it dies (torchrun's "exitcode : -9", a shell's "Killed", "Segmentation fault (core dumped)") needs no
# trigger there.
TRIGGERS: tuple[bytes, ...] = (
    b"rror",  # Error, error: nearly every failure
    b"imeout",  # Timeout(ms)=, collective operation timeout, Socket Timeout
    b"NCCL WARN",  # NCCL prints every warning so (debug.cc); the long literal skips faster than "WARN"
    b"xception",  # Exception, ChildFailedError's traceback
    b"nan",  # loss=nan, loss: nan, 'loss': nan, Loss is nan, inf/nan (only those, see _NAN_AFTER)
    # how a process dies, wherever in the log it is (a restarted job goes on writing after it): torchrun's
    # "failed (exitcode: -9)" and its summary's "exitcode  : -11", a shell's "Killed" and "Segmentation
    # fault" ("Bus error" holds "rror"); long literals, so each pass skips fast
    b"exitcode",
    b"Killed",
    b"egmentation fault",
    # nvcc's and ptxas' "nvcc fatal   : Unsupported gpu architecture 'compute_90'" (their "%s fatal   : %s"):
    # a build's real cause, printed above the "Error building extension" it leads to; "fatal error:" holds
    # "rror" already. The long literal skips faster than "fatal".
    b"fatal   :",
    # the capitalised value after a space: "Loss is NaN", "loss: NaN", JSON's {"loss": NaN}, "infinite or
    # NaN"; rare in a healthy run's output (unlike "nan"), so every one counts. Four bytes skip faster than
    # "NaN" (Python itself prints a float NaN as "nan").
    b" NaN",
)
# What needs no trigger of its own, because the line beside it has one: torchrun's summary prints "traceback :
# Signal 9 (SIGKILL) received by PID" among the lines after its "exitcode : -9" (`FOLLOWING`); "CUDA out of
# memory" is raised as an OutOfMemoryError or RuntimeError ("rror"); the watchdog's "Some NCCL operations have
# failed or timed out" comes right after its "collective operation timeout"; NCCL's own failures are "NCCL
# WARN" lines. Each trigger costs a pass (0.02 s to 0.04 s per 100 MB on this machine), so one is added only for a line that
# can be alone.
# Settings are printed at start-up (NCCL INFO ... NCCL_SOCKET_IFNAME set to, an environment dump): they are
# read from the head of each log (`Collector.read`) rather than costing a pass each over the whole of it.
MAX_LINE = 64 * 1024  # longer lines are cut to this much around the trigger
TAIL = 256 * 1024  # the start and the end of a log are read line by line: where a run warns and dies
CHUNK = 8 * 2**20
# the buffer's first size: it grows to a chunk and what a chunk carries over to the next (a cut line, the end held
# back) only for an input that long, so a short log does not pay the kernel's page faults of a 9 MB buffer (a
# millisecond per log, most of explain's time on a pasted message)
_FIRST_ROOM = 64 * 1024
# words an exception's line holds, one of them at least (a KeyboardInterrupt's traceback is where a run the user
# stopped was waiting: explain/interrupted.py)
_EXCEPTION_WORDS = (b"rror", b"xception", b"KeyboardInterrupt")
FOLLOWING = 8  # lines after a candidate kept with it (torchrun's failure block is 7)
_HALF = MAX_LINE // 2
# A "nan" is a value right after "=" or "/" ("loss=nan", "inf/nan"), or after ": ", "= ", "s " ("loss: nan",
# "loss = nan", "Loss is nan"); not in "number of nan iterations".
_NAN_AFTER = frozenset(b"=/")
_MEGATRON_NAN = b"number of nan iterations"
_NAN_AFTER_SPACE = frozenset(b":=s")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,256}(?:\x07|\x1b\\)")
# torchrun --tee prefixes a line with the local rank ("[default1]:") and torch with the global one
# ("[rank1]:"): with both, the last one (the global rank) is the line's rank
_RANK_PREFIX = re.compile(r"^\s*(?:\[(?:rank|default)(\d{1,6})\]:\s?)+")
# tqdm's bar as it redraws the terminal (" 12%|█▎  | 3/25 [00:01<00:08, 2.90it/s]", Lightning's "Epoch 0: " before it
# and its metrics in the brackets), right before a rank's prefix: the other process's line, printed while the bar
# was drawn, follows it on the same line with no newline of its own (or after its "\r"); what is before it is the
# bar's redraws, and the line is that rank's (planted_runs/hf_trainer_no_fault: "[00:00<?, ?it/s][rank0]:[W...")
_BAR_BEFORE_RANK = re.compile(
    r"\d{1,3}%\|[^|\n]{0,400}\|[^\n]{0,400}?\][ \t]*\n?(?=[ \t]*\[(?:rank|default)\d{1,6}\]:)"
)
# what launchers and log collectors put before every line of a process's output, taken off like the rank prefix
# (a traceback's "  File" lines are read only without it): Open MPI's --tag-output ("[1,3]<stderr>:", the MPI
# rank: Horovod, DeepSpeed's MPI launchers), a container runtime's log line as Kubernetes keeps it
# ("2025-03-01T10:00:00.123456789Z stderr F "), pdsh's host (DeepSpeed's multi-node launcher: "10.0.0.5: ",
# "worker-1: ") or srun --label's task ("3: ") — a host or a task (a rank, or a node running torchrun), no rank —
# and Ray's worker ("(RayTrainWorker pid=71, ip=10.0.0.5) "); the last three (but an IP address) only before
# what a failure prints (a traceback, an exception, an indented line, a bracketed log header): "1: " may begin a
# line of prose, and kinds/ray_cluster.py reads a Ray worker's own log lines by their prefix
_LINE_PREFIX = re.compile(
    r"^\s*(?:"
    r"\[\d{1,9},(?P<mpi_rank>\d{1,6})\]<std(?:out|err|diag)>:\s?"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)\s(?:stdout|stderr)\s[FP]\s"
    r"|\d{1,3}(?:\.\d{1,3}){3}:\s"
    r"|(?:\((?:[A-Za-z_]\w{0,60}\s+)?pid=\d{1,10}(?:,\s*ip=[\w.:-]{1,60})?\)\s|(?=[a-z0-9.-]{0,63}\d)[a-z0-9][a-z0-9.-]{0,62}:\s)"
    r"(?=Traceback \(most recent|\s*File \"|\s{2,}\S|\[|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)\b)"
    r")"
)
# what a line can print before an exception (or its traceback) that is not the exception: when the line was
# written, and a logger's level and name, taken off as the launchers' prefixes are (the exception's line itself
# keeps it as `Window.said_at`, so the time still orders the ranks' failures: first_failure.initiating). A time as
# kubectl logs --timestamps, CloudWatch and SLURM's own log write it ("2025-12-23T06:41:38.979Z ValueError: ...",
# "[2024-01-01T12:00:00.123] "), Python's logging ("[2024-01-01 12:00:00,123] [ERROR] ", "2024-01-01 12:00:00,123 -
# root - ERROR - ", Hydra's "[2024-01-01 12:00:00,123][__main__][ERROR] - "), glog's ("E1203 12:00:00.123456 4242
# train.cc:12] "), before an exception, a traceback's line or torchrun's rank prefix; and pytest's "E   " before the
# exception a failed test reports, not before pytest's own assertion diff below it ("E     - expected", "E       +
# where ..."), and the place --tb=line prints before it ("path.py:2: KeyError: ...": the frame, first_failure)
_TIME_PREFIX = re.compile(
    r"^\s*(?:"
    r"(?:\[?\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|\s?[+-]\d\d:?\d\d)?\]?"
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{1,9}\s+\d{1,10}\s+[\w./-]{1,200}:\d{1,6}\])"
    r"(?:\s?[-|:]?\s?(?:\[(?!(?:rank|default)\d)[^\]\n]{1,80}\]|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b:?"
    r"|[\w.]{1,80}(?=\s[-|]\s))){0,4}\s?[-|:]?\s"
    r"|E {3,}(?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)(?::|\s*$))"
    r"|[^\s:>\[][^:\n]{0,500}?\.py:\d{1,7}: (?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit):)"
    r")"
    r"(?=\s*(?:Traceback \(most recent|File \"|\[(?:rank|default)\d{1,6}\]:|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)(?::|\s*$)))"
)
# "RuntimeError: boom", "torch.OutOfMemoryError: CUDA out of memory", "ValueError" alone on its line
EXCEPTION_LINE = re.compile(
    r"^\s*(?:[A-Za-z_][\w]*\.)*(?P<type>[A-Z]\w*(?:Error|Exception|Interrupt|Exit))(?::\s?(?P<message>.*)|\s*$)"
)
BEFORE = 120  # lines above an exception line kept: its traceback's innermost frames (a Hugging Face model's forward is 25 frames of 3 lines under Python 3.11+ before the user's line)
MAX_TRACEBACKS = (
    1000  # exception lines per input given the lines above them (a log of a million costs no more)
)
_FIRST_RANKS = re.compile(
    rb"(?m)^(?:\[(?:rank|default)(\d{1,6})\]:|\[\d{1,9},(\d{1,6})\]<std(?:out|err|diag)>:)"
)
# a line with a rank's prefix after something else (a time), read by `clean`
_RANK_LATER = re.compile(rb"(?m)^(?!\s*\[(?:rank|default)\d)[^\n]{1,200}?\[(?:rank|default)\d{1,6}\]:")
# torch's own prefix (init_process_group's excepthook: every line of an uncaught traceback), after torchrun's
# "[default1]:" where --tee adds it: the process had made its process group when it raised
_TORCH_PREFIX = re.compile(rb"\s*(?:\[default\d{1,6}\]:\s?)?\[rank\d{1,6}\]:")


@dataclass
class Window:
    """A candidate line (cleaned: no colour codes, no CR, no ``[rankN]:`` prefix) and the lines after it."""

    line: str
    following: list[str]
    number: int  # 1-based line number in its file
    rank: int | None = None  # from a ``[rank3]:`` / ``[default3]:`` prefix
    # numbers of the line and following lines that carried torch's "[rankN]:" excepthook prefix (_TORCH_PREFIX)
    hooked: frozenset[int] = frozenset()
    also: list[int] = field(default_factory=list)  # numbers of following lines that are candidates too
    before: list[str] = field(default_factory=list)  # for an exception line: the traceback lines above it
    said_at: str = ""  # for an exception line: what was taken off its start (a time: _TIME_PREFIX)

    def text(self, span: int) -> str:
        """The line and ``span`` lines after it, as one string."""
        return "\n".join([self.line, *self.following[:span]]) if span else self.line


def clean(raw: bytes) -> tuple[str, int | None]:
    """Decode one line of someone else's output and take off what is not the message: colour codes, CR,
    a torchrun ``[rank3]:`` prefix or Open MPI's ``[1,3]<stderr>:`` (returned as the rank), a launcher's or log
    collector's prefix (`_LINE_PREFIX`)."""
    text = raw.decode("utf-8", "replace")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if "%|" in text and (bar := _BAR_BEFORE_RANK.search(text)):
        text = text[bar.end() :]
    rank = None
    for _ in range(4):  # stacked: pdsh's host, then torchrun's "[default1]:[rank1]:"
        prefix = _RANK_PREFIX.match(text)
        if prefix:
            rank = int(prefix.group(1))
            text = text[prefix.end() :]
            continue
        prefix = _LINE_PREFIX.match(text) or _TIME_PREFIX.match(text)
        if prefix is None:
            break
        if prefix.re is _LINE_PREFIX and prefix["mpi_rank"] is not None:
            rank = int(prefix["mpi_rank"])
        text = text[prefix.end() :]
    return text, rank


def ranks_in_head(head: bytes) -> set[int]:
    """Ranks named by ``[rankN]:`` (or Open MPI's ``[1,N]<stderr>:``) prefixes at the start of lines in the first
    bytes of a log, or after what `clean` takes off before them (a time a log collector wrote first)."""
    ranks = {int(m.group(1) or m.group(2)) for m in _FIRST_RANKS.finditer(head)}
    for found in _RANK_LATER.finditer(head):
        rank = clean(found.group())[1]
        if rank is not None:
            ranks.add(rank)
    return ranks


def _hooked(buf: bytes, begin: int, end: int) -> bool:
    """Whether the line ``buf[begin:end]`` carries torch's excepthook prefix ``[rankN]:`` (`_TORCH_PREFIX`), at its
    start or after a time a log collector wrote before it ("2026-01-01 12:00:00,123 [rank0]: Traceback ...")."""
    if _TORCH_PREFIX.match(buf, begin, end):
        return True
    if buf.find(b"[rank", begin, end) < 0:
        return False
    text = buf[begin:end].decode("utf-8", "replace")
    before = _TIME_PREFIX.match(text) or _LINE_PREFIX.match(text)
    return before is not None and _TORCH_PREFIX.match(text[before.end() :].encode()) is not None


def windows(
    stream,
    chunk_size: int = CHUNK,
    every_line: bool = False,
    every_line_from: int | None = None,
    every_line_to: int = 0,
    every_line_last: int = 0,
) -> Iterator[Window]:
    """Every candidate line of a binary ``stream``, in order, with the lines after it.

    ``every_line``: every line is a candidate, not only those with a trigger (for a short paste, where an
    issue title may quote a message without its ``RuntimeError:``); ``every_line_from``: the same from that
    byte offset on (the end of a long log, where a run that died printed why); ``every_line_to``: the same up
    to that byte offset (the start of a log, where CUDA and NCCL warn as they start); ``every_line_last``:
    the same for that many bytes at the end, found without knowing the size: the last bytes read are held
    back until the input ends, so a pipe is read as the file it came from. Memory stays within a chunk, the
    bytes held back and a few cut lines, whatever the input (no newline at all, NUL bytes).
    """
    fill = _filler(stream)
    # One buffer for the whole input, the bytes carried over moved to its front: a fresh 8 MB object per
    # chunk costs the kernel a page fault per 4 KB (a tenth of the reading time on a 500 MB log).
    buf = bytearray(_FIRST_ROOM)
    size = 0  # bytes of buf in use: what was carried over, then what was read
    offset = 0  # byte offset of buf[0] in the input
    first_line = 1  # line number of buf[0]
    pending: set[int] = set()  # line numbers announced as candidates by the line before them
    tracebacks_left = MAX_TRACEBACKS
    eof = ended = False
    while not eof:
        got = 0 if ended else _fill_chunk(fill, buf, size, chunk_size)
        eof = ended = not got
        size += got
        if not size:
            return
        if eof:
            limit = size
            if every_line_last and every_line_from is None:  # the end is known now, and still in buf
                every_line_from = max(0, offset + size - every_line_last)
        else:
            limit = buf.rfind(b"\n", 0, size) + 1
            if size - limit > MAX_LINE:  # a line longer than MAX_LINE: cut it
                limit = size - _HALF
            if every_line_last:
                limit = min(limit, _held_back(buf, size, every_line_last))
        if every_line:
            starts = _line_starts(buf, limit)
        else:
            starts = _candidate_starts(buf, limit, size)
            extra: list[int] = []
            if every_line_from is not None and offset + limit > every_line_from:
                extra += _line_starts(buf, limit, max(0, every_line_from - offset))
            if offset < every_line_to:
                extra += _line_starts(buf, min(limit, every_line_to - offset))
            if extra:
                starts = sorted(set(starts).union(extra))
        line_number, counted_to = first_line, 0
        # the last window's lines, cleaned: where every line is a candidate, the next window shares all but
        # one of them (only those are kept, so a chunk of long lines cut in pieces holds no more than a window)
        seen: dict[int, tuple[str, int | None]] = {}
        resume = limit  # where the next buffer starts
        following_spans: list[tuple[int, int]] = []
        for start in starts:
            if following_spans and following_spans[0][0] == start:
                # the line after the last window's: its following lines are that window's but one, and one more
                end = following_spans[0][1]
                following_spans = following_spans[1:]
                window_end = following_spans[-1][1] if following_spans else end
            else:
                end = _line_end(buf, size, start)
                window_end, following_spans = end, []
            while len(following_spans) < FOLLOWING:
                next_start = window_end + 1
                if next_start >= size:
                    break
                next_end = _line_end(buf, size, next_start)
                following_spans.append((next_start, next_end))
                window_end = next_end
            incomplete = window_end >= size or len(following_spans) < FOLLOWING
            if not eof and incomplete and size - start < (FOLLOWING + 2) * MAX_LINE:
                resume = min(resume, start)  # its following lines are in the next chunk: read it again
                break
            line_number += buf.count(b"\n", counted_to, start)
            counted_to = start
            if line_number in pending:
                pending.discard(line_number)
                continue
            now = {}
            for begin, stop in ((start, end), *following_spans):
                found = seen.get(begin)
                now[begin] = clean(buf[begin:stop]) if found is None else found
            seen = now
            line, rank = now[start]
            following = [now[begin][0] for begin, _ in following_spans]
            window = Window(line, following, line_number, rank)
            if rank is not None:
                spans = ((start, end), *following_spans)
                window.hooked = frozenset(
                    line_number + i for i, (b, e) in enumerate(spans) if _hooked(buf, b, e)
                )
            if (
                tracebacks_left
                and any(buf.find(word, start, end) >= 0 for word in _EXCEPTION_WORDS)
                and EXCEPTION_LINE.match(line)
            ):
                window.before = _lines_before(buf, start)
                raw = buf[start:end].decode("utf-8", "replace")
                window.said_at = raw[: max(0, raw.rfind(line))]
                tracebacks_left -= 1
                window.line, wrapped = traceback_styles.whole_message(line, window.before, following)
                # the lines rich wrapped the message onto are read as part of it, not on their own
                pending.update(range(line_number + 1, line_number + 1 + wrapped))
            if line.rstrip().endswith(":") and following:
                # "RuntimeError:" / "Last error:" with the message on the next lines
                window.also = [line_number + 1 + i for i in range(min(2, len(following)))]
                pending.update(window.also)
            yield window
        if resume < limit:
            limit = resume
        first_line = line_number + buf.count(b"\n", counted_to, limit)  # counted up to counted_to already
        offset += limit
        pending = {n for n in pending if n >= first_line}
        buf[: size - limit] = buf[limit:size]  # the carry, to the front (the same length: no reallocation)
        size -= limit
        if eof and size:  # the deferred tail at the end of the input: nothing more will come
            eof = False


def _fill_chunk(fill: Callable[[bytearray, int, int], int], buf: bytearray, at: int, most: int) -> int:
    """Read up to ``most`` bytes into ``buf[at:]`` as one ``fill`` would, growing ``buf`` (twice its size each time,
    to ``at + most`` at most) while the input fills the room it has: a file's chunk ends where it did with the whole
    room at once, and a short read (a pipe) still ends the chunk."""
    got = 0
    while got < most:
        if len(buf) <= at + got:
            buf.extend(bytes(min(len(buf), at + most - len(buf))))
        room = min(len(buf), at + most) - at - got
        read = fill(buf, at + got, room)
        got += read
        if read < room:
            break
    return got


def _filler(stream) -> Callable[[bytearray, int, int], int]:
    """``fill(buf, at, most)``: read up to ``most`` bytes of ``stream`` into ``buf[at:]``; 0 at its end.

    Straight into ``buf`` where the stream can (a file, gzip); else read and copied.
    """
    readinto = getattr(stream, "readinto", None)

    def fill(buf: bytearray, at: int, most: int) -> int:
        with memoryview(buf) as view:
            if readinto is not None:
                return readinto(view[at : at + most]) or 0  # None: a FIFO with nothing written yet
            data = stream.read(most) or b""
            view[at : at + len(data)] = data
            return len(data)

    return fill


def _lines_before(buf: bytearray, start: int) -> list[str]:
    """Up to `BEFORE` lines above the line at ``start`` (cleaned), as far as ``buf`` reaches back."""
    lowest = max(0, start - BEFORE * 400)
    lines: list[str] = []
    end = start - 1
    while end > lowest and len(lines) < BEFORE:
        begin = buf.rfind(b"\n", lowest, end) + 1
        if begin == 0 and lowest > 0:
            break  # the line is cut by how far we look back
        lines.append(clean(buf[begin:end])[0])
        end = begin - 1
    return lines[::-1]


def _held_back(buf: bytearray, size: int, keep: int) -> int:
    """Where to stop in ``buf[:size]`` so that at least its last ``keep`` bytes wait for the next read: at a
    line's start, or, when no line starts within `MAX_LINE` of that point, in the middle of the long line."""
    keep_from = size - keep
    if keep_from <= 0:
        return 0
    cut = buf.rfind(b"\n", max(0, keep_from - MAX_LINE), keep_from) + 1
    return cut if cut > 0 else max(0, keep_from - _HALF)


def _candidate_starts(buf: bytearray, limit: int, size: int) -> list[int]:
    """Start offsets of the lines in ``buf[:limit]`` that hold a trigger, each once, in order (``buf[:size]``
    is the data, the rest is stale)."""
    starts: set[int] = set()
    find = finder(buf)
    for trigger in TRIGGERS:
        if trigger == b"nan":
            _nan_starts(buf, limit, size, find, starts)
            continue
        at = find(trigger, 0, limit)
        while at >= 0:
            start = _line_start(buf, at)
            starts.add(start)
            # on from the end of what the window of this line reads: a line longer than MAX_LINE that holds
            # the trigger every 2 KB gives a window per MAX_LINE, not one per trigger
            at = find(trigger, max(at + len(trigger), _line_end(buf, size, start)), limit)
    return sorted(starts)


def _nan_starts(
    buf: bytearray, limit: int, size: int, find: Callable[[bytes, int, int], int], starts: set[int]
) -> None:
    """Add the starts of the lines in ``buf[:limit]`` with a "nan" that is a value (`_NAN_AFTER`).

    Megatron prints "number of nan iterations" on every step: when every "nan" of the chunk is one of
    those (two counts say so, faster than a search, and faster than deleting them and searching again), none
    is looked at in turn.
    """
    first = find(b"nan", 0, limit)
    if first < 0 or buf.count(b"nan", first, limit) == buf.count(_MEGATRON_NAN, max(0, first - 10), limit):
        return  # "number of " is 10 bytes
    at = first
    while at >= 0:  # bytes.find: in a chunk that has them, "nan"s are many and a ctypes call costs more
        before = buf[at - 1] if at else 0
        if before in _NAN_AFTER or (before == 32 and at > 1 and buf[at - 2] in _NAN_AFTER_SPACE):
            start = _line_start(buf, at)
            starts.add(start)
            at = buf.find(b"nan", max(at + 3, _line_end(buf, size, start)), limit)
        else:
            at = buf.find(b"nan", at + 3, limit)  # the next "nan" on the same line may count


def _line_starts(buf: bytearray, limit: int, lowest: int = 0) -> list[int]:
    """Start offsets of every line in ``buf[lowest:limit]`` (the first one from ``lowest`` on)."""
    starts = [0] if lowest == 0 else []
    at = buf.find(b"\n", max(0, lowest - 1), limit)
    while at >= 0:
        if at + 1 < limit:
            starts.append(at + 1)
        at = buf.find(b"\n", at + 1, limit)
    return starts


def _line_start(buf: bytearray, at: int) -> int:
    lowest = max(0, at - _HALF)
    newline = buf.rfind(b"\n", lowest, at)
    return newline + 1 if newline >= 0 else lowest


def _line_end(buf: bytearray, size: int, start: int) -> int:
    newline = buf.find(b"\n", start, min(size, start + MAX_LINE))
    return newline if newline >= 0 else min(size, start + MAX_LINE)
