"""A tensor sent by file descriptor whose sender had exited before it was taken (rebuild_storage_fd refused).

Under torch's default sharing strategy on Linux (``file_descriptor``) a CPU tensor put on a
``torch.multiprocessing`` queue travels as a file descriptor that the receiver fetches from the sender's
``multiprocessing.resource_sharer`` server, a thread of the sending process (``torch/multiprocessing/reductions.py``
``rebuild_storage_fd``; CPython's ``Lib/multiprocessing/resource_sharer.py``). When the sender has exited (or
stopped that server) by then, the fetch is refused (``ConnectionRefusedError: [Errno 111] Connection refused``,
catalog ``system:connection-refused-errno-111``), or, where the exiting sender had already removed its server's
socket, finds nothing to connect to (a bare ``FileNotFoundError: [Errno 2] No such file or directory``, no path
named; ``system:resource-sharer-socket-gone``: seen in CI on a loaded machine, the same joined producer). Two places a training script meets it:

- a DataLoader worker that exits while batches it sent are still queued: the main process's ``_try_get_data``
  raises "DataLoader worker (pid(s) N) exited unexpectedly" from it, a message explain otherwise reads as /dev/shm;
- a ``multiprocessing.Process`` that puts tensors on a queue and is joined before the queue is read.

Found for session 30: a worker that ended with ``os._exit(0)`` after its dataset handed a batch over led with "most
often /dev/shm was full"; a joined producer's refused tensor was "torchdoctor knows no fix". A reset connection
instead of a refused one (the worker died while handing over) is ranks.py's reading.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# torch/utils/data/dataloader.py _try_get_data, raised from the refused fetch
_WORKER_EXITED = R(r"DataLoader worker \(pid\(s\) (?P<handoff_worker>[\d, ]{1,200})\) exited unexpectedly")

_FILE_SYSTEM = (
    "torch.multiprocessing.set_sharing_strategy('file_system'), in the sending process too (a spawned process "
    "starts with the default), passes tensors by the name of a shared-memory file instead, which outlives the "
    "process that made it."
)


def _sender_gone(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    worker = ctx.facts.get("handoff_worker")
    if worker:
        return (
            f"DataLoader worker (pid(s) {worker.strip()}) had exited while the main process was still taking a "
            "batch it had sent: the batch's tensors come by file descriptor from the worker's own process "
            "(refused in rebuild_storage_fd), not through /dev/shm being full" + on_ranks(hits),
            "The worker ended, without an error of its own here, while batches it had already sent were queued: "
            "look for what ends a worker quietly in the dataset's code or what it calls (sys.exit(), os._exit(), "
            "a library that exits on bad input, a signal sent to it); run with num_workers=0 to see it happen in "
            "the main process. The refused connection is only how the exit shows (under the default sharing "
            "strategy the main process fetches each batch's tensors from the worker that sent it): a worker may "
            "not end while the DataLoader still expects batches from it, whatever the strategy.",
        )
    return (
        "a tensor sent through a multiprocessing queue by file descriptor could not be received: the process "
        "that sent it had already exited (refused in rebuild_storage_fd)" + on_ranks(hits),
        "A CPU tensor put on a torch.multiprocessing queue is fetched from the sending process when it is taken "
        "off the queue, so the sender must still run then: take every item off the queue before joining the "
        "process that put it (q.get() before p.join()), or have the sender wait for a reply before it returns. "
        + _FILE_SYSTEM
        + " Or send what is not a tensor: t.tolist(), t.numpy() (pickled by value), or save it with torch.save "
        "and send the path.",
    )


SENDER_GONE = Recogniser(
    kind="tensor_sender_gone",
    title="a tensor passed by file descriptor from a process that had exited",
    anchors=("ConnectionRefusedError", "FileNotFoundError: [Errno 2] No such file or directory"),
    templates=("system:connection-refused-errno-111", "system:resource-sharer-socket-gone"),
    # the socket's path is not in the message: a missing file of the user's names its path after a colon
    match=R(r"ConnectionRefusedError\b|FileNotFoundError: \[Errno 2\] No such file or directory\s*$"),
    # only where the refused connection is the fetch of a tensor's descriptor (ranks.CONTEXT reads the frame)
    requires=("loader_handoff",),
    # the DataLoader's "exited unexpectedly" raised from it: the refusal says why, not /dev/shm
    absorbs=("dataloader_shm",),
    describe=_sender_gone,
)

RECOGNISERS = (SENDER_GONE,)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (("exited unexpectedly", _WORKER_EXITED),)
