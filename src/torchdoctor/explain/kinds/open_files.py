"""A process that reached its limit on open files (ulimit -n): NCCL's sockets on many nodes, a lowered soft limit.

Every file, socket and pipe a process holds is a descriptor, and the kernel refuses one more than the soft
RLIMIT_NOFILE (``ulimit -n``; often 1024 in a login or batch shell, though the hard limit is far higher) with EMFILE,
which glibc's strerror words "Too many open files":

- NCCL's bootstrap and proxy accept a socket from every peer (``src/misc/socket.cc`` socketTryAccept, v2.18.6 to
  v2.28.9, and ``src/os/linux.cc`` ncclOsSocketTryAccept, v2.30.7+: ``WARN("...: Accept failed: %s",
  strerror(errno))``), so their number grows with the nodes: a job that runs on one node stops at the first
  collective on four (goodfire-ai/spd#957, a 1024 soft limit in the cluster's shells). The accept names EMFILE
  itself: certain where seen. The proxy's service thread prints the same errno after it (``src/proxy.cc``,
  ``WARN("[Service thread] Accept failed %s", ...)`` in v2.12.12 to v2.28.9): where no other accept line is in the
  log, likely (that line prints an errno left from an earlier call as often: nccl.py reads the others).
- CPython's OSError for EMFILE (``[Errno 24] Too many open files``, Objects/exceptions.c) from any open: the limit
  too low for the run, a library lowering the soft limit itself (mmpose's and mmsegmentation's dataset builders set
  it to 4096 with ``resource.setrlimit``, open-mmlab/mmsegmentation#700), or descriptors leaking: likely.

torch's DataLoader says it in its own words ("Too many open files. Communication with the workers is no longer
possible", shared-memory objects it cannot open): train.py's dataloader_shm reads those, and this recogniser
rejects them.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "the machine and its operating system"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_NCCL_ACCEPT = (
    "socketTryAccept: Accept failed: Too many open files",
    "ncclOsSocketTryAccept: Accept failed: Too many open files",
    "[Service thread] Accept failed Too many open files",
)
_EMFILE = "Too many open files"


def _open_files(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "nccl_accept"):
        summary = (
            "NCCL could not accept a connection from a peer: the process already holds as many open files as its "
            "limit allows (EMFILE, Too many open files). NCCL opens sockets to its peers, so the number grows with "
            "the nodes, and a soft limit of 1024 (a login or batch shell's usual one) runs out at a few nodes"
        )
    else:
        summary = "a process reached its limit on open files (EMFILE, Errno 24, Too many open files)"
    fix = (
        'Raise the soft limit on open files where the ranks start, up to the hard limit: ulimit -n "$(ulimit -Hn)" '
        "in the job script before the launcher (srun and torchrun pass it to the ranks they start; ranks started "
        "over ssh or pdsh take the remote shell's limit: /etc/security/limits.conf, nofile), or docker run --ulimit "
        "nofile=1048576:1048576 for a container; check it inside a rank with ulimit -n or "
        "resource.getrlimit(resource.RLIMIT_NOFILE). If the code lowers the soft limit itself "
        "(resource.setrlimit(resource.RLIMIT_NOFILE, ...), as some dataset builders do), raise the value it sets. A "
        "DataLoader passing batches by file descriptor holds one per tensor in flight: fewer workers, or "
        "torch.multiprocessing.set_sharing_strategy('file_system'). If the count keeps growing through the run, "
        "something opens files without closing them."
    )
    return summary + on_ranks(hits), fix


OPEN_FILES_LIMIT = Recogniser(
    kind="open_files_limit",
    title="the limit on open files reached",
    templates=(
        "nccl:sockettryaccept-accept-failed",
        "nccl:ncclossockettryaccept-accept-failed",
        "nccl:service-thread-accept-failed",
        "system:python-too-many-open-files",
    ),
    anchors=(*_NCCL_ACCEPT, _EMFILE),
    # EMFILE from any open says the limit was reached, not why (a limit too low, a leak): likely; NCCL's accept at
    # the start of a job is the sockets to its peers
    generic=(_EMFILE, "[Service thread] Accept failed Too many open files"),
    match=R(
        r"(?P<nccl_accept>(?:[Ss]ocketTryAccept: Accept failed: |\[Service thread\] Accept failed )Too many open "
        r"files)|Too many open files"
    ),
    # torch's DataLoader says it its own way (train.py's dataloader_shm)
    reject=R(
        r"Too many open files\. Communication with the workers|shared memory object|received 0 items of ancdata"
    ),
    # NCCL returns ncclSystemError for the accept (torch: "unhandled system error", an NCCL error naming it as the
    # last error): the same failure in vaguer words
    absorbs=("nccl_system_error", "nccl_error"),
    describe=_open_files,
)

RECOGNISERS = (OPEN_FILES_LIMIT,)
