"""A lock file in a Hugging Face cache that cannot be taken: held by another process, or on a file system without locks.

Hugging Face datasets, huggingface_hub and evaluate take a file lock beside what they write in their caches (py-filelock,
``FileLock``). Two messages say a lock could not be had:

- py-filelock's ``Timeout`` (``filelock/_error.py``, 3.x): "The file lock '<path>.lock' could not be acquired." when
  ``acquire(timeout=...)`` ran out: another process holds that lock (another rank or job preparing the same dataset or
  metric, or a process still alive from an earlier run), or the file system's locks do not work across nodes (a lock
  taken on one node never seen released on another). Likely: which of these, the message does not say.
- ``OSError: [Errno 37] No locks available`` (ENOLCK) from ``fcntl.flock``: the file system the locked file is on has
  no lock support (an NFS mount without its lock daemon, some FUSE and object-store mounts); most often a cache's lock,
  any locked file on that mount otherwise. The words name the cause, and the fix is where the file lives: certain once
  a real log shows it.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_LOCAL_CACHE = (
    "point the caches at a local disk of each node (export HF_HOME=/tmp/hf_home, or HF_DATASETS_CACHE=/local/"
    "hf_datasets, before the launcher), or prepare the dataset once (load_dataset and map on one process, then "
    "save_to_disk / load_from_disk on a shared path) and train from it"
)


def _lock(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = first(hits, "lock_path", "")
    if first(hits, "no_locks"):
        return (
            "a file lock was refused: the file system it was taken on does not support locks ([Errno 37] No locks "
            "available)" + on_ranks(hits),
            "The file the traceback locks (most often beside a Hugging Face cache: datasets, huggingface_hub, "
            "evaluate; else a file:// init_method's file or a tracker's run folder) is on a mount without lock "
            "support (an NFS mount without its lock daemon, a FUSE or object-store mount). Move it to a local disk: "
            "for the caches, "
            + _LOCAL_CACHE
            + "; or have the mount provide locks (NFS: the rpc.statd / nfs-lock service, or mount with "
            "local_lock=all on one node).",
        )
    return (
        "a lock file of a cache could not be taken within its timeout"
        + (f" ({path[:200]})" if path else "")
        + ": another process holds it, or the file system's locks do not work across the nodes"
        + on_ranks(hits),
        "Check whether another process holds the lock (lsof <file>.lock; a run still alive, another job on the same "
        "cache): stop it, or remove the .lock file once no process uses the cache. When every rank reaches the "
        "same cache at once, let one prepare it first (with training_args.main_process_first(): or "
        "accelerator.main_process_first():) and the others read it after; for evaluate metrics give each run its "
        "own experiment_id. On a network file system " + _LOCAL_CACHE + ".",
    )


CACHE_LOCK_UNAVAILABLE = Recogniser(
    kind="cache_lock_unavailable",
    title="a lock file of a cache that cannot be taken",
    templates=("third_party:filelock-file-lock-could-not-be-acquired", "system:enolck-no-locks-available"),
    anchors=("' could not be acquired.", "No locks available"),
    match=R(
        r"The file lock '(?P<lock_path>[^'\n]{1,300})' could not be acquired\.|(?P<no_locks>\[Errno 37\] No locks "
        r"available)"
    ),
    # a timeout says the lock was held, not by whom: likely; ENOLCK names the file system's lack of locks
    confirm=lambda hits, ctx: any("no_locks" in h.facts for h in hits),
    also=(
        Alternative(
            "concurrent_file_write",
            "several ranks or runs writing the same cache files at once",
            "Let one process prepare the cache (main_process_first) and give concurrent runs their own cache "
            "folders (cache_dir=, experiment_id=).",
            when=("lock_path",),
        ),
    ),
    describe=_lock,
)

RECOGNISERS = (CACHE_LOCK_UNAVAILABLE,)
