"""What NCCL itself reports: its error codes, system errors, ranks on other releases, settings it refuses.

Kinds of failure NCCL itself reports: its error codes, an unhandled system error, ranks on different NCCL
versions, and NCCL settings that break it where they do not fit.

The message texts are NCCL's (``src/init.cc``, ``src/misc/socket.cc``, ``src/misc/param.cc``, ``src/include/shm.h``)
and torch's ``ProcessGroupNCCL.cpp`` wrapping of them, as printed across torch 1.x-2.x. The patterns and hints
both this module and ``kinds/comm.py`` read (an `NCCL WARN` line's hint, "Last error:") are ``comm``'s.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds.comm import (
    LAST_ERROR,
    NCCL_DEBUG_HINT,
    NCCL_ERROR,
)
from torchdoctor.explain.quote import quote
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    merged,
    on_ranks,
)

FAMILY = "NCCL and collectives"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


# an NCCL release older than OLDEST_SHIPPED_NCCL (2.20.5): 1.x, 2.0 to 2.19 (read where it is stated)
OLD_NCCL = R(r"NCCL version (?P<old_nccl>(?:1|2\.1?\d)\.\d+)(?![\d.])")


# The system calls NCCL returns ncclSystemError for, as its WARN line (and torch's "Last error:", which repeats
# NCCL's last WARN) names them: include/checks.h SYSCHECK / PTHREADCHECK ("Call to <call> failed: <strerror>"),
# misc/socket.cc and os/linux.cc (connect, accept, socket creation), os/linux_ipcsocket.cc (the "UDS:" socket that
# passes cuMem handles between the processes of one host), misc/ibvwrap.cc ("Call to ibv_* failed"), alloc.h
# ("Failed to malloc"), the thread and the files it opens; misc/shmutils.cc / os/linux.cc for /dev/shm. CUDA IPC
# failures are CUDA errors (CUDACHECK, ncclUnhandledCudaError) whose WARN can still precede the system error.
# (pattern, what the call is, what to do): the first that matches the named call; "" for /dev/shm, the
# general fix's own subject
SYSTEM_CALLS: tuple[tuple[str, str, str], ...] = (
    (r"shm_open|fallocate|ftruncate|/dev/shm|shared memory|failed to extend|Could not map", "", ""),
    (
        r"\bUDS:|[Ii]pcSocket",
        "the Unix-domain socket NCCL passes CUDA memory handles over between the processes of one host (cuMem, "
        "NCCL 2.19+)",
        "The ranks of one host must share a network namespace for it (an abstract socket): run their containers "
        "with --network=host, or in one pod; NCCL_CUMEM_ENABLE=0 goes back to CUDA IPC handles, which need no "
        'socket. "Address already in use" on it is its name held by another process of this host (a rank left over '
        "from an earlier run): end that process.",
    ),
    (
        r"\bibv_\w+|\bmlx5dv_\w+|NET/IB",
        "an InfiniBand / RoCE verbs call",
        '"Cannot allocate memory" from ibv_reg_mr or ibv_create_* is the locked-memory limit: `ulimit -l` must '
        "be unlimited (Docker: --ulimit memlock=-1; Slurm: the limit of the job's daemon). Otherwise check "
        "`ibv_devinfo` and NCCL_IB_HCA / NCCL_IB_GID_INDEX; NCCL_IB_DISABLE=1 confirms the network is the cause.",
    ),
    (
        r"cudaIpc\w+|\bcuMem\w+|\bcuIpc\w+|CUDA IPC",
        "CUDA IPC between the GPUs of one host (the peer-to-peer transport)",
        "Ranks of one host in separate containers need --ipc=host and each other's GPUs visible; PCIe ACS or "
        "the IOMMU can block peer-to-peer (`nvidia-smi topo -p2p r`). NCCL_P2P_DISABLE=1 confirms it; "
        "NCCL_CUMEM_ENABLE=0 if the call is a cuMem one.",
    ),
    (
        r"\b(?:socket|connect|bind|listen|accept|setsockopt|getsockopt|getsockname|getifaddrs|recv|send|poll)\b|"
        r"Connect to|[Ss]ocket",
        "one of NCCL's TCP sockets (its bootstrap, or the socket transport between hosts)",
        "The peer's address and port must be reachable from this host on the interface NCCL picked: pin it with "
        "NCCL_SOCKET_IFNAME=<iface> (`ip -br addr`), open the firewall between the hosts (NCCL uses random "
        'ports), and run containers with --network=host. "Address already in use" is a port another process '
        "holds.",
    ),
    (
        r"pthread_\w+|Thread creation failed",
        "the creation of one of NCCL's threads",
        "The process reached its limit of threads: `ulimit -u`, or a container's pids limit (Docker --pids-limit, "
        "Kubernetes' pod pids limit); fewer DataLoader workers or OMP threads leave room.",
    ),
    (
        r"\b(?:malloc|calloc|posix_memalign)\b|Failed to malloc|Allocation failed",
        "an allocation of host memory",
        "The host (or the job's memory cgroup) is out of memory: check `free -g` and the job's memory limit.",
    ),
    (
        r"\b(?:open|fopen|read|write|stat|realpath|dlopen)\b|real path|No such file|/sys/|/proc/",
        "a file NCCL opens (the /sys files of the PCI topology, a plugin library, NCCL_TOPO_FILE)",
        "Check that the path it names exists and is readable by this user on that host; in a container mount "
        "/sys (read-only is enough).",
    ),
)
# NCCL's WARN lines that name a call failing, read log-wide: the line above torch's error, printed by the rank
CONTEXT = (
    (
        "NCCL WARN",
        R(
            r"NCCL WARN (?P<nccl_warn_failed>[^\n]{0,150}?(?:\bfailed\b|failed with|creation error)[^\n]{0,150})"
        ),
    ),
)


def _named_call(facts: dict, ctx: Context) -> tuple[str, str, str] | None:
    """What the log names as the failing call, (its words, what it is, what to do), from torch's "Last error:"
    or else NCCL's WARN line; None where it names none, or a /dev/shm one (the general fix's subject)."""
    last_error = facts.get("last_error", "").strip()
    for said in (last_error, ctx.facts.get("nccl_warn_failed", "").strip()):
        if not said:
            continue
        for pattern, what, fix in SYSTEM_CALLS:
            if re.search(pattern, said):
                return (said, what, fix) if what else None
        if said == last_error:
            # torch's "Last error:" is the failing call whatever it is: named, without a fix of ours
            return said, "", ""
    return None


def _system_error(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    version = facts.get("nccl_version")
    summary = "NCCL unhandled system error" + (f" (NCCL {version})" if version else "")
    if facts.get("shm_error"):
        summary += f": {facts['shm_error'].strip()}"
        if facts.get("shm_size"):
            summary += f" (segment of {facts['shm_size']} bytes)"
    elif facts.get("last_error"):
        summary += f": {facts['last_error'].strip()}"
    elif facts.get("uds_error"):
        summary += f": {facts['uds_error'].strip()}"
    summary += on_ranks(hits)
    if "ermission denied" in facts.get("shm_error", ""):
        fix = (
            "NCCL cannot create its shared-memory segment in /dev/shm: permission denied for this user.\n"
            "Give /dev/shm its usual permissions: sudo chmod 1777 /dev/shm (world-writable, sticky); in a "
            "container, run it with --ipc=host or mount a writable /dev/shm."
        )
        return summary, fix
    if "attaching to" in facts.get("shm_error", "") and "No such file" in facts.get("shm_errno", ""):
        fix = (
            "NCCL could not open the shared-memory segment another rank on this host created: the two processes "
            "do not see the same /dev/shm (ranks in separate containers or pods on one host, each with its own "
            "IPC namespace), or the creating rank had already failed and removed it.\n"
            "Run every rank's container with --ipc=host (or mount one shared /dev/shm into all of them); "
            "NCCL_SHM_DISABLE=1 works around it at some speed. Look for an earlier error on the other ranks."
        )
        return summary, fix
    errno = facts.get("shm_errno", "")
    if "not permitted" in errno or "not supported" in errno:
        # EPERM / EOPNOTSUPP from posix_fallocate or mmap on the segment: the call is refused, not out of room
        fix = (
            f"NCCL's shared-memory segment in /dev/shm was refused ({errno.strip()}), not short of space: the "
            "filesystem under /dev/shm does not allow the call (not a tmpfs, a sandbox such as gVisor, or a "
            "seccomp profile that blocks fallocate).\n"
            "Check `mount | grep /dev/shm` (it should be tmpfs, rw); in a container run it with --ipc=host or "
            "mount a tmpfs there (Kubernetes: an emptyDir of medium Memory). NCCL_SHM_DISABLE=1 works around it "
            "at some speed."
        )
        return summary, fix
    named = None if facts.get("shm_error") else _named_call(facts, ctx)
    if named:
        said, what, what_to_do = named
        fix = (
            f"The call that failed is the one the log names: {quote(said)}"
            + (f", {what}, not NCCL's shared memory in /dev/shm.\n{what_to_do}" if what else ".")
            + "\nTo see it with the calls around it:\n"
            + NCCL_DEBUG_HINT
        )
        return summary, fix
    fix = (
        "A system call inside NCCL failed. The most common one is NCCL's shared memory (/dev/shm) between "
        "the GPUs of one host: in Docker it is 64 MB unless the container runs with --ipc=host (or "
        "--shm-size=16g); on Kubernetes mount an emptyDir with medium: Memory at /dev/shm. Check "
        "`df -h /dev/shm` and that it is writable; NCCL_SHM_DISABLE=1 confirms it (NCCL_P2P_DISABLE=1 and "
        "NCCL_IB_DISABLE=1 rule out the other transports).\n"
        "To see the failing call:\n" + NCCL_DEBUG_HINT
    )
    return summary, fix


def _system_call_shown(hits: list[Hit], ctx: Context) -> bool:
    """Whether a shm line is there with a system call shown failing (its errno, NCCL's system error)."""
    return any(h.specific for h in hits) and any("system_call_failed" in h.facts for h in hits)


NCCL_SYSTEM_ERROR = Recogniser(
    # NCCL src/include/shm.h / misc/shmutils.cc, ncclSystemError (ncclResult 2); torch's DistBackendError text
    kind="nccl_system_error",
    templates=(
        "nccl:unhandled-system-error-run-with-nccl",
        # NCCL's shared memory in /dev/shm, as 2.12+ words its failures (misc/shmutils.cc, os/linux.cc)
        "nccl:error-failed-to-extend-to-bytes-2",
        # the same line from os/linux.cc (2.19+: fallocate, with its errno) and with the size as %d
        "nccl:error-failed-to-extend-to-bytes",
        "nccl:error-failed-to-extend-to-bytes-3",
        "nccl:error-failed-to-create-shared-memory",
        # include/checks.h SYSCHECK on the /dev/shm segment (NCCL up to 2.11: posix_fallocate, mmap)
        "nccl:call-to-posix-fallocate-failed",
        "nccl:call-to-mmap-failed",
        "nccl:call-to-shm-open-failed",
        # os/linux.cc, os/windows.cc, misc/shmutils.cc: "Error while %s shared memory segment %s (size %ld)",
        # creating or attaching to the segment in /dev/shm
        "nccl:error-while-shared-memory-segment-size",
        "nccl:error-while-shared-memory-segment-size-2",
        "nccl:error-while-shared-memory-segment-size-3",
        # os/linux.cc (misc/shmutils.cc before 2.28): the mmap of the /dev/shm segment just created or opened
        "nccl:error-could-not-map-size-error",
        "nccl:could-not-map-size-error",
        # os/linux_ipcsocket.cc: the cuMem handles' Unix-domain socket
        "nccl:uds-binding-to-socket-failed",
        "nccl:uds-binding-to-socket-failed-2",
        "nccl:uds-sending-data-over-socket-failed",
        "nccl:uds-sending-data-over-socket-failed-2",
        "nccl:uds-receiving-data-over-socket-failed",
        "nccl:uds-receiving-data-over-socket-failed-2",
        "nccl:uds-receiving-data-over-socket-failed-3",
    ),
    title="NCCL system error",
    anchors=(
        "unhandled system error",
        "ncclSystemError",
        "shm_open failed",
        "shared memory segment",
        "Error: failed to extend ",
        "failed to create shared memory file",
        "Call to posix_fallocate failed",
        "Call to mmap failed",
        "Could not map ",
        # os/linux_ipcsocket.cc (misc/ipcsocket.cc before 2.28), 2.18+: the Unix-domain socket of cuMem handles,
        # each failure returned as ncclSystemError (its WARN alone is often what is pasted)
        "UDS: Binding to socket",
        "UDS: Sending data over socket",
        "UDS: Receiving data over socket",
    ),
    # NCCL returns ncclSystemError for any failed system call (a socket too): certain only with the shm line
    generic=(
        "unhandled system error",
        "ncclSystemError",
        "UDS: Binding to socket",
        "UDS: Sending data over socket",
        "UDS: Receiving data over socket",
    ),
    # and the shm line only where a system call is shown failing: NCCL 2.12+ (misc/shmutils.cc, os/linux.cc)
    # also reaches "Error while creating/attaching to shared memory segment" when cudaHostRegister or
    # cudaHostGetDevicePointer of the mapped segment fails (CUDACHECKGOTO to the same fail label, after a
    # "Cuda failure '...'" WARN): ncclUnhandledCudaError, a CUDA failure and not /dev/shm. 2.12-2.18 print that
    # line without errno; 2.19+ add ", error: <strerror> (<errno>)"
    confirm=_system_call_shown,
    span=2,
    facts=(
        R(
            r"(?P<shm_error>(?:Call to )?shm_open failed ?: [^\n]{1,100}|Error while (?:creating|attaching to) shared memory "
            r"segment [^\n(]{1,200}|"
            r"failed to extend [^\n]{1,200}|failed to create shared memory file [^\n]{1,200}|"
            r"Call to (?:posix_fallocate|mmap) failed ?: [^\n]{1,100}|Could not map \S{1,200} size \d+[^\n]{0,100})"
        ),
        R(
            r"(?P<system_call_failed>failed to extend |shm_open failed|Call to (?:posix_fallocate|mmap) failed|"
            r"failed to create shared memory file|Could not map |shared memory segment [^\n]{1,200}\), error: |"
            r"unhandled system error|ncclSystemError|UDS: (?:Binding to|Sending data over|Receiving data over) socket)"
        ),
        R(r"(?P<uds_error>UDS: (?:Binding to|Sending data over|Receiving data over) socket[^\n]{0,200})"),
        # 2.19+ name the errno after the segment line and after fallocate's "failed to extend" (os/linux.cc)
        R(
            r"(?:shared memory segment [^\n]{1,200}\)|failed to extend \S{1,200} to \d+ bytes), error: "
            r"(?P<shm_errno>[^\n(]{1,80})"
        ),
        R(r"(?:\(size |failed to extend \S{1,200} to |Could not map \S{1,200} size )(?P<shm_size>\d+)"),
        NCCL_ERROR,
        R(r"NCCL version (?P<nccl_version>\d[\w.+]*)"),
        OLD_NCCL,
        LAST_ERROR,
    ),
    absorbs=("nccl_error",),
    # without the shm line the system call may be any of NCCL's; from an NCCL older than any supported torch
    # ships (the NCCL 2.7.8 of torch 1.7-1.9), a bug of that release fixed since is the other reading
    also=(
        Alternative(
            "nccl_error",
            "a CUDA call on the shared-memory segment that failed (cudaHostRegister of the mapped segment), not "
            "/dev/shm: NCCL prints the same segment line after a \"Cuda failure '...'\" WARN",
            "Read the NCCL WARN line above the segment line: \"Cuda failure '<error>'\" is a CUDA error (an "
            "earlier failure on the GPU that every later call reports, or page-locked memory refused); "
            '"unhandled system error" or an errno after the segment is /dev/shm. With NCCL_DEBUG=INFO the log '
            "says which.",
            unless=("system_call_failed",),
        ),
        Alternative(
            "nccl_bug_upgrade",
            "a bug of that old NCCL release, fixed in a later one",
            "Upgrade torch (it brings its own NCCL: python -c 'import torch; print(torch.cuda.nccl.version())') or "
            "the nvidia-nccl-cu* wheel, then run again before changing the machine.",
            when=("old_nccl",),
        ),
    ),
    # "Could not map " only as NCCL words its mmap of a segment ("... <path> size <bytes>, error: ...")
    reject=R(r"Could not map (?!(?:view of file )?\S{1,200} size \d)"),
    describe=_system_error,
)


def _proxy_accept(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    """proxy.cc's service thread that could not take a local rank's connection to its proxy.

    ncclSocketAccept fails there when the communicator's abort flag is set while it waits (ncclCommAbort: torch
    tearing the communicators down after an error or a timeout), when the connecting rank closes before its
    handshake (its process ended) or sends another socket type, or when accept() itself fails (socketTryAccept's
    own WARN before, with the errno). Only in that last case is the errno printed the reason: otherwise it is left
    from an earlier call, most often the EAGAIN of the non-blocking accept ("Resource temporarily unavailable"),
    which 2.12-2.17's accept loop returns on exactly when it finds the abort flag set."""
    errno = facts["accept_errno"].strip()
    summary = (
        f"NCCL's proxy service thread could not accept a connection from a rank of this host ([Service thread] "
        f"Accept failed {errno}): the communicator was being aborted after a failure elsewhere, or that rank "
        "dropped the connection first (its process ended)" + on_ranks(hits)
    )
    fix = (
        "This line follows another failure: the service thread goes on after it. Look above it and in the other "
        "ranks' output for the first error (an exception, a CUDA error, a collective timeout that made torch abort "
        f"the communicators, a rank killed). The errno it names ({errno}) is left from an earlier call unless a "
        "'socketTryAccept: Accept failed' WARN right before it names the same one (EAGAIN, 'Resource temporarily "
        "unavailable', never is): NCCL_DEBUG=INFO shows the WARN that explains the accept ('Connection closed by "
        "remote peer', 'wrong type')."
    )
    return summary, fix


def _nccl_error(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    said = ("reason", "bare", "result", "socket_progress")
    reason = next((facts[k] for k in said if facts.get(k)), "error").strip()
    version = facts.get("nccl_version")
    last = facts.get("last_error", "").strip()
    summary = (
        f"NCCL {version + ': ' if version else ''}{reason}" + (f" — {last}" if last else "") + on_ranks(hits)
    )
    if facts.get("proxy_accept"):
        return _proxy_accept(facts, hits)
    if reason.startswith("Socket recv failed while polling"):
        summary = (
            "NCCL lost its connection to a proxy thread while it waited for its answer (Socket recv failed while "
            "polling for opId): that proxy failed or its process ended first" + on_ranks(hits)
        )
    lowered = f"{reason} {last}".lower()
    if "remote process exited" in lowered or "network error" in lowered or "socket progress error" in lowered:
        fix = "Another rank died or its host dropped off the network first: its own error is the cause."
    elif "cuda" in lowered or facts.get("bare"):
        fix = (
            "A CUDA error inside NCCL: check `nvidia-smi` and `dmesg` for Xid errors; try without GPU "
            "peer-to-peer: NCCL_P2P_DISABLE=1\n" + NCCL_DEBUG_HINT
        )
    else:
        fix = (
            "Rerun with NCCL's log to see the failing call:\n" + NCCL_DEBUG_HINT + "\nThen try "
            "NCCL_IB_DISABLE=1 (InfiniBand) or NCCL_P2P_DISABLE=1 (GPU peer-to-peer) to isolate it."
        )
    if version and _older(version, OLDEST_SHIPPED_NCCL):
        fix += (
            f"\nNCCL {version} is older than {'.'.join(map(str, OLDEST_SHIPPED_NCCL))}, the NCCL the oldest torch "
            "still supported (2.4) ships: the bugs fixed since are many, so upgrade torch (or the nvidia-nccl "
            "wheel) before digging further."
        )
    return summary, fix


# the nvidia-nccl-cu12 version torch 2.4's wheels require (torch 2.5: 2.21.5)
OLDEST_SHIPPED_NCCL = (2, 20, 5)


def _older(version: str, than: tuple[int, ...]) -> bool:
    """Whether NCCL ``version`` ("2.7.8", "2.18.1+cuda12.1") is older than ``than``; False when unreadable."""
    numbers = re.findall(r"\d+", version.split("+")[0])[:3]
    return bool(numbers) and tuple(int(n) for n in numbers) < than


# An NCCL error with no more specific kind recognised is only what a cause elsewhere led to, or one of several (a
# version's bug, the fabric, a peer): every anchor of NCCL_ERROR_OTHER is generic, never certain.
_NCCL_ERROR_LINES = (
    "NCCL error in:",
    "NCCL Error ",
    "unhandled cuda error",
    "Proxy Call to rank",
    "Failed to execute operation",
    # NCCL's result strings (an internal error is a bug or a failure NCCL did not expect, the network's as
    # often as its own; an invalid argument the caller's or a setting's) and the socket transport's failure
    # (a peer that went away more often than the network): what led to them is elsewhere
    "internal error - please report this issue to the NCCL developers",
    "invalid argument (run with NCCL_DEBUG=WARN for details)",
    "NET/Socket : socket progress error",
    # proxy.cc: a local rank's proxy that died or that this process cannot reach over its UNIX socket (ranks
    # of one host in separate containers or network namespaces), or an operation of the proxy that failed
    "ncclProxyCallBlockingUDS call to",
    "ncclProxyClientGetFd call to",
    "[Service thread] Could not receive type from localRank",
    "[Service thread] Error encountered progressing operation",
    # proxy.cc (WARN in 2.12-2.28, INFO under NCCL_DEBUG_SUBSYS=PROXY since): the service thread's accept of a
    # local rank's connection that did not complete; the strerror it prints is the real reason only after
    # socketTryAccept's own WARN (EMFILE: open_files.py reads that one), else an errno left from an earlier call
    "[Service thread] Accept failed",
    # proxy.cc (2.18+): a rank's connection to its proxy (its own or a local peer's, the one that owns the NIC)
    # closed while it waited for an answer, because that proxy failed first or its process ended
    "Socket recv failed while polling for opId",
)


NCCL_ERROR_OTHER = Recogniser(
    # torch c10d NCCLUtils.hpp C10D_NCCL_CHECK: "NCCL error in: <file>:<line>, <reason>, NCCL version <v>"
    kind="nccl_error",
    templates=(
        "torch_native:nccl-error-in",
        "nccl:unhandled-cuda-error-2",
        # src/proxy.cc: a local rank's proxy thread (shared memory, the network plugin) that failed or went away
        "nccl:proxy-call-to-rank-failed",
        "nccl:proxy-service-failed-to-execute-operation",
        # init.cc ncclGetErrorString: ncclInternalError's and ncclInvalidArgument's words, printed by torch's
        # "NCCL error in:" and by the ncclXxx exceptions of other wrappers (cupy, NCCL's own tests)
        "nccl:internal-error-please-report-this-issue",
        "nccl:invalid-argument-run-with-nccl-debug",
        # transport/net_socket.cc: a socket of the socket transport failed mid-transfer (the peer went away, or the
        # network between them)
        "nccl:net-socket-socket-progress-error",
        # src/proxy.cc (2.19+): a local rank's proxy reached over a UNIX socket (cuMem handles) that failed, and the
        # proxy's service thread that lost a local rank's connection or failed an operation
        "nccl:ncclproxycallblockinguds-call-to-tprank-failed",
        "nccl:ncclproxyclientgetfd-call-to-tprank-handle-failed",
        "nccl:ncclproxyclientgetfd-call-to-rank-handle-failed",
        "nccl:service-thread-could-not-receive-type",
        "nccl:service-thread-could-not-receive-type-2",
        "nccl:service-thread-error-encountered-progressing-operation",
        "nccl:socket-recv-failed-while-polling-for",
        "nccl:service-thread-accept-failed",
    ),
    title="NCCL error",
    anchors=_NCCL_ERROR_LINES,
    generic=_NCCL_ERROR_LINES,
    match=R(
        r"NCCL error in: [^\n]{1,300}NCCL version|NCCL Error \d+: |(?P<bare>unhandled cuda error)|"
        r"Proxy Call to rank \d+ failed|Failed to execute operation \w+ from rank|"
        r"(?P<result>internal error - please report this issue to the NCCL developers|invalid argument \(run with "
        r"NCCL_DEBUG=WARN for details\))|(?P<socket_progress>NET/Socket : socket progress error)|"
        r"ncclProxy(?:CallBlockingUDS|ClientGetFd) call to (?:tpRank|rank) \d+|"
        r"\[Service thread\] (?:Could not receive type from localRank \d+|Error encountered progressing operation=\w+)|"
        r"Socket recv failed while polling for opId|"
        r"(?P<proxy_accept>\[Service thread\] Accept failed:? (?!Too many open files)(?P<accept_errno>[^\n]{1,80}))"
    ),
    span=3,
    facts=(
        NCCL_ERROR,
        R(r"NCCL Error \d+: (?P<reason>[^\n]{1,100})"),
        LAST_ERROR,
        R(
            r"(?P<proxy>(?P<reason>Proxy Call to rank \d+ failed \([^)\n]{1,40}\)|Failed to execute operation \w+ "
            r"from rank \d+, retcode \d+|ncclProxy(?:CallBlockingUDS|ClientGetFd) call to (?:tpRank|rank) \d+"
            r"[^\n]{0,40} failed : \d+|\[Service thread\] Could not receive type from localRank \d+|"
            r"Socket recv failed while polling for opId))"
        ),
        R(r"\[Service thread\] (?P<reason>Error encountered progressing operation=\w+, res=\d+)"),
    ),
    also=(
        Alternative(
            "nccl_system_error",
            "the shared memory or IPC the ranks of one host share (a container's small /dev/shm), or a local "
            "rank that died first",
            "NCCL's proxy threads talk to the host's other ranks through /dev/shm and a UNIX socket: run the "
            "container with --ipc=host (or --shm-size=16g), keep a host's ranks in one container or network "
            "namespace (NCCL's abstract UNIX sockets do not cross them: --network=host), check `df -h /dev/shm`, "
            "and read the other local ranks' output for an earlier failure.",
            when=("proxy",),
        ),
        Alternative(
            "nccl_bug_upgrade",
            "a bug of the NCCL release in use, fixed in a later one",
            "Try a newer NCCL: upgrade torch, which brings its own (pip install -U torch; see "
            "python -c 'import torch; print(torch.cuda.nccl.version())'), or install a newer nvidia-nccl-cu12 "
            "wheel; NCCL's release notes list what each release fixed (old releases, those of torch 1.x, had "
            "CUDA-error bugs fixed later).",
            # the proxy's accept cut short follows another failure, whatever the release
            unless=("proxy_accept",),
        ),
    ),
    describe=_nccl_error,
)


def _nccl_code(code: str) -> str:
    """NCCL's integer version: 21803 -> 2.18.3 (2.9.9 and older: 2909 -> 2.9.9)."""
    number = int(code)
    if number >= 10000:
        return f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    return f"{number // 1000}.{number // 100 % 10}.{number % 100}"


def _version_mismatch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("nccl_config") and not facts.get("version_a"):
        return (
            f"NCCL refused the communicator config torch handed it ({facts['nccl_config'].strip()}): the libnccl "
            "loaded is likely not the release torch was built against" + on_ranks(hits),
            "torch fills an ncclConfig_t with the NCCL_CONFIG_INITIALIZER of the NCCL headers it was built with; "
            "a library of another release reads the struct differently (-2147483648 is NCCL's 'undefined' "
            "marker). Load the NCCL torch expects: python -c 'import torch; print(torch.cuda.nccl.version())' "
            "against the one loaded (NCCL_DEBUG=INFO prints 'NCCL version'); unset LD_LIBRARY_PATH / "
            "LD_PRELOAD entries that put a system or conda libnccl first, and install the nvidia-nccl-cu12 "
            "version torch's wheel requires (pip show torch; pip install -U torch).",
        )
    summary = "the ranks run different NCCL versions"
    if facts.get("version_a"):
        summary += (
            f": rank {facts['rank_a']} has NCCL {_nccl_code(facts['version_a'])}, rank {facts['rank_b']} has "
            f"NCCL {_nccl_code(facts['version_b'])}"
        )
    fix = (
        "Every rank must load the same NCCL: install the same torch (and nvidia-nccl-cu* wheel) on every host, "
        "and check what each one loads:\n"
        "python -c 'import torch; print(torch.__version__, torch.cuda.nccl.version())'   # on every host\n"
        "A system libnccl found first through LD_LIBRARY_PATH or LD_PRELOAD overrides the wheel's: remove it there."
    )
    return summary, fix


NCCL_VERSION_MISMATCH = Recogniser(
    # NCCL src/init.cc: "Mismatched NCCL version detected : rank %d version %d rank %d version %d"
    kind="nccl_version_mismatch",
    templates=(
        "nccl:mismatched-nccl-version-detected-rank-version",
        "nccl:nccl-version-mismatch-with-remote-peer",  # NCCL 2.25+ src/transport/net.cc
        "nccl:invalid-config-blocking-attribute-value",
        "nccl:ncclconfig-argument-not-initialized-via-nccl",
    ),
    title="NCCL versions differ between ranks",
    anchors=(
        "Mismatched NCCL version detected",
        "NCCL version mismatch with remote peer",
        # src/init.cc parseCommConfig (2.14+): a config struct of other headers than the library's
        "Invalid config blocking attribute value",
        "argument not initialized via NCCL_CONFIG_INITIALIZER",
    ),
    # the blocking attribute torch never sets: only NCCL's "undefined" value says the struct was misread (a
    # value an NCCL_COMM_BLOCKING setting gave is that setting's)
    match=R(
        r"Mismatched NCCL version detected|NCCL version mismatch with remote peer|"
        r"Invalid config blocking attribute value -2147483648|argument not initialized via NCCL_CONFIG_INITIALIZER"
    ),
    facts=(
        R(r"rank (?P<rank_a>\d+) version (?P<version_a>\d+) rank (?P<rank_b>\d+) version (?P<version_b>\d+)"),
        R(
            r"(?P<nccl_config>Invalid config blocking attribute value -2147483648|ncclConfig_t argument not "
            r"initialized via NCCL_CONFIG_INITIALIZER)"
        ),
    ),
    absorbs=("nccl_error",),
    # the config refused is what a library of another release does with torch's struct, and what a bug of one
    # release did: likely; two ranks' versions named side by side are certain
    confirm=lambda hits, ctx: any(not h.facts.get("nccl_config") for h in hits),
    also=(
        Alternative(
            "nccl_bug_upgrade",
            "a bug of the NCCL release in use",
            "Upgrade torch (it brings its own NCCL) or the nvidia-nccl-cu12 wheel.",
            when=("nccl_config",),
        ),
    ),
    describe=_version_mismatch,
)


def _cuda_failure(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    error = facts.get("cuda_error", "a CUDA error").strip()
    version = ctx.facts.get("nccl_version")
    summary = (
        f"NCCL's own CUDA call failed ('{error}'){' in NCCL ' + version if version else ''}: a bug of the NCCL "
        "release in use or of its pairing with this torch, fixed in a later one" + on_ranks(hits)
    )
    fix = (
        f"NCCL checks every CUDA call it makes (CUDACHECK, src/include/checks.h) and stops on '{error}', an "
        "error of the arguments NCCL passed (a stream, an event, a handle, an API the driver does not offer), "
        "not of the GPU or of memory. Upgrade NCCL: torch brings its own (pip install -U torch; python -c "
        "'import torch; print(torch.cuda.nccl.version())'), or install a newer nvidia-nccl-cu12 wheel; NCCL's "
        "release notes list what each release fixed. A system libnccl found first through LD_LIBRARY_PATH or "
        "LD_PRELOAD replaces the wheel's: check that it is not an older one."
    )
    if version and _older(version, OLDEST_SHIPPED_NCCL):
        fix += (
            f"\nNCCL {version} is older than {'.'.join(map(str, OLDEST_SHIPPED_NCCL))}, the NCCL the oldest torch "
            "still supported (2.4) ships."
        )
    if facts.get("capture_error"):
        fix += (
            "\nThe call was made while a CUDA graph was being captured (torch.compile(mode='reduce-overhead'), "
            "torch.cuda.graphs, a library's graph capture): NCCL supports capture from 2.9.6 on, and a collective "
            "that synchronises inside the captured region is refused: run it outside the graph (or compile "
            "without CUDA graphs: mode='default')."
        )
    return summary, fix


# The CUDA errors NCCL's CUDACHECK / CUCHECK report that no other kind owns: errors of the arguments of a call
# (cudaGetErrorString / cuGetErrorString wording). Out of memory, an initialization error, a kernel that faulted,
# no kernel image, an invalid device ordinal, an old driver and a busy GPU are their own kinds' anchors.
_ARGUMENT_ERRORS = (
    "invalid resource handle|invalid device context|context is destroyed|invalid argument|invalid value|"
    "invalid configuration argument"
)
_SUPPORT_ERRORS = "operation not supported|operation not permitted(?! when)|unknown error"

NCCL_CUDA_FAILURE = Recogniser(
    # NCCL src/include/checks.h CUDACHECK: WARN("Cuda failure '%s'", cudaGetErrorString(err)); cudawrap.h
    # CUCHECK (2.19+): WARN("Cuda failure %d '%s'", err, errStr). Only the WARN: CUDACHECKIGNORE prints the same
    # words at INFO for failures NCCL clears and goes on from.
    kind="nccl_bug_upgrade",
    title="a bug of the NCCL release in use, fixed in a later one",
    anchors=("Cuda failure ",),
    templates=("nccl:cuda-failure", "nccl:cuda-failure-2"),
    match=R(
        rf"NCCL WARN (?:\S{{1,60}} )?Cuda failure (?:\d+ )?'(?P<cuda_error>(?P<argument_error>{_ARGUMENT_ERRORS})|"
        rf"(?P<support_error>{_SUPPORT_ERRORS})|(?P<capture_error>operation not permitted when stream is capturing))'"
    ),
    # the same errors come back when the ranks hand NCCL a tensor or stream of another GPU than the one its
    # communicator was made on, and a driver older than the CUDA APIs a recent NCCL calls (cuMem*) answers
    # "operation not supported": never certain
    confirm=lambda hits, ctx: False,
    absorbs=("nccl_error",),
    also=(
        Alternative(
            "gpu_selection",
            "a tensor or stream of another GPU than the rank's communicator (a rank that never called "
            "torch.cuda.set_device, or changed device after its first collective)",
            "Pin each rank to its GPU before the first collective: torch.cuda.set_device(int(os.environ"
            "['LOCAL_RANK'])) (or init_process_group(device_id=torch.device('cuda', LOCAL_RANK))), and keep every "
            "tensor handed to a collective on that device.",
            when=("argument_error",),
        ),
        Alternative(
            "driver_too_old",
            "a driver older than the CUDA APIs this NCCL calls (its cuMem* memory, NCCL 2.19+)",
            "Update the NVIDIA driver (nvidia-smi shows its version), or turn NCCL's cuMem allocations off: "
            "export NCCL_CUMEM_ENABLE=0.",
            when=("support_error",),
        ),
    ),
    describe=_cuda_failure,
)


# NCCL settings that, set by a machine image or an old script, break NCCL where they do not fit: (name, why)
RISKY_NCCL_SETTINGS = {
    "NCCL_GRAPH_FILE": "a saved topology graph for another machine; meant for debugging, never for production",
    "NCCL_TOPO_FILE": "a topology file describing another machine",
    "NCCL_ALGO": "forces one algorithm, which some collectives or sizes cannot use",
    "NCCL_PROTO": "forces one protocol (Simple/LL/LL128), unsafe on some platforms (LL128)",
    "NCCL_NET_GDR_LEVEL": "forces GPUDirect RDMA where the platform may not support it",
    "NCCL_P2P_LEVEL": "forces peer-to-peer over links that may not carry it",
    "NCCL_IB_HCA": "names InfiniBand devices this host may not have",
    "NCCL_NET": "names a network plugin that may not be loaded",
}


# NCCL's own refusals of a setting's value (fact: the WARN that says so), each of which stops the communicator's
# creation: its WARN names the value or the file the setting gave, not a peer's failure
_OWN_REFUSALS = frozenset({"comm_id_bad", "xml_file_bad", "force_merge_bad", "net_named"})


def _comm_id_named(hits: list[Hit], ctx: Context) -> bool:
    """Whether the log names NCCL_COMM_ID: bootstrap.cc's refusal, its INFO line, or the variable set."""
    return "saw_comm_id" in ctx.facts or any(
        h.facts.get("comm_id_bad") or h.facts.get("setting") == "NCCL_COMM_ID" for h in hits
    )


def _own_refusal(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    if facts.get("comm_id_bad") or facts.get("addr_unreadable"):
        why = (
            f": its host does not resolve ({facts['gai_error'].strip()})"
            if facts.get("gai_error")
            else ": it is not <ipv4>:<port>, [<ipv6>]:<port> or <hostname>:<port>"
        )
        return (
            "NCCL_COMM_ID is set to a value NCCL cannot read as its bootstrap root's address"
            + why
            + on_ranks(hits),
            "NCCL_COMM_ID makes NCCL bootstrap from a fixed address instead of the unique id torch exchanges "
            "through its store; torch never needs it. Unset it (unset NCCL_COMM_ID; look in the job script, the "
            "container's ENV, /etc/nccl.conf and ~/.nccl.conf), or give it as HOST:PORT of the rank-0 host "
            "(10.0.0.1:29600, [fe80::1]:29600), a host name every node resolves.",
        )
    if facts.get("net_named"):
        name = facts["net_named"].strip()
        return (
            f"NCCL_NET={name} names a network NCCL has no working plugin for on this host" + on_ranks(hits),
            "NCCL_NET picks the network transport by its plugin's name (IB, Socket, or an external plugin's: "
            "'AWS Libfabric', 'OFI'...); the one named is not loaded or found no device here (no InfiniBand/RoCE "
            "port up for IB: ibv_devinfo; the plugin's libnccl-net*.so not on LD_LIBRARY_PATH). Unset NCCL_NET to "
            "let NCCL choose, or install and enable the network it names on every node.",
        )
    if facts.get("force_merge_bad"):
        return (
            "NCCL_NET_FORCE_MERGE names NICs NCCL cannot fuse into one virtual NIC: "
            + facts["force_merge_bad"].strip()[:200]
            + on_ranks(hits),
            "NCCL_NET_FORCE_MERGE is a semicolon-separated list of comma-separated NIC groups (mlx5_0,mlx5_1;"
            "mlx5_2,mlx5_3), each NIC a device this host has (NCCL_DEBUG=INFO lists them as NET/IB : [0]mlx5_0:1) "
            "and no more per group than NCCL allows; unset it to let NCCL merge the NICs itself (NCCL_NET_MERGE_LEVEL).",
        )
    refusal = facts["xml_file_bad"].strip()
    if facts.get("graph_file"):
        what = f"NCCL_GRAPH_FILE names a file NCCL cannot open ({facts['graph_file']}: {facts['graph_error'].strip()})"
        fix = (
            "NCCL_GRAPH_FILE loads a saved search graph (a debugging aid, written by NCCL_GRAPH_DUMP_FILE on "
            "another run): unset it (unset NCCL_GRAPH_FILE; look in the job script, the container's ENV, "
            "/etc/nccl.conf and ~/.nccl.conf), or give the path of a file that exists on every node."
        )
    elif facts.get("xml_needed"):
        which = "graph" if "Graph" in refusal else "topology"
        what = (
            f"the XML {which} file NCCL was given was written for another NCCL (its version {facts['xml_version']}, "
            f"this NCCL needs {facts['xml_needed']})"
        )
        fix = (
            "The file comes from NCCL_TOPO_FILE (topology) or NCCL_GRAPH_FILE (graph) — or, without "
            "NCCL_TOPO_FILE, the cloud image's /var/run/nvidia-topologyd/virtualTopology.xml. Use the file made for "
            "this NCCL release (the VM image's newer one, or regenerate it with NCCL_TOPO_DUMP_FILE / "
            "NCCL_GRAPH_DUMP_FILE on this NCCL), upgrade the NCCL torch loads to the one the file was made for, "
            "or unset the variable to let NCCL detect the machine."
        )
    else:
        what = f"NCCL could not parse the XML topology or graph file it was given ({refusal[:120]})"
        fix = (
            "NCCL reads XML from NCCL_TOPO_FILE or NCCL_GRAPH_FILE (without NCCL_TOPO_FILE, the cloud image's "
            "/var/run/nvidia-topologyd/virtualTopology.xml): the file is truncated or not NCCL's XML. Point the "
            "variable at a complete file NCCL wrote (NCCL_TOPO_DUMP_FILE / NCCL_GRAPH_DUMP_FILE), or unset it to "
            "let NCCL detect the machine."
        )
    return what + on_ranks(hits), fix


def _nccl_env(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    settings = {h.facts["setting"]: h.facts.get("value", "").strip() for h in hits if "setting" in h.facts}
    settings.update(
        {h.facts["setting2"]: h.facts.get("value2", "").strip() for h in hits if "setting2" in h.facts}
    )
    named = "; ".join(f"{k}={v}" for k, v in settings.items())
    why = "; ".join(f"{k}: {RISKY_NCCL_SETTINGS[k]}" for k in settings if k in RISKY_NCCL_SETTINGS)
    refusal = next((h.facts for h in hits if _OWN_REFUSALS.intersection(h.facts)), None)
    if refusal is not None:
        return _own_refusal({**merged(hits), **refusal}, hits)
    unreadable = next((h.facts for h in hits if h.facts.get("addr_unreadable")), None)
    if unreadable is not None:
        if _comm_id_named(hits, ctx):
            return _own_refusal(merged(hits), hits)
        gai = unreadable.get("gai_error")
        return (
            "NCCL could not read an address it was given as host:port"
            + (f" ({gai.strip()})" if gai else "")
            + ": NCCL_COMM_ID's, if it is set"
            + on_ranks(hits),
            "NCCL_COMM_ID makes NCCL bootstrap from a fixed address instead of the unique id torch exchanges "
            "through its store; torch never needs it. Unset it (look in the job script, the container's ENV, "
            "/etc/nccl.conf and ~/.nccl.conf), or give it as HOST:PORT of the rank-0 host, a host name every node "
            "resolves.",
        )
    if any(h.facts.get("net_none") for h in hits) and "NCCL_NET" not in settings:
        return (
            "NCCL found no network plugin it could use for the communicator" + on_ranks(hits),
            "NCCL_NET (or the communicator's netName) names a network this host lacks, or no transport "
            "initialised at all (its socket transport without a usable interface). Unset NCCL_NET; check the "
            "interfaces with `ip -br addr` and name one every host shares: NCCL_SOCKET_IFNAME=<iface>; for "
            "InfiniBand, `ibv_devinfo` must list an active port.",
        )
    summary = f"NCCL failed with {named} set in its environment"
    refused = next((h.facts for h in hits if h.facts.get("algo_refused")), None)
    if refused:
        summary = (
            f"{named} leaves NCCL no algorithm or protocol for {refused['algo_func']} on "
            f"{refused['algo_dtype']}: NCCL refuses the collective (ncclInvalidUsage)"
        )
    return (
        summary + on_ranks(hits),
        f"These settings override what NCCL detects ({why}). Unset them and run again: unset "
        + " ".join(settings)
        + " (look for them in the machine image's /etc/nccl.conf, ~/.nccl.conf, the container's ENV, "
        "or the job script); keep them only if the failure stays without them.",
    )


NCCL_ENV_VALUE = Recogniser(
    # NCCL src/misc/param.cc: "%s set by environment to %s" (INFO), next to an NCCL failure
    kind="nccl_env_value",
    title="an NCCL setting that breaks it",
    anchors=(
        *(f"{name} set by environment to" for name in RISKY_NCCL_SETTINGS),
        # src/enqueue.cc (2.25+): the WARN that names the NCCL_ALGO / NCCL_PROTO set when no algorithm or protocol
        # is left for a collective (NCCL returns ncclInvalidUsage then; with neither set, ncclInternalError)
        "o algorithm/protocol available for function",
        # src/bootstrap.cc: NCCL_COMM_ID that is no address; misc/socket.cc's ncclSocketGetAddrFromString WARNs
        # before it (below) for any address string, and NCCL 2.24+'s RAS client socket (ras/client_support.cc
        # rasClientInitSocket, NCCL_RAS_ADDR or localhost:28028) ignores its failure: the run goes on
        "Invalid NCCL_COMM_ID",
        "No valid <IPv4_or_hostname>:<port> pair found",
        "No valid [IPv6]:port pair found",
        "error encountered when getting address info",
        # src/graph/xml.cc: the XML file NCCL_TOPO_FILE / NCCL_GRAPH_FILE (or a cloud image's
        # /var/run/nvidia-topologyd/virtualTopology.xml) gave, refused; each returns an error that stops the init
        "XML Topology has wrong version",
        "XML Graph has wrong version",
        "Could not open XML graph file",
        "XML Parse : ",
        "XML Parse error : ",
        # src/graph/topo.cc (2.25+): NCCL_NET_FORCE_MERGE's NIC groups refused
        "Please specify a valid NCCL_NET_FORCE_MERGE string",
        "TOPO/NET : Only matched",
        "Specified fused NIC",
        # src/net.cc (2.10-2.25) and plugin/net.cc (2.27+): no network plugin left for the communicator — the one
        # NCCL_NET names is not there (its devices, its library), or none at all initialised
        "Error: network ",
        "Failed to initialize any NET plugin",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "Could not force merge NICs",
    ),
    templates=(
        "nccl:nccl-graph-file-set-by-environment",
        "nccl:nccl-topo-file-set-by-environment",
        "nccl:nccl-proto-set-by-environment-to",
        "nccl:set-by-environment-to-2",
        "nccl:no-algorithm-protocol-available-for-function",
        "nccl:error-no-algorithm-protocol-available-for",
        "nccl:invalid-nccl-comm-id-please-use",
        "nccl:net-no-valid-ipv4-or-hostname",
        "nccl:net-no-valid-ipv6-port-pair",
        "nccl:net-error-encountered-when-getting-address",
        "nccl:xml-topology-has-wrong-version-needed",
        "nccl:xml-graph-has-wrong-version-needed",
        "nccl:could-not-open-xml-graph-file",
        "nccl:xml-parse-unexpected-eof",
        "nccl:xml-parse-expected-double-quote",
        "nccl:xml-parse-unexpected-value-with-name",
        "nccl:xml-parse-error-unterminated-comment",
        "nccl:xml-parse-error-expecting-got",
        "nccl:xml-parse-error-unexpected-trailing-in",
        "nccl:xml-parse-expected-got",
        "nccl:xml-parse-unterminated",
        "nccl:topo-net-could-not-force-merge",
        "nccl:topo-net-only-matched-devices-requested",
        "nccl:specified-fused-nic-which-has-too",
        "nccl:error-network-not-found",
        "nccl:failed-to-initialize-any-net-plugin",
    ),
    facts=(
        R(r"(?P<setting>NCCL_[A-Z_]{2,40}) set by environment to (?P<value>\S{1,300})"),
        R(
            r"(?P<algo_refused>[Nn]o algorithm/protocol available for function (?P<algo_func>\w{1,40}) with datatype "
            r"(?P<algo_dtype>\w{1,40})\.) (?P<setting>NCCL_ALGO|NCCL_PROTO) was set to (?P<value>[^\n.]{1,200})\."
            r"(?: (?P<setting2>NCCL_PROTO) was set to (?P<value2>[^\n.]{1,200})\.)?"
        ),
        R(r"(?P<comm_id_bad>Invalid NCCL_COMM_ID)"),
        # misc/socket.cc ncclSocketGetAddrFromString: any address string NCCL reads, not NCCL_COMM_ID's only
        R(
            r"(?P<addr_unreadable>Net : No valid (?:<IPv4_or_hostname>:<port>|\[IPv6\]:port) pair found|Net : error "
            r"encountered when getting address info : (?P<gai_error>[^\n]{1,100}))"
        ),
        R(
            r"(?P<xml_file_bad>XML (?:Topology|Graph) has wrong version (?P<xml_version>\d+), (?P<xml_needed>\d+) "
            r"needed|Could not open XML graph file (?P<graph_file>\S{1,300}) : (?P<graph_error>[^\n]{1,100})|"
            r"XML Parse(?: error)? : [^\n]{1,120})"
        ),
        R(r"Error: network (?P<net_named>[^\s.][^\n]{0,60}?) not found\."),
        R(r"(?P<net_none>Error: network  not found\.|Failed to initialize any NET plugin)"),
        R(
            r"(?P<force_merge_bad>TOPO/NET : (?:Could not force merge NICs|Only matched \d+ devices, \d+ requested "
            r"from) [^\n]{0,200}|Specified fused NIC [^\n]{0,200})"
        ),
    ),
    # the refusal without a setting named is NCCL's internal error, not a setting's; "Error: network" only as
    # NCCL's "Error: network <name> not found." (not "Error: network is unreachable")
    reject=R(
        r"o algorithm/protocol available for function \w+ with datatype \w+\.(?! NCCL_(?:ALGO|PROTO) was set)|"
        r"Error: network (?![^\n]{0,60} not found\.)|"
        # xml.cc's INFO for a node with more attributes than it keeps: the parse goes on
        r"XML Parse : Ignoring extra attributes"
    ),
    requires=("saw_nccl_failure",),
    absorbs=("nccl_system_error", "nccl_error"),
    # "%s set by environment to %s" is an INFO line every run that sets the variable prints, failing or not:
    # beside an NCCL failure it is a suspect, never the proof (a cluster's image sets NCCL_IB_HCA for every job)
    # NCCL's own refusal that names the setting is certain
    # socket.cc's address WARN only beside NCCL_COMM_ID named in the log (bootstrap.cc's refusal, its INFO line, an
    # export): alone it may be the RAS socket a healthy run survives
    confirm=lambda hits, ctx: any(
        h.facts.get("algo_refused")
        or _OWN_REFUSALS.intersection(h.facts)
        or (h.facts.get("addr_unreadable") and _comm_id_named(hits, ctx))
        for h in hits
    ),
    also=(
        Alternative(
            "hostname_resolution",
            "NCCL 2.24+'s RAS client socket, whose address (NCCL_RAS_ADDR, localhost:28028 by default) did not "
            "resolve: NCCL warns and goes on",
            "If NCCL_COMM_ID is not set, this WARN is the RAS socket's, and the run did not stop on it: make "
            "localhost resolve in the container (127.0.0.1 localhost in /etc/hosts), fix NCCL_RAS_ADDR, or set "
            "NCCL_RAS_ENABLE=0; the error that stopped the run is elsewhere in the log.",
            when=("addr_unreadable",),
            unless=("comm_id_bad",),
        ),
        Alternative(
            "network_interface",
            "no network interface NCCL's socket transport can use, so no plugin is left",
            "Name an interface every host has and shares: NCCL_SOCKET_IFNAME=<iface> (`ip -br addr` lists "
            "them; not lo or docker0), and check NCCL_DEBUG=INFO's 'NET/Socket' lines.",
            when=("net_none",),
        ),
        Alternative(
            "nccl_error",
            "an NCCL failure of its own, the setting only printed beside it",
            "Run once with the setting unset: if the failure stays, the setting is not the cause; read NCCL's "
            "own WARN lines above the error (NCCL_DEBUG=INFO) for the call that failed.",
        ),
    ),
    describe=_nccl_env,
)
