"""Opening what the user handed to `explain`: files (gzip too), folders of per-rank logs, standard input.

Every file is someone else's: a FIFO nobody writes to reads as empty instead of blocking, a file that cannot be
read is named in one line, a folder is walked without following links out of it.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from torchdoctor.errors import BadInput

HEAD = 1 << 20  # read first, to tell a flight-recorder dump or a gzip file, and to find [rankN]: prefixes
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class Log:
    """One readable input: a binary stream, its name, the rank its path names, its first bytes."""

    stream: object
    source: str
    rank: int | None
    head: bytes
    path: Path | None = None
    in_folder: bool = False  # found by walking a folder, not named by the user
    size: int | None = None  # bytes, for a regular uncompressed file
    attempt: int | None = None  # torchrun's restart: the N of an ``attempt_N`` folder on its path


def attempt_of(path: Path) -> int | None:
    """The restart a torchrun ``--log-dir`` file belongs to: ``run/attempt_1/0/stderr.log`` -> 1."""
    return next((n for part in reversed(path.parts[:-1]) if (n := _attempt(part)) is not None), None)


def _attempt(name: str) -> int | None:
    """N of a torchrun restart's folder name ``attempt_N``, else None."""
    return int(name[8:]) if name.startswith("attempt_") and name[8:].isdigit() else None


class _Prefixed:
    """The bytes already read (``head``) followed by the rest of ``stream``."""

    def __init__(self, head: bytes, stream) -> None:
        self._head, self._stream = head, stream

    def read(self, size: int = -1) -> bytes:
        if self._head:
            data, self._head = (
                (self._head, b"")
                if size < 0 or size >= len(self._head)
                else (
                    self._head[:size],
                    self._head[size:],
                )
            )
            return data
        return self._stream.read(size)

    def readinto(self, buffer) -> int | None:
        """Read into ``buffer`` (a writable memoryview), the head first: no new object for each read."""
        if self._head:
            data = self.read(len(buffer))
            buffer[: len(data)] = data
            return len(data)
        readinto = getattr(self._stream, "readinto", None)
        if readinto is None:
            data = self._stream.read(len(buffer)) or b""
            buffer[: len(data)] = data
            return len(data)
        return readinto(buffer)


class _Utf16:
    """A UTF-16 stream (PowerShell's ``>`` writes logs so) read as UTF-8, in pieces."""

    def __init__(self, stream, encoding: str) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._decoded = b""  # UTF-8 decoded beyond what the last read asked for
        self._ended = False

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of UTF-8 (all that is left for -1): 2 bytes of UTF-16 can be 3 of UTF-8, and
        a reader that fills a buffer of ``size`` bytes gets no more than that."""
        while not self._ended and (size < 0 or not self._decoded):
            raw = self._stream.read(size if size < 0 else max(2, size))
            self._ended = not raw
            self._decoded += self._decoder.decode(raw or b"", final=not raw).encode("utf-8")
        if size < 0:
            size = len(self._decoded)
        data, self._decoded = self._decoded[:size], self._decoded[size:]
        return data


def utf16_encoding(head: bytes) -> str | None:
    """``utf-16`` for a byte-order mark followed by text, ``utf-16-le``/``-be`` for text with a NUL after
    (before) its ASCII characters and no mark; None for anything else.

    Text: the first 4 KB decode as UTF-16 without an error and hold almost no control characters. A log
    mostly in Chinese or Japanese has few NULs (a CJK character has none: only its newlines and digits
    have one), so what tells the byte order is the side they are on: the odd bytes in UTF-16-LE.
    """
    sample = head[: 1 << 12]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # and text after it, not bytes by chance
        if len(sample) < 6:
            return "utf-16"
        little = head.startswith(codecs.BOM_UTF16_LE)
        nul, other = (sample[3::2], sample[2::2]) if little else (sample[2::2], sample[3::2])
        return "utf-16" if _nuls_on_one_side(nul, other) and _utf16_text(sample, "utf-16") else None
    if len(sample) < 64:
        return None
    even, odd = sample[0::2], sample[1::2]
    for encoding, nul, other in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if _nuls_on_one_side(nul, other, least=4):
            return encoding if _utf16_text(sample, encoding) else None
    return None


def _nuls_on_one_side(nul: bytes, other: bytes, least: int = 1) -> bool:
    """Each ASCII character of UTF-16 (a log's newlines and digits, in any language) has a NUL on one side;
    UTF-8 has no NUL at all, a binary file has them on both sides."""
    nuls = nul.count(0)
    return nuls >= least and other.count(0) <= nuls // 20


def _utf16_text(sample: bytes, encoding: str) -> bool:
    """Whether ``sample`` (the start of a file, cut anywhere) decodes as ``encoding`` to text: no error,
    at most 1% control characters other than tab, newline, CR and ESC (random bytes give unpaired
    surrogates), and lines: past 200 characters, a newline (UTF-8 read as UTF-16 pairs its newline byte
    with the next one, so it has none)."""
    try:
        text = codecs.getincrementaldecoder(encoding)("strict").decode(sample, final=False)
    except UnicodeDecodeError:
        return False
    controls = sum(1 for char in text if char < " " and char not in "\t\n\r\x1b")
    return controls <= 0.01 * len(text) and (len(text) <= 200 or "\n" in text)


def looks_binary(head: bytes) -> bool:
    """A checkpoint, a core dump, an image: NUL bytes in more than 1% of the first 64 KiB (a log has none)."""
    sample = head[: 1 << 16]
    return bool(sample) and sample.count(0) > len(sample) // 100


def why_binary(head: bytes) -> str:
    """Why a file `looks_binary` is not read, its NUL bytes named: "is binary, not a log (48% of its 4004 bytes
    are NUL bytes: a checkpoint, a core dump, an archive?)"."""
    sample = head[: 1 << 16]
    read = "first 64 KiB" if len(sample) == 1 << 16 else f"{len(sample)} bytes"
    return (
        f"is binary, not a log ({100 * sample.count(0) / len(sample):.0f}% of its {read} are NUL bytes: "
        "a checkpoint, a core dump, an archive?)"
    )


def why_not_a_log(head: bytes) -> str:
    """Why an input is not a log to read ("" when it may be one): it is empty, or more than 5% of its first 64 KiB
    are control bytes, which a log has next to none of (a checkpoint, a core dump: about 11% in random bytes).
    Under 64 bytes, or UTF-16 (a NUL beside each ASCII character), it may be a log."""
    if not head:
        return "is empty"
    sample = head[: 1 << 16]
    if len(sample) < 64 or utf16_encoding(sample):
        return ""
    controls = sum(sample.count(byte) for byte in _NOT_TEXT)
    if controls <= len(sample) // 20:
        return ""
    read = "first 64 KiB" if len(sample) == 1 << 16 else f"{len(sample)} bytes"
    return (
        f"does not read as a log: {100 * controls / len(sample):.0f}% of its {read} are not text "
        "(a checkpoint, a core dump, an archive?)"
    )


_NOT_TEXT = bytes(
    [*range(9), 11, *range(14, 27), *range(28, 32), 127]
)  # all but tab, newlines, form feed, CR, ESC


# What a run's folder holds beside its logs and a log never is: the script, its docs, a job script. Their text
# (an `except` on "out of memory", a README's pasted error) would read as the run's own failure.
NOT_LOGS = frozenset(
    {".py", ".pyi", ".ipynb", ".md", ".rst", ".sh", ".c", ".cc", ".cpp", ".h", ".cu", ".cuh"}
)


def files_under(folder: Path, skipped: list[Path] | None = None) -> list[Path]:
    """Every regular file below ``folder`` that can be a log, sorted, without following links to folders.

    Source code and documents (`NOT_LOGS`) and hidden folders (``.git``, ``.hydra``) are left out; the files left
    out by their suffix are appended to ``skipped`` where it is given.
    """
    found = []
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            if path.suffix.lower() in NOT_LOGS:
                if skipped is not None:
                    skipped.append(path)
                continue
            try:
                if stat.S_ISREG(os.stat(path).st_mode):
                    found.append(path)
            except OSError:
                continue
    return found


def open_path(path: Path, label: str | None = None):
    """A buffered binary stream of ``path``, opened so that a FIFO nobody writes to does not block.

    Raises `BadInput` naming the path when it cannot be opened or is not a file.
    """
    label = label or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise BadInput(f"explain {label}: {error.strerror or error}") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode) or os.isatty(fd):
        os.close(fd)
        raise BadInput(f"explain {label}: {'is a folder' if stat.S_ISDIR(mode) else 'is a terminal'}")
    if stat.S_ISREG(mode):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _read_head(stream, label: str) -> bytes:
    try:
        return _read_some(stream, HEAD)
    except BlockingIOError:  # a FIFO with no writer yet: nothing to read
        return b""
    except OSError as error:
        raise BadInput(f"explain {label}: {error.strerror or error}") from None


def _read_some(stream, size: int) -> bytes:
    data = stream.read(size)
    return data or b""


def _before_the_cut(raw: bytes) -> bytes:
    """What a gzip file cut short holds before the cut (b"" when its header is cut, or its data is not deflate)."""
    try:
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS).decompress(raw)
    except zlib.error:
        return b""


def as_log(stream, source: str, rank: int | None, path: Path | None = None) -> Log:
    """Wrap a binary stream: peek at its head, and decompress it when it is gzip."""
    head = _read_head(stream, source)
    truncated = ""
    zipped = head.startswith(_GZIP_MAGIC)
    if zipped:
        unzipped = _Safe(gzip.GzipFile(fileobj=_Prefixed(head, stream)), source)
        pieces, size = [], 0
        while size < HEAD:  # in pieces: a file cut short still gives what came before the cut
            piece = unzipped.read(1 << 16)
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
        raw, head, stream, truncated = head, b"".join(pieces), unzipped, unzipped.truncated
        if truncated and not head and len(raw) < HEAD:
            # gzip gives nothing back from a small file whose end (its trailer, its last block) is cut: the whole
            # file is in ``raw``, decompressed here as far as it goes (what zcat prints before its error)
            head = _before_the_cut(raw)
    encoding = utf16_encoding(head)
    if encoding:
        stream = _Utf16(_Prefixed(head, stream), encoding)
        head = _read_head(stream, source)
    safe = _Safe(_Prefixed(head, stream), source)
    safe.truncated = truncated
    size = None
    if not zipped and hasattr(stream, "fileno"):
        try:
            status = os.fstat(stream.fileno())
            size = status.st_size if stat.S_ISREG(status.st_mode) else None
        except (OSError, ValueError, io.UnsupportedOperation):
            size = None
    return Log(safe, source, rank, head, path, size=size)


class _Safe:
    """A stream whose read errors become `BadInput` naming the file (a gzip cut short, an I/O error)."""

    def __init__(self, stream, source: str) -> None:
        self._stream, self._source = stream, source
        self.truncated = ""

    def read(self, size: int = -1) -> bytes:
        if self.truncated and not isinstance(self._stream, _Prefixed):
            return b""
        try:
            return self._stream.read(size) or b""
        except BlockingIOError:
            return b""
        except (EOFError, gzip.BadGzipFile, zlib.error) as error:
            self.truncated = self.truncated or str(error) or "the compressed data ends early"
            return b""
        except OSError as error:
            raise BadInput(f"explain {self._source}: {error.strerror or error}") from None

    def readinto(self, buffer) -> int:
        """`read` into ``buffer`` (a writable memoryview), with the same errors; 0 at the end."""
        if self.truncated and not isinstance(self._stream, _Prefixed):
            return 0
        readinto = getattr(self._stream, "readinto", None)
        try:
            if readinto is None:
                data = self._stream.read(len(buffer)) or b""
                buffer[: len(data)] = data
                return len(data)
            return readinto(buffer) or 0
        except BlockingIOError:
            return 0
        except (EOFError, gzip.BadGzipFile, zlib.error) as error:
            self.truncated = self.truncated or str(error) or "the compressed data ends early"
            return 0
        except OSError as error:
            raise BadInput(f"explain {self._source}: {error.strerror or error}") from None


def logs(paths: list[str], stdin=None) -> Iterator[Log]:
    """Every log named by ``paths`` (``-`` or none: ``stdin``), folders expanded, in a stable order.

    Raises `BadInput` for a missing path, an unreadable file named directly, or a folder with nothing
    readable in it.
    """
    from torchdoctor.explain.ranks import ranks_from_paths

    if not paths:
        paths = ["-"]
    for given in paths:
        if given == "-":
            if stdin is None:
                raise BadInput("explain: no log given and no standard input to read")
            if hasattr(stdin, "isatty") and stdin.isatty():
                raise BadInput(
                    "explain: give a log file or folder, or pipe a log in (… | torchdoctor explain)"
                )
            yield as_log(getattr(stdin, "buffer", stdin), "<stdin>", None)
            continue
        if not given.strip():
            raise BadInput(
                'explain: an empty path was given (an unset variable, as in `explain "$LOG"`?): '
                "name a log file or folder, or - for standard input"
            )
        path = Path(given)
        if not os.path.lexists(path):
            raise BadInput(f"explain {given}: no such file or folder")
        if path.is_dir():
            skipped: list[Path] = []
            files = files_under(path, skipped)
            ranks = ranks_from_paths(files)
            opened, refused = 0, None
            for file in files:
                try:
                    stream = open_path(file)
                except BadInput as error:
                    refused = refused or str(error).removeprefix("explain ")
                    continue
                opened += 1
                with stream:
                    log = as_log(stream, str(file), ranks.get(file), file)
                    log.in_folder, log.attempt = True, attempt_of(file)
                    yield log
            if not opened and any(_attempt(folder.name) is not None for folder in path.rglob("attempt_*")):
                raise BadInput(
                    f"explain {given}: torchrun's --log-dir folder holds no log: torchrun writes each rank's output "
                    "there only with --tee 3 (or --redirects 3), else it went to the console: explain the console's "
                    "output, or launch again with --tee 3"
                )
            if not opened and not any(path.iterdir()):
                raise BadInput(
                    f"explain {given}: an empty folder: if it is torchrun's --log-dir, torchrun failed before it "
                    "started any worker (a rendezvous that timed out, a port in use) and said why only on the "
                    "console: explain the console's output"
                )
            if not opened and skipped:
                names = ", ".join(p.name for p in skipped[:3]) + (", ..." if len(skipped) > 3 else "")
                raise BadInput(
                    f"explain {given}: a folder with no log in it: its {len(skipped)} file(s) are source code or "
                    f"documents ({names}), which explain does not read as logs: name the log file, or save the "
                    "run's output first (python train.py 2>&1 | tee train.log)"
                )
            if not opened and not files:
                raise BadInput(f"explain {given}: a folder with no file in it, only empty folders")
            if not opened:
                raise BadInput(
                    f"explain {given}: none of the {len(files)} file(s) in this folder can be read ({refused})"
                )
            continue
        with open_path(path, given) as stream:
            yield as_log(stream, given, None, path)
