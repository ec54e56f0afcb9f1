"""A process that started processes of its own while it was a daemon: a DataLoader's workers inside one.

CPython refuses a daemonic process any child (``Lib/multiprocessing/process.py``, ``BaseProcess.start``: ``assert
not _current_process._config.get('daemon'), 'daemonic processes are not allowed to have children'``, catalog
``system:multiprocessing-daemonic-children``), since a daemon is ended with its parent and would leave its own
children orphaned. A training script meets it where the DataLoader starts its workers (``num_workers > 0``) in:

- a ``multiprocessing.Process`` made with ``daemon=True`` (pytorch/examples' ``mnist_hogwild`` with its trainers
  made daemons so that they end with the main process): that process dies, and the main process goes on without
  it, to an exit status of 0 when nothing checks ``exitcode``;
- a ``multiprocessing.Pool``'s worker, which is always a daemon (``Pool.map`` of a function that trains or
  evaluates);
- a DataLoader's own worker, a daemon too: a dataset whose ``__getitem__`` starts a ``Pool`` or iterates another
  DataLoader with workers.

Which one the traceback shows decides the fix; the message is CPython's alone, but until a real thread's log shows
it the finding is likely.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_MESSAGE = "daemonic processes are not allowed to have children"

# where the traceback shows the children were started from, and by what: facts of the whole log
_LOADER = R(r"(?P<daemon_loader>_MultiProcessingDataLoaderIter)")
_POOL = R(r"(?P<daemon_pool>multiprocessing[/\\]pool\.py)")
_LOADER_WORKER = R(r"(?P<daemon_loader_worker>torch[/\\]utils[/\\]data[/\\]_utils[/\\]worker\.py)")
# multiprocessing/process.py _bootstrap's header for a Process whose target raised: "Process Process-2:"
_PROCESS = R(
    r"^(?:\[[^\]\n]{1,40}\]:)*Process (?P<daemon_process>(?:Spawn|Fork|Forkserver)?Process-\d+):\s*$", re.M
)


def _children(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = ctx.facts
    loader = "daemon_loader" in facts
    started = "the DataLoader's worker processes (num_workers > 0)" if loader else "a process"
    if "daemon_loader_worker" in facts:
        where = "inside a DataLoader worker, which is a daemon: the dataset's own code starts processes"
        fix = (
            "A dataset's __getitem__ runs in the DataLoader's workers, which may not start processes: take the "
            "multiprocessing.Pool (or the inner DataLoader with workers) out of the dataset, do that work "
            "beforehand or with threads (concurrent.futures.ThreadPoolExecutor), or give the inner DataLoader "
            "num_workers=0; or run the outer DataLoader with num_workers=0."
        )
    elif "daemon_pool" in facts:
        where = "inside a multiprocessing.Pool worker (a Pool's workers are always daemons)"
        fix = (
            "Run the function that builds the DataLoader in processes that are not daemons: "
            "concurrent.futures.ProcessPoolExecutor (its workers are not daemons on Python 3.9 and later), "
            "torch.multiprocessing.spawn, or one multiprocessing.Process per task that you join; or give that "
            "DataLoader num_workers=0 inside the pool."
        )
    else:
        where = "inside a process started with daemon=True"
        fix = (
            "Start that process without daemon=True (the default) and end it yourself: p.join(), or "
            "p.terminate() in a finally: block, so that it may start the DataLoader's workers; or give the "
            "DataLoader in it num_workers=0. torch.multiprocessing.spawn and torchrun start processes that are "
            "not daemons."
        )
    if "daemon_process" in facts:
        fix += (
            f"\nThe process that raised it ({facts['daemon_process']} here) ended, and the main process went on without it: a "
            "multiprocessing.Process's exception does not stop its parent, whose exit status can be 0. Check "
            "p.exitcode after p.join() (or use torch.multiprocessing.spawn, which raises the children's errors)."
        )
    return f"{started} could not start {where}: {_MESSAGE}" + on_ranks(hits), fix


DAEMON_CHILDREN = Recogniser(
    kind="daemon_process_children",
    title="processes started inside a daemonic process",
    templates=("system:multiprocessing-daemonic-children",),
    anchors=(_MESSAGE,),
    match=R(re.escape(_MESSAGE)),
    describe=_children,
)

RECOGNISERS = (DAEMON_CHILDREN,)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("_MultiProcessingDataLoaderIter", _LOADER),
    ("pool.py", _POOL),
    ("worker.py", _LOADER_WORKER),
    ("Process-", _PROCESS),
)
