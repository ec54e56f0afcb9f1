"""Failures the machine a run is on causes beside the training itself: a display the job does not have, a
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
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, has_fact, on_ranks

R = re.compile

# matplotlib in the log: its modules, pyplot, a backend's name
CONTEXT: tuple[tuple[str, re.Pattern], ...] = tuple(
    (literal, R(r"(?P<saw_matplotlib>matplotlib|pyplot|\bplt\.\w|\bTkAgg\b|MPLBACKEND)"))
    for literal in ("matplotlib", "pyplot", "plt.", "TkAgg", "MPLBACKEND")
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


RECOGNISERS = (MATPLOTLIB_GUI_BACKEND, SHARED_FILESYSTEM_IO)
