"""What the machine a run is on causes beside the training itself: displays, file systems, encodings.

Failures the machine a run is on causes beside the training itself: a display the job does not have, a
network filesystem under files every rank or node uses.

The messages are the system's and the GUI toolkits': Tcl's ``generic/tclAsync.c`` panics with "Tcl_AsyncDelete:
async handler deleted by the wrong thread" when a Tk interpreter made in one thread is torn down from another
(matplotlib's TkAgg backend, picked by default wherever tkinter imports, drawing from a worker or evaluation
thread); Tk's ``generic/tkWindow.c`` raises ``TclError`` "couldn't connect to display" / "no display name and no
$DISPLAY environment variable" where no X display is reachable; matplotlib's ``pyplot.switch_backend`` refuses an
interactive backend on a headless machine ("... interactive framework, as 'headless' is currently running"). The
C library's ``strerror(ESTALE)`` is "Stale file handle" ("Stale NFS file handle" before glibc 2.16): a file
handle of a network or shared filesystem (NFS, Lustre, a FUSE or overlay mount over one) whose file another
client replaced or removed meanwhile.

Windows' own limit on a path, 260 characters unless long paths are enabled, prints as CPython's OSError for
ERROR_FILENAME_EXCED_RANGE, "[WinError 206] The filename or extension is too long", and pip adds its own hint to
the OSError of an install that wrote past it (``pip/_internal/commands/install.py`` create_os_error_message: "...
this system does not have Windows Long Path support enabled"). CPython's UnicodeDecodeError (``Objects/
exceptions.c``: "'{codec}' codec can't decode byte 0x.. in position ..") names the codec a file was read with: a
platform's default one ('charmap' is cp1252 on a western Windows, 'gbk' a Chinese one, 'ascii' a C locale) is a
text file opened without an encoding.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    has_fact,
    on_ranks,
)

FAMILY = "the machine and its operating system"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# matplotlib in the log: its modules, pyplot, a backend's name
CONTEXT: tuple[tuple[str, re.Pattern], ...] = tuple(
    (literal, R(r"(?P<saw_matplotlib>matplotlib|pyplot|\bplt\.\w|\bTkAgg\b|MPLBACKEND)"))
    for literal in ("matplotlib", "pyplot", "plt.", "TkAgg", "MPLBACKEND")
)
# the frames that put a process's objects in /dev/shm: CPython's multiprocessing semaphores (synchronize.py,
# sem_open), its heap's arenas (heap.py, posix_fallocate) and shared_memory.py, torch's storage sharing
# (torch/multiprocessing/reductions.py): an ENOSPC raised there is /dev/shm full (a container's 64 MB default),
# not a disk (python/cpython#93253, NVIDIA/Megatron-LM#878)
SHM_FRAME = R(r"(?P<saw_shm_frame>multiprocessing[/\\](?:synchronize|heap|shared_memory|reductions)\.py)")
CONTEXT += (
    # CPython's subprocess on Windows (Lib/subprocess.py _execute_child): the frame a failed process start shows
    ("_winapi.CreateProcess(", R(r"(?P<saw_create_process>_winapi\.CreateProcess\()")),
    *((literal, SHM_FRAME) for literal in ("synchronize.py", "heap.py", "shared_memory.py", "reductions.py")),
)


def _gui_backend(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a plot was drawn through an interactive GUI backend (Tk) where the run has no display, or from a "
        "thread other than the one that created it" + on_ranks(hits),
        "Training plots need a non-interactive backend: set MPLBACKEND=Agg in the job's environment, or call "
        "matplotlib.use('Agg') before the first import of matplotlib.pyplot, and save figures with "
        "fig.savefig(...) instead of plt.show(). matplotlib chooses TkAgg wherever tkinter imports, and a Tk "
        "window can neither open without an X display (a cluster node, tmux/SSH without X forwarding, a "
        "container) nor be torn down from a worker or evaluation thread (Tcl_AsyncDelete, the process aborts).",
    )


MATPLOTLIB_GUI_BACKEND = Recogniser(
    # Tcl's generic/tclAsync.c (Tcl_Panic), Tk's generic/tkWindow.c (TclError), matplotlib/pyplot.py
    # (switch_backend's ImportError). The Tcl/Tk lines are printed for any tkinter use, so they are certain only
    # beside matplotlib in the log; matplotlib's own refusal is certain
    kind="matplotlib_gui_backend",
    templates=(
        "third_party:tcl-asyncdelete-wrong-thread",
        "third_party:tk-couldnt-connect-to-display",
        "third_party:tk-no-display-name",
        "third_party:matplotlib-backend-requires-interactive-framework",
    ),
    title="an interactive matplotlib backend without a display",
    anchors=(
        "Tcl_AsyncDelete: async handler deleted by the wrong thread",
        "couldn't connect to display",
        "no display name and no $DISPLAY environment variable",
        " interactive framework, as ",
    ),
    match=R(
        r"Tcl_AsyncDelete: async handler deleted by the wrong thread|couldn't connect to display|"
        r"no display name and no \$DISPLAY environment variable|"
        r"(?P<saw_matplotlib>Cannot load backend .{1,40} which requires the .{1,40} interactive framework, as )"
    ),
    confirm=has_fact("saw_matplotlib"),
    describe=_gui_backend,
)


def _stale_handle(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a file on a shared network filesystem (NFS or the like) was replaced or removed by another process or "
        "node while this one held it open: a stale file handle" + on_ranks(hits),
        "Several ranks or nodes are writing the same files on a shared filesystem: a compiler cache (Triton's "
        "~/.triton/cache, TorchInductor's /tmp/torchinductor_<user>), a dataset cache, checkpoints or logs in one "
        "folder. Give each node (or rank) its own node-local directory for caches, e.g. "
        "TRITON_CACHE_DIR=/tmp/triton-$RANK and TORCHINDUCTOR_CACHE_DIR on local disk (/tmp, the job's scratch), "
        "write checkpoints from one rank (or to local disk, then copy to the shared storage), and keep a "
        "dataset's cache files written once before the ranks start reading them.",
    )


SHARED_FILESYSTEM_IO = Recogniser(
    # the C library's strerror(ESTALE) (Linux errno 116), as Python's OSError prints it: only network and
    # shared filesystems return ESTALE, so the message alone says which storage it is
    kind="shared_filesystem_io",
    templates=("system:estale-stale-file-handle", "system:estale-stale-nfs-file-handle"),
    title="files shared on a network filesystem",
    anchors=("Stale file handle", "Stale NFS file handle"),
    describe=_stale_handle,
)


# the limit a command line meets instead (CreateProcess: 32,767 characters), which long paths do not lift
_COMMAND_LINE = (
    "Windows refuses to start a process whose command line is longer than 32,767 characters (CreateProcess "
    "fails with the same WinError 206, and enabling long paths does not lift it): a build's link or compile "
    "command listing many long object paths (setuptools' link.exe for an extension, pypa/distutils#226; ninja's "
    "cl / nvcc lines), or a tool handed a long argument list. Build in a short folder (short paths for the "
    "sources, the build and TEMP directories), build fewer files per command, or pass the long input through a "
    "file instead of the command line."
)


def _path_too_long(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = first(hits, "long_path")
    if path is None and not first(hits, "pip_long_path") and "saw_create_process" in ctx.facts:
        return (
            "a process could not be started: its command line passed Windows' 32,767-character limit "
            "(WinError 206 raised by subprocess's CreateProcess, not a file's path)" + on_ranks(hits),
            _COMMAND_LINE,
        )
    if path is None and not first(hits, "pip_long_path"):
        summary, fix = _path_fix(hits)
        return (
            "WinError 206 (the filename or extension is too long): a path past Windows' 260-character limit, or "
            "a command line past its 32,767 characters; the message names no path" + on_ranks(hits),
            f"{fix}\nIf the traceback ends in subprocess's CreateProcess (a process being started), it is the "
            f"command line instead: {_COMMAND_LINE}",
        )
    return _path_fix(hits)


def _path_fix(hits: list[Hit]) -> tuple[str, str]:
    return (
        "a file path passed Windows' 260-character limit (long paths are not enabled), so writing the file "
        "failed" + on_ranks(hits),
        "Enable long paths (as administrator: reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem /v "
        "LongPathsEnabled /t REG_DWORD /d 1 /f, or the group policy 'Enable Win32 long paths'; then open a new "
        "shell), or shorten the path the files go under: a virtual environment or conda environment in a short "
        "folder (C:\\venvs\\train), TEMP/TMP pointing at a short folder for pip's build directories, a Python not "
        "installed from the Microsoft Store (its site-packages path is long).",
    )


WINDOWS_PATH_TOO_LONG = Recogniser(
    # CPython's OSError for Windows' ERROR_FILENAME_EXCED_RANGE (FormatMessage: "The filename or extension is
    # too long"), printed for that limit only; pip's hint, printed with the OSError of an install on a Windows
    # without long-path support (pip/_internal/commands/install.py create_os_error_message)
    kind="windows_path_too_long",
    templates=("system:winerror-206-filename-too-long", "third_party:pip-windows-long-path-hint"),
    title="Windows' path length limit",
    anchors=("WinError 206", "does not have Windows Long Path support enabled"),
    facts=(
        R(r"WinError 206\][^\n:]{0,80}: '(?P<long_path>[^'\n]{1,600})'"),
        R(r"(?P<pip_long_path>does not have Windows Long Path support enabled)"),
    ),
    # CPython's subprocess raises the same WinError 206 from CreateProcess, without a path, for a command line
    # past 32,767 characters (pypa/distutils#226): certain where the message quotes a path, pip says long paths are
    # off, or the traceback shows the process start; the bare line names both readings
    confirm=lambda hits, ctx: (
        any("long_path" in h.facts or "pip_long_path" in h.facts for h in hits)
        or "saw_create_process" in ctx.facts
    ),
    describe=_path_too_long,
)

# a platform's default codec rather than the file's own: Windows' code pages (charmap is cp1252's decoder, gbk,
# cp932 ...) and a C/POSIX locale's ascii
_PLATFORM_CODEC = R(r"'(?P<platform_codec>charmap|gbk|cp\d{3,4}|ascii|mbcs)' codec can't decode")


def _text_encoding(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    codec = first(hits, "codec", "a")
    summary = f"a text file was read with the '{codec}' codec, which cannot decode its bytes" + on_ranks(hits)
    if first(hits, "platform_codec"):
        summary = (
            f"a text file (a dataset, a JSON or CSV file) was opened without an encoding, so Python read it with "
            f"the platform's default codec ('{codec}') instead of its own, UTF-8" + on_ranks(hits)
        )
    return (
        summary,
        "Open it with its encoding: open(path, encoding='utf-8') (json.load(open(path, encoding='utf-8')), "
        "pandas.read_csv(path, encoding='utf-8')); or run Python in UTF-8 mode for every open(): set "
        "PYTHONUTF8=1 (python -X utf8). If the file is not UTF-8, pass the encoding it was written in "
        "(encoding='latin-1', 'gbk').",
    )


TEXT_ENCODING = Recogniser(
    # CPython's UnicodeDecodeError (Objects/exceptions.c), for any bytes a codec cannot decode: text read with
    # the wrong codec, but also a binary file opened as text (only likely: that reading is named too)
    kind="text_encoding",
    templates=("system:unicode-decode-error-byte",),
    title="a text file read with the wrong encoding",
    anchors=("codec can't decode byte",),
    generic=("codec can't decode byte",),
    facts=(R(r"'(?P<codec>[\w-]{1,20})' codec can't decode"), _PLATFORM_CODEC),
    also=(
        Alternative(
            "bad_training_data",
            "a file that is not text at all (binary, compressed or corrupt) opened as text",
            "Check the file the traceback reads: an image, a checkpoint or a .gz opened in text mode needs "
            "open(path, 'rb') or the loader for its format.",
        ),
    ),
    describe=_text_encoding,
)


RECOGNISERS = (MATPLOTLIB_GUI_BACKEND, SHARED_FILESYSTEM_IO, WINDOWS_PATH_TOO_LONG, TEXT_ENCODING)
