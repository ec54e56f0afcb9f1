"""An object over 4 GiB pickled with a pickle protocol older than 4.

CPython's pickler (``Modules/_pickle.c``: ``save_bytes``, ``write_unicode_binary``) writes a bytes object's or a
string's length in four bytes below protocol 4, and refuses a longer one: "cannot serialize a bytes object larger
than 4 GiB" (a numpy array's buffer pickled as bytes) or "cannot serialize a string larger than 4GiB". The message
names its cause, so the finding is certain; where the object was pickled decides the fix, read from the traceback's
frames: multiprocessing handing a process its arguments (a DataLoader's workers started by spawn, mp.spawn's args, a
Queue's items), which took the default protocol, 3, before Python 3.8; torch.save, whose pickle_protocol defaults to
2; or the script's own pickle.dump without protocol=.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_WHAT = R(r"cannot serialize a (?P<pickled>bytes object|string) larger than 4 ?GiB")


def _where(ctx: Context) -> str:
    facts = ctx.facts
    if {"pickled_for_process", "saw_spawn", "process_spawned", "daemon_loader"} & set(facts):
        return "process"
    if "saw_torch_save" in facts:
        return "torch_save"
    return ""


_KEEP_OUT = (
    "keep the large arrays out of what is pickled: write them once to a file that each process opens itself "
    "(np.save, then np.load(path, mmap_mode='r') in the worker; an Arrow file read with pyarrow; an HDF5 file "
    "opened in each worker), or share them in memory (torch.from_numpy(array).share_memory_())"
)


def _too_large(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    what = merged(hits).get("pickled", "bytes object")
    where = _where(ctx)
    summary = (
        f"a {what} over 4 GiB was pickled with a pickle protocol older than 4, which cannot hold its length"
    )
    if where == "process":
        return (
            summary + ", to hand it to another process" + on_ranks(hits),
            "multiprocessing pickles what a new process is given (a DataLoader's dataset for workers started by "
            "spawn, mp.spawn's arguments, a Queue's items), and before Python 3.8 it used protocol 3. Run on "
            "Python 3.8 or later (protocol 4 by default), or " + _KEEP_OUT + "; on Linux the DataLoader's "
            "workers started by fork (multiprocessing_context='fork') are not handed the dataset pickled.",
        )
    if where == "torch_save":
        return (
            summary + ", by torch.save" + on_ranks(hits),
            "torch.save pickles with pickle_protocol=2 unless told otherwise: torch.save(obj, path, "
            "pickle_protocol=4), or save tensors instead of numpy arrays (the zip format writes a tensor's data "
            "outside the pickle) and keep datasets out of the checkpoint.",
        )
    return (
        summary + on_ranks(hits),
        "Find what pickled it in the traceback. Multiprocessing handing a process its arguments (DataLoader "
        "workers started by spawn, mp.spawn's args, a Queue) used protocol 3 before Python 3.8: run on Python "
        "3.8 or later, or "
        + _KEEP_OUT
        + ". torch.save: pass pickle_protocol=4. The script's own pickle.dump: "
        "pass protocol=4.",
    )


PICKLE_SIZE_LIMIT = Recogniser(
    kind="pickle_size_limit",
    templates=("system:pickle-bytes-over-4gib", "system:pickle-string-over-4gib"),
    title="an object over 4 GiB pickled with an old protocol",
    anchors=(
        "cannot serialize a bytes object larger than 4 GiB",
        "cannot serialize a string larger than 4GiB",
    ),
    facts=(_WHAT,),
    describe=_too_large,
)

RECOGNISERS = (PICKLE_SIZE_LIMIT,)
