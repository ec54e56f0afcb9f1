"""Errors the CLI turns into one line on stderr and exit status 2, and the checks of values that raise them."""

import contextlib
import difflib
import errno
import math
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path


class BadInput(Exception):
    """Bad usage or bad input (a missing file, a malformed config): one clear line, exit status 2.

    The message must name the value involved, e.g. ``hostfile hosts.txt line 3: 'node1 slots=x': ...``.
    """


def wrong_value(flag: str, value: object, expected: str) -> BadInput:
    """The error for a value of the wrong kind, naming it as typed.

    >>> print(wrong_value("--devices", "one", "a whole number"))
    --devices 'one': must be a whole number
    """
    return BadInput(f"{flag} {value!r}: must be {expected}")


def no_such_option(typed: str, known: Iterable[str]) -> str:
    """The words for an option no command takes, with the ``known`` ones that look like a typo of it (a
    difflib suggestion alone would offer --verbose for --bogus).

    >>> no_such_option("--verbos", ["--json", "--verbose"])
    'no such option: --verbos (did you mean --verbose?)'
    """
    close = [
        name
        for name in sorted(set(known))
        if name.startswith(typed) or difflib.SequenceMatcher(None, typed, name).ratio() >= 0.8
    ]
    return f"no such option: {typed}" + (f" (did you mean {' or '.join(close)}?)" if close else "")


def require_seconds(flag: str, value: float | None, maximum: float = 7 * 24 * 3600) -> None:
    """Raise `BadInput` unless ``value`` (when given) is a finite number of seconds in (0, ``maximum``].

    >>> require_seconds("--timeout", float("nan"))
    Traceback (most recent call last):
    torchdoctor.errors.BadInput: --timeout nan: must be a number of seconds above 0 and at most 604800
    """
    if value is not None and not (math.isfinite(value) and 0 < value <= maximum):
        raise BadInput(f"{flag} {value:.15g}: must be a number of seconds above 0 and at most {maximum:g}")


def require_count(flag: str, value: int | None, minimum: int = 1, maximum: int = 1_000_000) -> None:
    """Raise `BadInput` unless ``value`` (when given) is a whole number in [``minimum``, ``maximum``]."""
    if value is not None and not minimum <= value <= maximum:
        raise BadInput(f"{flag} {value}: must be between {minimum} and {maximum}")


def given_path(flag: str, path: str | os.PathLike, what: str) -> Path:
    """``path`` as a `Path`; an empty one (``--log-dir "$DIR"`` with DIR unset) is refused, naming ``what`` to
    give instead: ``Path("")`` is ``.``, which would quietly mean the current folder."""
    if not os.fspath(path):
        raise BadInput(f"{flag} '': empty; give {what}")
    return Path(path)


def _shown(path: str | os.PathLike) -> str:
    """``path`` as the user typed it; an empty one as ``''`` so the message still names it."""
    text = os.fspath(path)
    return text if text else "''"


def _first_broken_folder(path: Path) -> str:
    """Why the folders leading to ``path`` cannot hold it: the first one missing, or the first that is a file."""
    for folder in reversed(path.parents):
        if folder == Path(".") or folder == Path(folder.anchor):
            continue
        try:
            info = os.stat(folder)
        except FileNotFoundError:
            return f"the folder {folder} does not exist"
        except OSError:
            continue  # reported by the caller's own error
        if not stat.S_ISDIR(info.st_mode):
            return f"{folder} is a file, not a folder"
    return "a folder on the way does not exist"


def _name_limit(path: Path) -> str:
    """What is too long in ``path``: the longest part against the file system's limit, or the whole path."""
    longest = max(path.parts, key=len, default="")
    try:
        limit = os.pathconf(path.parent if path.parent.is_dir() else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(longest) > limit:
        return f"name too long ({len(longest)} characters in {longest[:20]}…; the limit is {limit})"
    return f"path too long ({len(os.fspath(path))} characters)"


def _path_error(flag: str, path: Path, error: OSError, doing: str) -> BadInput:
    """One line naming ``flag``, ``path`` and what is wrong with it, for an ``OSError`` from ``doing``."""
    code = error.errno
    if code == errno.ENOENT:
        if path.is_symlink():
            reason = f"a symbolic link to {os.readlink(path)}, which does not exist"
        elif doing == "write":
            reason = _first_broken_folder(path)
        else:
            broken = _first_broken_folder(path)
            reason = "does not exist" if broken.startswith("a folder on the way") else broken
    elif code == errno.ENOTDIR:
        reason = _first_broken_folder(path)
    elif code in (errno.EACCES, errno.EPERM):
        closed = [f for f in reversed(path.parents) if f != Path(".") and not os.access(f, os.X_OK)]
        if closed:
            reason = f"no permission to enter the folder {closed[0]}"
        elif doing == "write" and not os.path.lexists(path):
            reason = f"no permission to write in the folder {path.parent}"
        else:
            reason = f"no permission to {doing} it"
    elif code == errno.ELOOP:
        reason = "a symbolic link loop (the link points, directly or not, at itself)"
    elif code == errno.ENAMETOOLONG:
        reason = _name_limit(path)
    elif code == errno.EISDIR:
        reason = "is a folder, not a file"
    elif code == errno.ENXIO:
        reason = "a named pipe that nothing reads"
    elif code == errno.EROFS:
        reason = "on a read-only file system"
    else:
        reason = f"cannot {doing} it: {error.strerror or type(error).__name__} (errno {errno.errorcode.get(code, code)})"
    return BadInput(f"{flag} {_shown(path)}: {reason}")


# File systems the kernel makes up as it is read: a name there is not a file one can write output to.
KERNEL_FILE_SYSTEMS = {
    "proc": "the kernel's view of the processes",
    "sysfs": "the kernel's view of the devices",
    "cgroup": "the kernel's control groups",
    "cgroup2": "the kernel's control groups",
    "debugfs": "the kernel's debugging files",
    "tracefs": "the kernel's tracing files",
    "securityfs": "the kernel's security files",
    "configfs": "the kernel's configuration files",
    "bpf": "the kernel's BPF objects",
    "devpts": "the kernel's terminals",
    "pstore": "the kernel's crash records",
    "fusectl": "the kernel's FUSE controls",
    "mqueue": "the kernel's message queues",
    "binfmt_misc": "the kernel's program formats",
    "efivarfs": "the firmware's variables",
}


def _kernel_file_system(path: Path) -> tuple[str, str] | None:
    """(mount point, what it is) when ``path`` lies in one of `KERNEL_FILE_SYSTEMS` (``/proc``, ``/sys``),
    from ``/proc/self/mountinfo``; None elsewhere, or when this system does not say. One answer for every
    file and folder we are told to write."""
    real = os.path.realpath(path)
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    found = ("", "")
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        point = parts[4].replace("\\040", " ")  # the kernel writes a space in a mount point as \040
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(found[0]):
            found = (point, rest.split()[0])
    return (found[0], KERNEL_FILE_SYSTEMS[found[1]]) if found[1] in KERNEL_FILE_SYSTEMS else None


def require_writable_file(flag: str, path: str | os.PathLike) -> None:
    """Raise `BadInput` unless a file can be written at ``path`` now (not after a long run); never blocks.

    Leaves no file behind when there was none. A named pipe nothing reads is refused rather than waited on.

    >>> require_writable_file("-o", "/etc/passwd/x")
    Traceback (most recent call last):
    torchdoctor.errors.BadInput: -o /etc/passwd/x: /etc/passwd is a file, not a folder
    """
    path = given_path(flag, path, "a file name")
    kernel = _kernel_file_system(path)
    if kernel is not None:
        raise BadInput(
            f"{flag} {_shown(path)}: {kernel[0]} is {kernel[1]}, not a place for files; give a path on disk"
        )
    try:
        # O_NONBLOCK: a named pipe nobody reads fails here (ENXIO) instead of blocking forever
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NONBLOCK, 0o666)
        created = True
    except FileExistsError:  # or a symbolic link: writing through one to nowhere creates its target
        target = Path(os.path.realpath(path))
        created = not os.path.lexists(target)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
        except OSError as error:
            raise _path_error(flag, path, error, "write") from None
        path = target
    except OSError as error:
        raise _path_error(flag, path, error, "write") from None
    os.close(descriptor)
    if created:
        path.unlink(missing_ok=True)


def require_writable_folder(flag: str, path: str | os.PathLike, keep: bool = True) -> None:
    """Raise `BadInput` unless ``path`` is, or can be made, a folder where files can be written — now, not
    after a run that has started. The folders it makes stay when ``keep``, else they are removed again.

    Shared by every ``--log-dir``:

    >>> require_writable_folder("--log-dir", "/proc/logs")
    Traceback (most recent call last):
    torchdoctor.errors.BadInput: --log-dir /proc/logs: under /proc, the kernel's view of the processes, which cannot hold files
    """
    if not os.fspath(path).strip():
        raise BadInput(f"{flag} '': empty; give a folder")
    path = Path(path)
    kernel = _kernel_file_system(path)
    if kernel is not None:
        raise BadInput(f"{flag} {path}: under {kernel[0]}, {kernel[1]}, which cannot hold files")
    made = [p for p in (path, *path.parents) if not os.path.lexists(p)][::-1]
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except FileExistsError:
        raise BadInput(f"{flag} {path}: is a file, not a folder") from None
    except NotADirectoryError:
        raise BadInput(f"{flag} {_shown(path)}: {_first_broken_folder(path / 'x')}") from None
    except OSError as error:
        raise _path_error(flag, path, error, "write") from None
    finally:
        if not keep:
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _open_for_reading(flag: str, path: str | os.PathLike) -> tuple[Path, os.stat_result]:
    path = given_path(flag, path, "a path")
    try:
        # O_NONBLOCK: opening a named pipe nobody writes must not wait
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise _path_error(flag, path, error, "read") from None
    try:
        return path, os.fstat(descriptor)
    finally:
        os.close(descriptor)


def require_readable_file(flag: str, path: str | os.PathLike) -> None:
    """Raise `BadInput` unless ``path`` is a file that can be read now; never blocks.

    >>> require_readable_file("--read-log", "/nonexistent/log.txt")
    Traceback (most recent call last):
    torchdoctor.errors.BadInput: --read-log /nonexistent/log.txt: the folder /nonexistent does not exist
    """
    path, info = _open_for_reading(flag, path)
    if stat.S_ISDIR(info.st_mode):
        raise BadInput(f"{flag} {path}: is a folder, not a file")


def require_folder(flag: str, path: str | os.PathLike) -> None:
    """Raise `BadInput` unless ``path`` is a folder that can be read now, in the words of the file checks."""
    path, info = _open_for_reading(flag, path)
    if not stat.S_ISDIR(info.st_mode):
        raise BadInput(f"{flag} {path}: is a file, not a folder")


def read_file(flag: str, path: str | os.PathLike, limit: int = 16 * 2**20) -> bytes:
    """The bytes of a file named by ``flag``, in the words of `require_readable_file` when it cannot be read.

    Never waits on a named pipe nobody writes (it reads as empty), and refuses more than ``limit`` bytes
    (``/dev/zero`` given by mistake would be read forever).
    """
    require_readable_file(flag, path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:  # changed since the check
        raise _path_error(flag, Path(path), error, "read") from None
    try:
        # blocking again: a pipe with a writer (`<(...)`) is read to its end, one without reads as empty
        os.set_blocking(descriptor, True)
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        raise BadInput(f"{flag} {_shown(path)}: cannot read it: {type(error).__name__}: {error}") from None
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise BadInput(f"{flag} {_shown(path)}: larger than {limit // 2**20} MiB; is it the right file?")
    return data
