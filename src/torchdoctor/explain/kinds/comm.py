"""Kinds of failure in the communication layer: rendezvous and ports, network interfaces, NCCL itself.

The message texts are torch's (``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``, ``TCPStore``/
``socket.cpp``, ``distributed_c10d.py``, ``elastic/rendezvous``) and NCCL's (``src/misc/socket.cc``,
``src/transport/net_ib.cc``, ``src/include/shm.h``, ``src/init.cc``) as printed across torch 1.x-2.x.
`net.torch_errors` and `net.nccl_log` read their patterns and hints from here; `kinds/ranks.py` holds the kinds
about what the ranks did relative to each other (timeouts, divergence, a worker's exit).
"""

from __future__ import annotations

import re

from torchdoctor.explain.quote import quote
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Recogniser,
    first,
    merged,
    on_ranks,
)

R = re.compile

NCCL_DEBUG_HINT = (
    "NCCL_DEBUG=INFO torchdoctor net --nccl-debug   # shows each rank's transport and the failing call"
)
REACH_HINT = (
    "From every other host, check the port is reachable: nc -zv {host} {port}\n"
    "Open the port in the firewall, or pick a free one (MASTER_PORT / --rdzv-endpoint HOST:PORT).\n"
    "Use the interface the hosts share: export NCCL_SOCKET_IFNAME=<iface> GLOO_SOCKET_IFNAME=<iface>"
)
IFNAME_HINT = "NCCL picked no or the wrong interface: NCCL_SOCKET_IFNAME=<iface> (see `ip -br addr`)"
WATCHDOG_HINT = "torchdoctor launch --watchdog ...   # on the next hang, prints every rank's Python stack"

# (pattern, hint) for an `NCCL WARN` line: the first that matches gives its hint (`net.nccl_log` uses it)
NCCL_WARN_HINTS = (
    (
        r"peer access is not supported|failed to open CUDA IPC handle|P2P",
        "GPU peer-to-peer does not work between these GPUs: NCCL_P2P_DISABLE=1 (and check `nvidia-smi topo -m`; "
        "PCIe ACS or the IOMMU often blocks P2P)",
    ),
    (
        r"ibv_|IB|RoCE|mlx5",
        "InfiniBand/RoCE setup failed: try NCCL_IB_DISABLE=1 to confirm, then check `ulimit -l` (must be "
        "unlimited), `ibv_devinfo`, and NCCL_IB_HCA / NCCL_IB_GID_INDEX for RoCE",
    ),
    (
        r"has already checked in",
        "Two processes claimed the same rank: a stale job on the same MASTER_PORT, or the launcher and the "
        "script both spawning ranks; kill leftovers (`pgrep -af python`) and use a fresh MASTER_PORT",
    ),
    (
        r"Connect to .* failed|No route to host|Connection refused|connection abort",
        "A peer's NCCL port cannot be reached: open the firewall between the hosts (NCCL uses random ports) and "
        "pin the interface with NCCL_SOCKET_IFNAME=<iface>",
    ),
    (
        r"Connection closed by remote peer|recv failed|Socket recv",
        "The other side went away: look at the first failing rank's log; this one is a consequence",
    ),
    (r"Failed to execute operation", "A consequence of the connection failure above it"),
    (r"no socket interface|NCCL_SOCKET_IFNAME|Bootstrap", IFNAME_HINT),
    (
        r"Cuda failure|CUDA",
        "A CUDA error inside NCCL: check `nvidia-smi` for Xid errors and that the driver matches torch's CUDA",
    ),
)
NCCL_WARN_DEFAULT_HINT = "Rerun with NCCL_DEBUG_SUBSYS=ALL for the calls around it"

# The endpoint a c10d client was trying to reach, as torch names it (host as given, port)
UNREACHABLE_PATTERNS = (
    # [c10d] The client socket has timed out after 60s while trying to connect to (IP1, 2222).
    R(
        r"timed out after (?P<after>\d+m?s) while trying to connect to \((?P<host>[^,\s]{1,255}), (?P<port>\d+)\)"
    ),
    # ... timed out after 60s while trying to connect to 10.0.0.1:1234
    R(
        r"timed out after (?P<after>\d+m?s) while trying to connect to (?P<host>[^\s:()]{1,255}):(?P<port>\d+)"
    ),
    # failed to connect to any network address of (0.0.188.125, 59771)
    R(r"failed to connect to any network address of \((?P<host>[^,\s]{1,255}), (?P<port>\d+)\)"),
    # TCP client failed to connect/validate to host 10.231.0.1:29400 - retrying
    R(r"failed to connect/validate to host (?P<host>[^\s:]{1,255}):(?P<port>\d+)"),
    # NCCL's socketStartConnect: Connect to 10.0.0.2<52822> failed : No route to host
    R(r"Connect to (?P<host>[^\s<]{1,255})<(?P<port>\d+)> failed ?: (?P<reason>[^\n]{1,200})"),
)
# One resolved address that failed, with the reason:
# failed to connect to [::ffff:0.104.99.143]:47389 (errno: 110 - Connection timed out)
ADDRESS_FAILED = R(
    r"failed to connect to \[?(?P<host>[^\s\]]{1,255}?)\]?:(?P<port>\d+) \(errno: (?P<errno>\d+) - (?P<reason>[^)]{1,100})\)"
)
NCCL_ERROR = R(
    r"NCCL error in: (?P<where>\S{1,300}?), (?P<reason>[^,\n]{1,100}?)"
    r"(?: \(run with NCCL_DEBUG=\w+ for details\))?, NCCL version (?P<nccl_version>[\w.+]+)"
)
LAST_ERROR = R(r"Last error:[ \t]*\n(?P<last_error>[^\n]*)")
WATCHDOG = R(
    r"\[Rank (?P<rank>\d+)\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), "
    r"OpType=(?P<op>\w+),[^\n]{0,300}?Timeout\(ms\)=(?P<timeout_ms>\d+)\) ran for (?P<ran_ms>\d+) milliseconds"
)
LAST_WORK = R(
    r"last enqueued (?:NCCL )?work: (?P<last_enqueued>\d+), last completed (?:NCCL )?work: (?P<last_completed>\d+)"
)
RENDEZVOUS = R(r"(?P<error>Rendezvous(?:Connection|Timeout|Closed)?Error): (?P<message>[^\n\"]{1,300})")
PEER_CLOSED = R(r"Connection closed by (?:remote )?peer \[?(?P<host>[^\s\]<]{1,255})\]?[:<](?P<port>\d+)")
GLOO_TIMEOUT = R(r"Timed out waiting (?P<timeout_ms>\d+)ms for (?P<op>\w+) operation")
NO_INTERFACE = R(r"Unable to find address for: (?P<interface>\S{1,64})")


def bogus_host(host: str) -> bool:
    """A host torch produced from a misread host name (0.x.x.x, a bare number) or a netmask (255.x.x.x)."""
    host = host.removeprefix("::ffff:")
    return host.isdigit() or host.startswith("0.") or host.startswith("255.")


# -- rendezvous, ports, network -----------------------------------------------------------------------


def _rendezvous(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    in_use = next((h for h in hits if h.facts.get("in_use")), None)
    if in_use:
        port = first(hits, "port") or "29500 (the default)"
        port_number = str(port).split()[0]
        summary = f"address already in use: port {port} is taken on this machine" + on_ranks(hits)
        fix = (
            f"Another job (or a leftover of an earlier run) holds port {port_number}. Pick a free port:\n"
            f"torchrun --master_port={int(port_number) + 1 if port_number.isdigit() else 29501} ...   "
            "# or MASTER_PORT=..., --rdzv-endpoint HOST:PORT, torch.distributed.launch --master_port, "
            "accelerate launch --main_process_port (0: the next free one)\n"
            f"See who holds it: ss -ltnp | grep :{port_number}   (kill leftovers: pgrep -af python)"
        )
        return summary, fix
    facts = next((h.facts for h in hits if "host" in h.facts), {})
    host, port = facts.get("host", "").removeprefix("::ffff:") or None, facts.get("port")
    if host is None:
        error = first(hits, "error") or first(hits, "what") or "the rendezvous failed"
        message = first(hits, "message", "")
        summary = f"{error}: {message}".rstrip(": ") + on_ranks(hits)
        if first(hits, "joined"):
            summary = (
                f"only {first(hits, 'joined')} of {first(hits, 'expected')} processes reached the store: the "
                "others never started, or cannot reach MASTER_ADDR:MASTER_PORT"
            )
        elif first(hits, "worker_count"):
            summary += (
                f" ({first(hits, 'worker_count')} of {first(hits, 'world_size')} processes arrived at the "
                "barrier)"
            )
        fix = (
            "Every node must be started with the same --rdzv-endpoint (or MASTER_ADDR / MASTER_PORT), "
            "--rdzv-id and --nnodes, and the endpoint's host must be reachable from all of them.\n"
            "MASTER_ADDR must be the address of rank 0's host as the other hosts see it."
        )
        if first(hits, "missing_var"):
            var = first(hits, "missing_var")
            summary = f"environment variable {var} is not set for init_process_group(init_method='env://')"
            fix = (
                f"Start the script with torchrun (it sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), or set "
                f"{var} yourself: export MASTER_ADDR=<rank 0's host> MASTER_PORT=29500"
            )
        return summary, fix
    reason = facts.get("reason") or (f"timed out after {facts['after']}" if "after" in facts else "")
    summary = f"cannot reach the rendezvous store at {host}:{port}" + (
        f" ({reason.strip()})" if reason else ""
    )
    summary += on_ranks(hits)
    fix = (
        f"Every rank connects to MASTER_ADDR:MASTER_PORT (or --rdzv-endpoint): {host}:{port} must be rank 0's "
        "host as the other hosts see it, with rank 0 started and listening. An address copied from an "
        "example script is a common cause.\n" + REACH_HINT.format(host=host, port=port)
    )
    if bogus_host(host):
        summary += "; that address is not a host (a host name misread as a number, or a netmask)"
        fix = (
            "Set MASTER_ADDR (or --rdzv-endpoint / --master_addr) to the IP address of rank 0's host "
            "(`hostname -I` there), not a host name made of digits or a netmask.\n" + fix
        )
    return summary, fix


RENDEZVOUS_OR_PORT = Recogniser(
    # torch c10d socket.cpp / TCPStore.cpp, distributed/rendezvous.py, elastic/rendezvous/api.py
    kind="rendezvous_or_port",
    templates=(
        "system:address-already-in-use",
        "torch_cpp:the-client-socket-has-failed-to",
        "torch_cpp:the-client-socket-has-timed-out",
        "torch_cpp:tcp-client-failed-to-connect-validate",
        "torch:environment-variable-expected-but-not-set",
        "torch_cpp:timed-out-after-seconds-waiting-for",
        # accelerate/state.py: a multi-node launch without MASTER_ADDR
        "accelerate:tried-to-launch-on-distributed-with",
        # accelerate/commands/launch.py: its check that the main process port is free
        "accelerate:tried-to-launch-distributed-communication-on",
        # torch/distributed/elastic/rendezvous: c10d_rendezvous_backend.py, etcd_store.py, etcd_rendezvous.py
        "torch:the-connection-to-the-c10d-store",
        "torch:the-connection-to-etcd-has-failed",
        "torch:rendezvous-timeout-occurred-in-etcdrendezvoushandler",
        "torch_cpp:the-server-socket-has-failed-to-6",  # socket.cpp: no local address to listen on
    ),
    title="rendezvous failed",
    anchors=(
        "Address already in use",
        "address already in use",
        "EADDRINUSE",
        "but another process is utilizing it",
        "The client socket has failed to connect",
        "The client socket has timed out after",
        "failed to connect/validate to host",
        "RendezvousConnectionError",
        "RendezvousTimeoutError",
        "RendezvousClosedError",
        "expected, but not set",
        "connect() timed out",
        "clients joined",
        "env was not set, please try exporting rank 0's hostname",
        "The connection to the C10d store has failed",
        "The connection to etcd has failed",
        "Rendezvous timeout occurred in EtcdRendezvousHandler",
        "has failed to listen on any local network address",
    ),
    # a store that cannot be reached or timed out is what every rank sees when rank 0 died first, a wrong
    # MASTER_ADDR or a firewall: only "likely" a rendezvous problem; a port in use, a closed rendezvous are certain
    generic=(
        "The client socket has failed to connect",
        "The client socket has timed out after",
        "failed to connect/validate to host",
        "RendezvousConnectionError",
        "RendezvousTimeoutError",
        "connect() timed out",
        # a missing MASTER_ADDR is a plain `python train.py` as often as a scheduler without a launcher; a closed
        # rendezvous and "N/M clients joined" are what the other nodes print when one of them failed or ended
        # first (its agent closes the rendezvous; its ranks never reach the store)
        "expected, but not set",
        "RendezvousClosedError",
        "clients joined",
        # elastic's c10d/etcd backends and the store's server socket: what a wrong endpoint, a firewall, a port
        # in use and a rank 0 that died first all print
        "The connection to the C10d store has failed",
        "The connection to etcd has failed",
        "Rendezvous timeout occurred in EtcdRendezvousHandler",
        "has failed to listen on any local network address",
    ),
    also=(
        Alternative(
            "not_launched_distributed",
            "a script written for a distributed launch run as a plain process",
            "Start it with torchrun --nproc_per_node=N (which sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), "
            "or skip init_process_group when WORLD_SIZE is not in os.environ to run one process.",
            when=("missing_var",),
        ),
        Alternative(
            "peer_closed",
            "another node that failed or ended first (its agent closes the rendezvous; its ranks never reach "
            "the store)",
            "Read the other nodes' logs for the first error: the rendezvous closes when one node's agent stops "
            "(its workers failed past --max-restarts, or it finished), and a node that crashed never joins.",
            when=("rdzv_closed", "joined"),
        ),
    ),
    # a warning torch prints on hosts without IPv6 before it tries IPv4: not a failure
    reject=R(r"errno: 97 - Address family not supported"),
    facts=(
        R(r"(?P<in_use>[Aa]ddress already in use|EADDRINUSE|another process is utilizing it)"),
        R(r"communication on port `(?P<port>\d+)`"),
        R(r"port: (?P<port>\d+), useIpv6"),
        R(r"failed to bind to \[?[^\s\]]{0,255}\]?:(?P<port>\d+)"),
        *UNREACHABLE_PATTERNS[:4],
        ADDRESS_FAILED,
        RENDEZVOUS,
        R(r"environment variable (?P<missing_var>\w+) expected, but not set"),
        R(r"but `?(?P<missing_var>MASTER_ADDR)`? env was not set"),
        R(r"(?P<what>waiting for clients\. (?P<joined>\d+)/(?P<expected>\d+) clients joined)"),
        R(r"(?P<rdzv_closed>RendezvousClosedError)"),
        R(r"world_size=(?P<world_size>\d+), worker_count=(?P<worker_count>\d+)"),
    ),
    describe=_rendezvous,
)


def _same_rank(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    summary = (
        f"two processes claimed rank {facts.get('dup_rank', '?')} of {facts.get('dup_world', '?')}: NCCL's "
        "bootstrap saw that rank check in twice" + on_ranks(hits)
    )
    fix = (
        "Every process must have its own rank. Most often two nodes were started with the same --node_rank: "
        "give each node its own, 0 to nnodes-1 (SLURM: --node_rank=$SLURM_NODEID; or let the c10d rendezvous "
        "number them: --rdzv-backend=c10d --rdzv-endpoint=HOST:PORT without --node_rank). Otherwise a stale "
        "job still runs on the same MASTER_PORT (kill it: `pgrep -af python`; use a fresh port), or both the "
        "launcher and the script spawn ranks (one of torchrun / mp.spawn, not both)."
    )
    return summary, fix


DUPLICATE_NODE_RANK = Recogniser(
    # NCCL src/bootstrap.cc (bootstrapRoot): "Bootstrap Root : rank %d of %d ranks has already checked in"
    kind="duplicate_node_rank",
    templates=("nccl:bootstrap-root-rank-of-ranks-has",),
    title="two processes with the same rank",
    anchors=("has already checked in",),
    match=R(r"rank (?P<dup_rank>\d+) of (?P<dup_world>\d+) ranks has already checked in"),
    # two processes with one rank, for certain; but which of three ways (the same --node_rank on two nodes, a
    # stale job on the port, a launcher and a script both spawning) the line cannot say: likely
    generic=("has already checked in",),
    absorbs=("nccl_error", "nccl_system_error", "nccl_watchdog_timeout", "collective_timeout"),
    describe=_same_rank,
)


def _network(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    ifname = ctx.facts.get("socket_ifname")
    set_to = f" (NCCL_SOCKET_IFNAME is set to {ifname})" if ifname else ""
    if facts.get("incompatible_nics"):
        return (
            "NCCL paired network adapters of different kinds across the hosts: "
            + quote(facts["incompatible_nics"].strip())
            + on_ranks(hits),
            "The NICs NCCL chose on the two hosts do not share a link layer (InfiniBand against RoCE/Ethernet, or "
            "ports of different speeds). Select the same kind on every host: NCCL_IB_HCA=<the IB (or RoCE) "
            "devices, e.g. mlx5_0,mlx5_1> (`ibv_devinfo` shows each port's link_layer), or leave the odd ones out "
            "with NCCL_IB_HCA=^mlx5_2.",
        )
    if "ib_status" in facts:
        status = int(facts["ib_status"])
        meaning = {
            12: "transport retry counter exceeded: the peer never acknowledged (a timeout)",
            13: "RNR retry counter exceeded",
            4: "local protection error (memory registration; GPUDirect RDMA / nvidia-peermem)",
            5: "work request flushed (a consequence of an earlier error)",
        }.get(status, "see ibv_wc_status")
        peer = f" from {facts['ib_peer']}" if facts.get("ib_peer") else ""
        summary = f"InfiniBand/RoCE completion error {status}{peer}: {meaning}" + on_ranks(hits)
        fix = (
            "An RDMA transfer between two hosts failed. If it is the first one (the bootstrap over TCP worked), "
            "the NICs cannot talk over RoCE/IB with these settings: on RoCE pick the RoCE v2 GID of the NIC on "
            "every host, NCCL_IB_GID_INDEX=3 (list them with `show_gids`), and the same NCCL_IB_TC / traffic "
            "class. If the run had been training, it is a faulty link (cable, switch port, HCA: `ibstat` "
            "shows the port State, `perfquery` its error counters) or the peer process died first (read its "
            "log).\n"
            "NCCL_IB_DISABLE=1 confirms it is the fabric (NCCL falls back to sockets); test the link with "
            "`ib_write_bw` between the two hosts."
        )
        return summary, fix
    if "ibv_call" in facts:
        summary = f"InfiniBand verbs call {facts['ibv_call']} failed" + on_ranks(hits)
        fix = (
            "Usually the locked-memory limit: `ulimit -l` must be unlimited (in Docker: --ulimit memlock=-1; "
            "in SLURM: PropagateResourceLimitsExcept=MEMLOCK), or the device is not usable in this "
            "container (--device /dev/infiniband, --cap-add IPC_LOCK).\n"
            "NCCL_IB_DISABLE=1 confirms it (NCCL falls back to sockets); NCCL_IB_HCA=<nic> picks the NIC."
        )
        return summary, fix
    if "gloo_host" in facts:
        host = facts["gloo_host"]
        summary = (
            f"gloo cannot connect to {host}:{facts['gloo_port']} ({facts['gloo_reason'].strip()})"
            + on_ranks(hits)
        )
        loopback = host.startswith("127.") or host in ("localhost", "::1")
        fix = (
            "This host announced a loopback address to the others: its host name resolves to "
            f"{host} (/etc/hosts). "
            if loopback
            else "A peer's gloo port cannot be reached. "
        ) + (
            "Pin the interface the hosts share:\n"
            "export GLOO_SOCKET_IFNAME=<iface> NCCL_SOCKET_IFNAME=<iface>   # see `ip -br addr`\n"
            "and open the firewall between the hosts (gloo and NCCL use random ports)."
        )
        return summary, fix
    if "gloo_mesh" in facts and "gloo_host" not in facts:
        return (
            f"gloo could not connect its ranks to each other ({quote(facts['gloo_mesh'].strip())})"
            + on_ranks(hits),
            "Each rank announces the address its host name resolves to, and gloo connects every pair of ranks "
            "on random ports: a host name that resolves to 127.0.1.1 (/etc/hosts) or to an interface the other "
            "hosts cannot reach, or a firewall, breaks it. Pin the interface the hosts share:\n"
            "export GLOO_SOCKET_IFNAME=<iface> NCCL_SOCKET_IFNAME=<iface>   # see `ip -br addr`\n"
            "and open the firewall between the hosts.",
        )
    if "connect_retries" in facts and "connect_host" not in facts:
        summary = f"NCCL gave up connecting to a peer ({facts['connect_retries'].strip()})" + on_ranks(hits)
        fix = (
            "A peer's NCCL address never answered: NCCL picked an interface the hosts do not share (a docker "
            "bridge, a virtual or a management NIC), or a firewall drops its ports, or the peer died first. "
            "Pin the interface the hosts share: export NCCL_SOCKET_IFNAME=<iface> (see `ip -br addr`; "
            "^docker,lo excludes), open the firewall between the hosts (NCCL uses random ports), and read the "
            "peer's own log for an earlier failure.\n" + NCCL_DEBUG_HINT
        )
        return summary, fix
    if "connect_host" in facts:
        summary = (
            f"NCCL cannot connect to {facts['connect_host']}:{facts['connect_port']} "
            f"({facts.get('connect_reason', '').strip()})" + on_ranks(hits)
        )
        fix = (
            "A peer's NCCL port cannot be reached: open the firewall between the hosts (NCCL uses random "
            "ports) and pin the interface the hosts share: export NCCL_SOCKET_IFNAME=<iface> "
            "(see `ip -br addr`; e.g. NCCL_SOCKET_IFNAME=^docker,lo to exclude)\n" + NCCL_DEBUG_HINT
        )
        return summary, fix
    what = facts.get("what") or "NCCL found no usable network interface"
    if facts.get("family"):
        what = (
            f"NCCL tried to connect to an address that is neither IPv4 nor IPv6 (family {facts['family']}): "
            "it found no usable interface"
        )
    interface = facts.get("interface")
    summary = (
        f"no network interface {interface!r} on this host" if interface else f"{what.strip()}{set_to}"
    ) + on_ranks(hits)
    fix = (
        f"Name an interface this host has and that reaches the other hosts{set_to}: see `ip -br addr`, then\n"
        "export NCCL_SOCKET_IFNAME=<iface> GLOO_SOCKET_IFNAME=<iface>   # or ^docker,lo to exclude some"
    )
    return summary, fix


NETWORK_INTERFACE = Recogniser(
    # NCCL src/misc/socket.cc (ncclSocketInit, socketStartConnect), src/bootstrap.cc, transport/net_ib.cc,
    # misc/ibvwrap.cc; gloo's "Unable to find address for"
    kind="network_interface",
    templates=(
        "nccl:bootstrap-no-socket-interface-found",
        "nccl:ncclsocketinit-connecting-to-address-with-family",
        "nccl:net-ib-gin-got-completion-from",
        "nccl:call-to-ibv-poll-cq-returned",
        "nccl:ncclossocketpollconnect-to-failed-with-error",
        "nccl:net-socket-no-usable-listening-interface",
        "nccl:call-to-connect-failed",  # include/socket.h up to 2.10: SYSCHECK(connect(...), "connect")
        # transport/net_ib.cc: NICs of different link types (InfiniBand against RoCE) paired across the hosts
        "nccl:net-ib-attempted-to-connect-incompatible",
        "nccl:net-ib-attempted-to-connect-incompatible-2",
        # misc/socket.cc, transport/net_socket.cc: no interface at all, or none on the peer's subnet
        "nccl:net-socket-no-interface-found",
        "nccl:net-no-interface-found-in-the",
        # transport/net_ib.cc, net_ib/connect.cc: NICs of different link layers paired or merged across hosts
        "nccl:net-ib-remote-device-is-incompatible",
        "nccl:net-ib-remote-device-is-incompatible-2",
        "nccl:net-ib-remote-device-is-incompatible-3",
        "nccl:net-ib-attempted-to-merge-incompatible",
        "nccl:net-ib-attempted-to-merge-incompatible-2",
        "nccl:net-ib-can-connect-net-devices",
        "nccl:net-ib-can-merge-net-devices",
        "nccl:net-ib-trying-to-merge-multiple-2",
        # misc/socket.cc: a peer's address that never answered (a firewall, the wrong interface, a dead peer)
        "nccl:socketstartconnect-exceeded-retries",
        "nccl:socketstartconnect-exceeded-timeouts",
        "nccl:socketpollconnect-exceeded-retries",
        "nccl:socketpollconnect-exceeded-timeouts",
        "nccl:connect-returned-exceeded-error-retry-count",
        # torch/csrc/distributed/c10d/ProcessGroupGloo.cpp: gloo could not connect its full mesh of pairs
        "torch_cpp:gloo-connectfullmesh-failed-with",
    ),
    title="network interface problem",
    anchors=(
        "no socket interface found",
        "Unable to find address for",
        "is neither AF_INET",
        "Got completion",
        "Call to ibv_",
        "Connect to",
        "No usable listening interface found",
        "gloo/transport/tcp/pair.cc",
        "Call to connect failed",
        "Attempted to connect incompatible devices",
        "Socket : no interface found",
        "No interface found in the same subnet as remote address",
        "device is incompatible with the local",
        "Attempted to merge incompatible devices",
        "net devices with different link_layer",
        "together with different link_layer properties",
        "Connect: exceeded retries",
        "Connect: exceeded timeouts",
        "exceeded error retry count",
        "Gloo connectFullMesh failed with",
    ),
    match=R(
        r"no socket interface found|Unable to find address for|is neither AF_INET|Got completion|Call to ibv_|"
        r"Call to connect failed|Attempted to connect incompatible devices|Socket : no interface found|"
        r"No interface found in the same subnet|device is incompatible with the local|Attempted to merge incompatible|"
        r"net devices with different link_layer|together with different link_layer|"
        r"Gloo connectFullMesh failed with|socket(?:Start|Poll)Connect: exceeded (?:retries|timeouts)|connect returned [^\n]{0,80}exceeded error retry|"
        r"Connect to [^\s<]{1,255}<\d+> failed|No usable listening interface found|"
        r"pair\.cc:\d+\] connect\s{1,3}\[?[^\s\]]{1,255}\]?:\d+: "
    ),
    facts=(
        R(r"(?P<what>Bootstrap : no socket interface found|No usable listening interface found)"),
        R(r"(?P<incompatible_nics>Attempted to connect incompatible devices: [^\n]{1,200})"),
        R(
            r"(?P<incompatible_nics>(?:Remote \S{1,40} device is incompatible with the local|Attempted to merge "
            r"incompatible devices|Can't (?:connect|merge) net devices with different link_layer|Trying to merge "
            r"multiple devices together with different link_layer)[^\n]{0,200})"
        ),
        R(
            r"(?P<what>NET/Socket : no interface found|No interface found in the same subnet as remote address[^\n]{0,80})"
        ),
        R(r"(?P<gloo_mesh>Gloo connectFullMesh failed with[^\n]{0,200})"),
        # the connect retries NCCL gives up after: the peer's address never answered
        R(
            r"(?P<connect_retries>socket(?:Start|Poll)Connect: exceeded (?:retries|timeouts) \(\d+\)|connect "
            r"returned [^\n]{0,80}exceeded error retry count[^\n]{0,20})"
        ),
        NO_INTERFACE,
        R(r"connecting to address\s+with family (?P<family>\d+) is neither AF_INET"),
        R(r"Got completion (?:from peer (?P<ib_peer>\S{1,100}) )?with (?:error |status=)(?P<ib_status>\d+)"),
        R(r"Call to (?P<ibv_call>ibv_\w+) failed"),
        R(
            r"\] connect\s{1,3}\[?(?P<gloo_host>[^\s\]]{1,255})\]?:(?P<gloo_port>\d+): (?P<gloo_reason>[^\n]{1,100})"
        ),
        R(
            r"Connect to (?P<connect_host>[^\s<]{1,255})<(?P<connect_port>\d+)> failed ?: (?P<connect_reason>[^\n]{1,200})"
        ),
        R(r"Call to connect failed ?: (?P<connect_reason>[^\n]{1,200})"),
    ),
    span=1,  # gloo prints "connect" and the address on two lines
    # "Connection refused" is what any dead or unready peer gets, and an IB completion error (status 12, a
    # timeout) what RoCE settings the hosts do not share, a faulty link and a peer that died first all print:
    # only likely an interface / firewall problem. The rest (no interface found, a verbs call) is certain.
    # NCCL giving up its connect retries is the same: a peer that never answered, for whatever reason.
    confirm=lambda hits, ctx: any(
        not re.search(r"refused|reset", h.facts.get("gloo_reason", "") + h.facts.get("connect_reason", ""))
        and "ib_status" not in h.facts
        and "connect_retries" not in h.facts
        and "gloo_mesh" not in h.facts
        for h in hits
    ),
    absorbs=("nccl_error", "nccl_system_error"),
    also=(
        Alternative(
            "network_fault",
            "a faulty InfiniBand/RoCE link or port between the hosts (or a peer that died first)",
            "Test the link on its own: ib_write_bw between the two hosts, `ibstat` (State: Active, no "
            "rising error counters: perfquery), and the other host's log for a failure before this one; "
            "NCCL_IB_DISABLE=1 confirms it is the IB path.",
            when=("ib_status",),
        ),
        Alternative(
            "rendezvous_or_port",
            "a firewall closing the ports the ranks connect on (or a peer not listening yet)",
            "From the other host: nc -zv <host> <port>. gloo and NCCL connect on random ports besides "
            "MASTER_PORT: open the firewall between the hosts for them (or allow the whole subnet), and check "
            "the peer was up and listening when this one connected.",
            when=("gloo_reason", "connect_reason", "connect_retries", "gloo_mesh"),
        ),
    ),
    describe=_network,
)


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
    summary += on_ranks(hits)
    if "ermission denied" in facts.get("shm_error", ""):
        fix = (
            "NCCL cannot create its shared-memory segment in /dev/shm: permission denied for this user.\n"
            "Give /dev/shm its usual permissions: sudo chmod 1777 /dev/shm (world-writable, sticky); in a "
            "container, run it with --ipc=host or mount a writable /dev/shm."
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


NCCL_SYSTEM_ERROR = Recogniser(
    # NCCL src/include/shm.h / misc/shmutils.cc, ncclSystemError (ncclResult 2); torch's DistBackendError text
    kind="nccl_system_error",
    templates=(
        "nccl:unhandled-system-error-run-with-nccl",
        # NCCL's shared memory in /dev/shm, as 2.12+ words its failures (misc/shmutils.cc, os/linux.cc)
        "nccl:error-failed-to-extend-to-bytes-2",
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
    ),
    # NCCL returns ncclSystemError for any failed system call (a socket too): certain only with the shm line
    generic=("unhandled system error", "ncclSystemError"),
    span=2,
    facts=(
        R(
            r"(?P<shm_error>(?:Call to )?shm_open failed ?: [^\n]{1,100}|Error while (?:creating|attaching to) shared memory "
            r"segment [^\n(]{1,200}|"
            r"failed to extend [^\n]{1,200}|failed to create shared memory file [^\n]{1,200}|"
            r"Call to (?:posix_fallocate|mmap) failed ?: [^\n]{1,100})"
        ),
        R(r"(?:\(size |failed to extend \S{1,200} to )(?P<shm_size>\d+)"),
        NCCL_ERROR,
        R(r"NCCL version (?P<nccl_version>\d[\w.+]*)"),
        LAST_ERROR,
    ),
    absorbs=("nccl_error",),
    describe=_system_error,
)


def _nccl_error(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    reason = facts.get("reason", facts.get("bare", "error")).strip()
    version = facts.get("nccl_version")
    last = facts.get("last_error", "").strip()
    summary = (
        f"NCCL {version + ': ' if version else ''}{reason}" + (f" — {last}" if last else "") + on_ranks(hits)
    )
    lowered = f"{reason} {last}".lower()
    if "remote process exited" in lowered or "network error" in lowered:
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


NCCL_ERROR_OTHER = Recogniser(
    # torch c10d NCCLUtils.hpp C10D_NCCL_CHECK: "NCCL error in: <file>:<line>, <reason>, NCCL version <v>"
    kind="nccl_error",
    templates=(
        "torch_native:nccl-error-in",
        "nccl:unhandled-cuda-error-2",
        # src/proxy.cc: a local rank's proxy thread (shared memory, the network plugin) that failed or went away
        "nccl:proxy-call-to-rank-failed",
        "nccl:proxy-service-failed-to-execute-operation",
    ),
    title="NCCL error",
    anchors=(
        "NCCL error in:",
        "NCCL Error ",
        "unhandled cuda error",
        "Proxy Call to rank",
        "Failed to execute operation",
    ),
    # an NCCL error with no more specific kind recognised is only what a cause elsewhere led to, or one of
    # several (a version's bug, the fabric, a peer): never certain
    generic=(
        "NCCL error in:",
        "NCCL Error ",
        "unhandled cuda error",
        "Proxy Call to rank",
        "Failed to execute operation",
    ),
    match=R(
        r"NCCL error in: [^\n]{1,300}NCCL version|NCCL Error \d+: |(?P<bare>unhandled cuda error)|"
        r"Proxy Call to rank \d+ failed|Failed to execute operation \w+ from rank"
    ),
    span=3,
    facts=(
        NCCL_ERROR,
        R(r"NCCL Error \d+: (?P<reason>[^\n]{1,100})"),
        LAST_ERROR,
        R(
            r"(?P<proxy>(?P<reason>Proxy Call to rank \d+ failed \([^)\n]{1,40}\)|Failed to execute operation \w+ "
            r"from rank \d+, retcode \d+))"
        ),
    ),
    also=(
        Alternative(
            "nccl_system_error",
            "the shared memory or IPC the ranks of one host share (a container's small /dev/shm), or a local "
            "rank that died first",
            "NCCL's proxy threads talk to the host's other ranks through /dev/shm and a UNIX socket: run the "
            "container with --ipc=host (or --shm-size=16g), check `df -h /dev/shm`, and read the other local "
            "ranks' output for an earlier failure.",
            when=("proxy",),
        ),
        Alternative(
            "nccl_bug_upgrade",
            "a bug of the NCCL release in use, fixed in a later one",
            "Try a newer NCCL: upgrade torch, which brings its own (pip install -U torch; see "
            "python -c 'import torch; print(torch.cuda.nccl.version())'), or install a newer nvidia-nccl-cu12 "
            "wheel; NCCL's release notes list what each release fixed (old releases, those of torch 1.x, had "
            "CUDA-error bugs fixed later).",
        ),
    ),
    describe=_nccl_error,
)


def _network_fault(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    event = first(hits, "ib_event", "an error event")
    return (
        f"the InfiniBand/RoCE adapter reported {event}: a fault of the link, port or adapter"
        + on_ranks(hits),
        "A hardware or fabric fault, not a setting of the job: check the port on that host (`ibstat`: State "
        "Active, Physical state LinkUp; `perfquery` for symbol/link-down counters; `dmesg` for mlx5 errors), "
        "reseat or replace the cable/port, or leave the host out of the job. Until then NCCL_IB_DISABLE=1 runs "
        "over TCP sockets (slower) to confirm the IB path is the problem.",
    )


NETWORK_FAULT = Recogniser(
    # NCCL src/transport/net_ib.cc, the thread that reads the adapter's asynchronous events:
    # WARN("NET/IB : Got async event : %s", ibv_event_type_str(event)) — every event but "communication
    # established" is printed
    kind="network_fault",
    title="faulty InfiniBand/RoCE link",
    anchors=("Got async event", "async fatal event", "Got async error event"),
    templates=(
        "nccl:net-ib-got-async-error-event",  # transport/net_ib.cc, newer releases: the events it deems errors
        "nccl:net-ib-got-async-event",
        "nccl:net-ib-got-async-event-2",
        # transport/net_ib.cc, newer releases: the fatal events named as such (the port, a CQ, a QP, the SRQ)
        "nccl:net-ib-async-fatal-event",
        "nccl:net-ib-async-fatal-event-on",
        "nccl:net-ib-async-fatal-event-on-2",
        "nccl:net-ib-async-fatal-event-on-3",
        "nccl:net-ib-async-fatal-event-on-4",
        "nccl:net-ib-async-fatal-event-on-5",
    ),
    facts=(
        R(r"Got async event : (?P<ib_event>[^\n]{1,80})"),
        R(r"Got async error event: (?P<ib_event>[^\n]{1,80})"),
        R(r"(?P<ib_fatal>Got async error event)"),  # NCCL's own class: not the non-fatal events
        R(r"async fatal event(?: on (?:CQ|QP|SRQ)[^:\n]{0,100})?: (?P<ib_event>[^\n]{1,80})"),
        R(r"(?P<ib_event>async fatal event(?: on (?:CQ|QP|SRQ))?)"),
        R(r"(?P<ib_fatal>async fatal event)"),  # NCCL itself calls it fatal, whatever the event's own name
    ),
    # port error, a fatal/catastrophic error and a lost link name a fault; other events (a GID table change,
    # a port coming back) are only a sign of one
    confirm=lambda hits, ctx: any(
        "ib_fatal" in h.facts
        or re.search(r"port error|fatal|catastrophic|link|death", h.facts.get("ib_event", ""), re.IGNORECASE)
        for h in hits
    ),
    absorbs=("nccl_error", "nccl_system_error", "network_interface"),
    describe=_network_fault,
)


def _duplicate_gpu(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = next((h.facts for h in hits if "detected" in h.facts), {})
    summary = (
        f"duplicate GPU: rank {facts.get('rank_a', '?')} and rank {facts.get('rank_b', '?')} both on CUDA "
        f"device {facts.get('bus_id', '?')} (bus id)"
        if facts.get("rank_a")
        else "duplicate GPU: two ranks of one communicator use the same GPU"
    )
    fix = (
        "Two processes use the same GPU. Each must pick its own before init_process_group and before "
        "building the model:\n"
        "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))   # and device = f'cuda:{LOCAL_RANK}'\n"
        "Remove any hard-coded device (cuda:0, a default GPU id, CUDA_VISIBLE_DEVICES set inside the "
        "script), and start at most one process per GPU (--nproc_per_node)."
    )
    return summary, fix


def _gpu_selection(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    pick = (
        "Make each rank pick its own GPU from LOCAL_RANK (not RANK, which counts across hosts) before "
        "init_process_group:\n"
        "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n"
        "Start at most one process per GPU (--nproc_per_node = the number of GPUs on that host), and do not set "
        "CUDA_VISIBLE_DEVICES to one GPU for every rank of a host; with one GPU per host, LOCAL_RANK is 0 on each."
    )
    odd = next((h.facts for h in hits if "odd_gpu" in h.facts), None)
    if odd is not None:
        return (
            f"the GPUs of this run are not alike (DataParallel warns GPU {odd['odd_gpu']} has less than 75% of "
            f"the memory or cores of GPU {odd['big_gpu']}) and NCCL failed right after: GPUs of different "
            "models in one job" + on_ranks(hits),
            f"Leave the odd GPU out so that the job runs on GPUs of one model: CUDA_VISIBLE_DEVICES=<the other "
            f"GPUs' indices, without {odd['odd_gpu']}> python train.py (or nn.DataParallel(model, "
            "device_ids=[...]) without it); nvidia-smi -L lists the models. NCCL (which DataParallel uses to "
            "broadcast the weights) may fail between GPUs of different architectures, and the slowest one sets "
            "every step's pace anyway.",
        )
    fsdp = next((h.facts for h in hits if "fsdp_device" in h.facts), None)
    if fsdp is not None:
        return (
            f"FSDP's device_id ({fsdp['fsdp_id']}) is not the rank's current GPU ({fsdp['fsdp_device']})"
            + on_ranks(hits),
            pick + "\nThen pass that same device to FSDP: device_id=torch.cuda.current_device().",
        )
    if any("lightning_indices" in h.facts for h in hits):
        return (
            "Lightning's devices were chosen by GPU index, and those indices are not the processes' local ranks"
            + on_ranks(hits),
            "Under a launcher (torchrun, srun) each process's GPU is its LOCAL_RANK: pick the GPUs with "
            "CUDA_VISIBLE_DEVICES=2,3 (they become 0,1) and pass Trainer(devices=2), not devices=[2, 3].",
        )
    found = next((h.facts for h in hits if "buffer_device" in h.facts), None)
    if found is not None:
        return (
            f"the {found['buffer']} of a collective is on GPU {found['buffer_device']}, the rank's NCCL "
            f"communicator on GPU {found['nccl_device']}: the rank did not make its own GPU current"
            + on_ranks(hits),
            pick + "\nCreate the tensors on that device (torch.device('cuda', LOCAL_RANK)), not on cuda:0.",
        )
    if any("busy" in h.facts for h in hits):
        return (
            "the GPU this process chose is busy or unavailable: another process holds it (a GPU in "
            "exclusive-process mode, two ranks on one GPU, another job) or it is not usable" + on_ranks(hits),
            pick + "\nCheck who holds the GPUs and their compute mode: nvidia-smi; nvidia-smi -q | grep "
            "'Compute Mode' (Exclusive_Process allows one process per GPU; a scheduler that hands out GPUs in "
            "that mode also sets CUDA_VISIBLE_DEVICES itself: do not overwrite it in the script). Stop leftover "
            "processes of an earlier run. If no other process holds it, the GPU itself may be gone: "
            "dmesg | grep -i xid (79: fallen off the bus) — then the host needs a GPU reset or a reboot.",
        )
    return (
        "NCCL invalid usage: most often the ranks picked their GPUs wrongly (every rank on cuda:0, the device "
        "taken from RANK instead of LOCAL_RANK)" + on_ranks(hits),
        pick
        + "\nIf the ranks do have GPUs of their own, rerun with NCCL_DEBUG=WARN: the WARN line before the "
        "error names the misuse.",
    )


GPU_SELECTION = Recogniser(
    # NCCL's ncclInvalidUsage ("invalid usage (run with NCCL_DEBUG=WARN for details)") is any misuse of its API;
    # at start-up it is nearly always the ranks' choice of GPU. cudaErrorDevicesUnavailable (46): the GPU is
    # held by another process in exclusive mode, or is unusable.
    kind="gpu_selection",
    title="ranks on the wrong GPUs",
    anchors=(
        "invalid usage",
        "busy or unavailable",
        "There is an imbalance between your GPUs",
        "mismatchs with NCCL device",
        "Inconsistent compute device and `device_id`",
        "don't match the local rank values of processes",
    ),
    templates=(
        "nccl:invalid-usage-run-with-nccl-debug",
        "cuda_runtime:devices-unavailable",
        # NCCL src/enqueue.cc (ArgsCheck): a buffer on another GPU than the communicator's: the rank did not
        # make its own GPU current (torch.cuda.set_device) before the collective
        "nccl:allocated-on-device-mismatchs-with-nccl",
        # torch/distributed/fsdp/_init_utils.py: FSDP's device_id against the rank's current device
        "torch:inconsistent-compute-device-and-device-id",
        # lightning/fabric/strategies/ddp.py: devices chosen by index that are not the local ranks' GPUs
        "lightning:the-selected-device-indices-don-match",
        # torch/nn/parallel/data_parallel.py (_check_balance): GPUs of unequal size in one DataParallel, here
        # only when an NCCL failure follows within the lines after it
        "torch_native:dataparallel-imbalance-between-gpus",
    ),
    match=R(
        r"(?P<invalid_usage>NCCL[^\n]{0,300}invalid usage|ncclInvalidUsage)|(?P<busy>busy or unavailable)|"
        r"(?P<buffer>\w+) allocated on device (?P<buffer_device>\d+) mismatchs with NCCL device (?P<nccl_device>\d+)|"
        r"Inconsistent compute device and `device_id` on rank \d+: (?P<fsdp_device>[\w:]{1,20}) vs "
        r"(?P<fsdp_id>[\w:]{1,20})|"
        r"(?P<lightning_indices>The selected device indices [^\n]{0,60} don't match the local rank values)|"
        r"There is an imbalance between your GPUs\. You may want to exclude GPU (?P<odd_gpu>\d+) which\s+has "
        r"less than 75% of the memory or cores of GPU (?P<big_gpu>\d+)\.(?=[\s\S]{0,900}?(?:NCCL|nccl)\w* ?"
        r"(?:[Ee]rror|WARN|[Ii]nvalid|[Uu]nhandled))"
    ),
    span=8,
    # both messages name what went wrong, not which choice caused it: only likely
    generic=("invalid usage", "busy or unavailable", "There is an imbalance between your GPUs"),
    # NCCL's init returns ncclInvalidUsage after its "Duplicate GPU detected" WARN, which only NCCL_DEBUG=WARN
    # shows: an "invalid usage" alone may be two ranks on one GPU
    also=(
        Alternative(
            "duplicate_gpu",
            "two ranks on one GPU (more processes on a host than it has GPUs)",
            "Start one process per GPU: --nproc_per_node (torchrun) or --num_processes (accelerate) = the number "
            "of GPUs of the host (nvidia-smi -L), and set each rank's GPU from LOCAL_RANK.",
            when=("invalid_usage",),
        ),
        # torch/serialization.py restores a CUDA tensor inside `with torch.cuda.device(saved index)`: every rank
        # loading a checkpoint saved from cuda:0 switches to GPU 0, which an exclusive-mode GPU refuses
        Alternative(
            "checkpoint_device_map",
            "every rank restoring a checkpoint onto the GPU it was saved from (torch.load without map_location)",
            "Load checkpoints onto the rank's own GPU or the CPU: torch.load(path, map_location=f'cuda:{LOCAL_RANK}') "
            "(or map_location='cpu', then model.to(device)).",
            when=("busy",),
        ),
    ),
    absorbs=("nccl_error", "nccl_system_error"),
    describe=_gpu_selection,
)


DUPLICATE_GPU = Recogniser(
    # NCCL src/init.cc: "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx"
    kind="duplicate_gpu",
    title="two ranks on one GPU",
    anchors=("Duplicate GPU detected", "Multiple Ranks are using the same GPU"),
    templates=(
        "nccl:duplicate-gpu-detected-rank-and-rank",
        # NCCL 2.30+ src/init.cc words the same check this way
        "nccl:multiple-ranks-are-using-the-same",
    ),
    match=R(r"Duplicate GPU detected|Multiple Ranks are using the same GPU"),
    facts=(
        R(r"rank (?P<rank_a>\d+) and rank (?P<rank_b>\d+) both on CUDA device (?P<bus_id>\w+)"),
        R(r"(?P<detected>Duplicate GPU detected|Multiple Ranks are using the same GPU)"),
    ),
    absorbs=("nccl_error", "nccl_system_error", "gpu_selection"),
    describe=_duplicate_gpu,
)


def _backend(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("no_gpus"):
        return (
            "the NCCL backend needs GPUs, and this process sees none",
            "Use backend='gloo' on CPU, or make the GPUs visible (CUDA_VISIBLE_DEVICES, --gpus all in Docker).",
        )
    if facts.get("rdzv_scheme") or facts.get("no_distributed"):
        what = (
            f"no rendezvous handler for {facts['rdzv_scheme']}://"
            if facts.get("rdzv_scheme")
            else "this torch was built without torch.distributed"
        )
        return (
            f"{what}: this torch build lacks part of torch.distributed (a Windows or macOS build, or a custom one)",
            "Check with python -c 'import torch.distributed as d; print(d.is_available())'. On Windows torch "
            "has only gloo and the file:// / env:// rendezvous (no tcp:// store in old versions, no NCCL): use "
            "init_method='env://' (or file://) with backend='gloo', or train on Linux (WSL2 works), where the "
            "official torch wheels have NCCL and every rendezvous.",
        )
    backend = facts.get("backend", "NCCL")
    summary = f"this torch has no {backend} backend (Distributed package doesn't have {backend} built in)"
    fix = (
        "Windows and macOS builds of torch have no NCCL (and only some have MPI): use the gloo backend, "
        "init_process_group(backend='gloo') (or change nccl to gloo in the training config). For NCCL, run on "
        "Linux with a CUDA build of torch: on Linux this message means the torch installed is a CPU-only or "
        "broken one (torch.version.cuda is None, torch.distributed.is_nccl_available() is False) — reinstall "
        "the CUDA build from pytorch.org's index (pip install torch --index-url "
        "https://download.pytorch.org/whl/cu<XY>, or conda's pytorch-cuda) in the environment the job runs in."
    )
    if facts.get("device_type"):
        summary = f"no backend for device type {facts['device_type']} (a tensor on the wrong device for the backend)"
        fix = (
            "NCCL only takes CUDA tensors and gloo CPU ones: move the tensor (tensor.cuda() / .cpu()) or "
            "init_process_group(backend='cpu:gloo,cuda:nccl')."
        )
    return summary, fix


BACKEND_UNAVAILABLE = Recogniser(
    # torch distributed_c10d.py: "Distributed package doesn't have NCCL built in"; ProcessGroupNCCL.cpp
    kind="backend_unavailable",
    templates=(
        "torch:distributed-package-doesn-have-mpi-built",
        "torch_native:processgroupnccl-only-gpus",
        "torch_cpp:no-backend-type-associated-with-device",
        "torch:no-rendezvous-handler-for",
        # torch/distributed/distributed_c10d.py: a torch without NCCL asked for its timeout; a device type no
        # backend was registered for; an accelerator torch has no backend for
        "torch:attempted-to-get-default-timeout-for",
        "torch:default-backend-not-registered-for-device",
        "torch:we-detected-accelerator-on-your-machine",
        "lightning:torch-distributed-is-not-available-cannot",  # lightning/fabric/utilities/distributed.py
    ),
    title="backend not available",
    anchors=(
        "Distributed package doesn't have",
        "ProcessGroupNCCL is only supported with GPUs",
        "No backend type associated with device type",
        "has no attribute 'init_process_group'",
        "No rendezvous handler for",
        "PyTorch built without distributed support",
        "has no attribute '_c10d_init'",
        "but NCCL support is not compiled",
        "Default backend not registered for device",
        "But we don't know which communication backend to use for this accelerator",
        "torch.distributed is not available. Cannot initialize distributed process group",
    ),
    facts=(
        R(r"doesn't have (?P<backend>NCCL|MPI|Gloo|UCC)\b"),
        R(r"(?P<backend>NCCL) support is not compiled"),
        R(r"Default backend not registered for device : (?P<device_type>\w+)"),
        R(r"(?P<no_gpus>only supported with GPUs)"),
        R(r"associated with device type (?P<device_type>\w+)"),
        R(r"No rendezvous handler for (?P<rdzv_scheme>\w+)://"),
        R(
            r"(?P<no_distributed>built without distributed support|has no attribute '_c10d_init'|"
            r"torch\.distributed is not available\. Cannot initialize)"
        ),
    ),
    reject=R(r"associated with device type cpu\b"),  # a CPU tensor on an NCCL group: cpu_tensor_nccl
    describe=_backend,
)


def _p2p(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("rtx4000"):
        return (
            "accelerate refuses to start on RTX 4000-series GPUs with NCCL's P2P/InfiniBand paths enabled"
            + on_ranks(hits),
            "These consumer cards have no GPU peer-to-peer: start the script with `accelerate launch` (which "
            "sets them), or export NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 before it starts.",
        )
    summary = (
        f"GPU peer-to-peer does not work here: {facts.get('what', 'peer access is not supported').strip()}"
    )
    return summary + on_ranks(hits), NCCL_WARN_HINTS[0][1] + "\n" + NCCL_DEBUG_HINT


GPU_P2P = Recogniser(
    # NCCL src/transport/p2p.cc ("failed to open CUDA IPC handle"), cudaErrorPeerAccessUnsupported (217)
    kind="gpu_p2p",
    templates=(
        "cuda_runtime:peer-access-unsupported",
        "nccl:failed-to-open-cuda-ipc-handle",
        "nccl:failed-to-peer-with-device",  # NCCL src/transport/p2p.cc, cudaDeviceEnablePeerAccess failed
        # accelerate/state.py: consumer RTX 4000 cards have no P2P/IB; it refuses to start without the two vars
        "accelerate:using-rtx-series-doesn-support-faster",
        # NCCL src/graph/paths.cc: NVML says P2P is off between GPUs that NVLink joins (a hardware issue)
        "nccl:p2p-is-disabled-between-nvlink-connected-2",
        # transport/p2p.cc: cudaIpcGetMemHandle refused (P2P off, or a container without the host's IPC)
        "nccl:rank-failed-to-get-cuda-ipc",
        "nccl:rank-failed-to-get-cuda-ipc-2",
    ),
    title="GPU peer-to-peer failure",
    anchors=(
        "peer access is not supported",
        "failed to open CUDA IPC handle",
        "failed to peer with device",
        "Using RTX 4000 series doesn't support faster communication",
        "P2P is disabled between NVLINK connected GPUs",
        "failed to get CUDA IPC handle to device",
    ),
    # a CUDA IPC handle refused is P2P that does not work, or a container that does not share the host's IPC
    # namespace / shared memory: only likely
    generic=("failed to get CUDA IPC handle to device",),
    also=(
        Alternative(
            "nccl_system_error",
            "a container without the host's IPC namespace or enough shared memory",
            "Run the container with --ipc=host (or --shm-size=16g and the same for every rank's container; "
            "Kubernetes: an emptyDir of medium Memory on /dev/shm); NCCL_P2P_DISABLE=1 tells the two apart.",
            when=("ipc_handle",),
        ),
    ),
    facts=(
        R(r"(?P<ipc_handle>failed to get CUDA IPC handle to device[^\n]{0,80})"),
        R(
            r"(?P<what>failed to (?:open|get) CUDA IPC handle[^\n]{0,120}|peer access is not supported[^\n]{0,80}|"
            r"failed to peer with device[^\n]{0,80}|Using RTX 4000 series doesn't support faster communication|"
            r"P2P is disabled between NVLINK connected GPUs \d+ and \d+)"
        ),
        R(r"(?P<rtx4000>Using RTX 4000 series doesn't support faster communication)"),
    ),
    absorbs=("nccl_error",),
    describe=_p2p,
)


def _nccl_code(code: str) -> str:
    """NCCL's integer version: 21803 -> 2.18.3 (2.9.9 and older: 2909 -> 2.9.9)."""
    number = int(code)
    if number >= 10000:
        return f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    return f"{number // 1000}.{number // 100 % 10}.{number % 100}"


def _version_mismatch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
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
    ),
    title="NCCL versions differ between ranks",
    anchors=("Mismatched NCCL version detected", "NCCL version mismatch with remote peer"),
    facts=(
        R(r"rank (?P<rank_a>\d+) version (?P<version_a>\d+) rank (?P<rank_b>\d+) version (?P<version_b>\d+)"),
    ),
    absorbs=("nccl_error",),
    describe=_version_mismatch,
)


def _libuv(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "this torch was built without libuv, which the TCPStore asks for by default since torch 2.4 "
        "(the Windows builds)" + on_ranks(hits),
        "Set USE_LIBUV=0 in the environment of the launcher (set USE_LIBUV=0 before torchrun / accelerate "
        "launch on Windows), or pass use_libuv=False to the TCPStore. On one machine with one GPU no store is "
        "needed: configure accelerate for a single GPU (`accelerate config`: no distributed training) or run "
        "plain python.",
    )


LIBUV_UNAVAILABLE = Recogniser(
    # torch TCPStore.cpp: "use_libuv was requested but PyTorch was build without libuv support"
    kind="libuv_unavailable",
    title="TCPStore without libuv",
    anchors=("build without libuv support", "built without libuv support"),
    templates=("torch_cpp:use-libuv-was-requested-but-pytorch",),
    describe=_libuv,
)


def _hostname(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    host = facts.get("unresolved_host", "this host")
    return (
        f"the host name {host!r} does not resolve ({facts.get('gai', 'name resolution failed').strip()})"
        + on_ranks(hits),
        f"torch's store looks up {host} to find its own address. Make the name resolve on every host: add "
        f"'<this host's IP> {host}' to /etc/hosts (or fix DNS), or give torchrun an address instead: "
        "--rdzv-endpoint <IP>:29500 / MASTER_ADDR=<IP>. A warning about IPv6 alone is harmless when IPv4 works.",
    )


HOSTNAME_RESOLUTION = Recogniser(
    # torch socket.cpp: "The {IPv4 |IPv6 }network addresses of ({}, {}) cannot be retrieved (gai error: ...)"
    kind="hostname_resolution",
    title="host name does not resolve",
    anchors=("network addresses of (",),
    templates=("torch_cpp:the-network-addresses-of-cannot-be",),
    match=R(
        r"(?P<family>IPv4|IPv6)? ?network addresses of \((?P<unresolved_host>[^,\s]{1,255}), \d+\) cannot be "
        r"retrieved \(gai error: (?P<gai>[^)]{1,100})\)"
    ),
    # IPv6 failing alone is printed by runs that work; an IPv4 failure (or any without the family) confirms it
    confirm=lambda hits, ctx: any(h.facts.get("family") != "IPv6" for h in hits),
    describe=_hostname,
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


def _nccl_env(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    settings = {h.facts["setting"]: h.facts.get("value", "").strip() for h in hits if "setting" in h.facts}
    named = "; ".join(f"{k}={v}" for k, v in settings.items())
    why = "; ".join(f"{k}: {RISKY_NCCL_SETTINGS[k]}" for k in settings if k in RISKY_NCCL_SETTINGS)
    return (
        f"NCCL failed with {named} set in its environment" + on_ranks(hits),
        f"These settings override what NCCL detects ({why}). Unset them and run again: unset "
        + " ".join(settings)
        + " (look for them in the machine image's /etc/nccl.conf, ~/.nccl.conf, the container's ENV, "
        "or the job script); keep them only if the failure stays without them.",
    )


NCCL_ENV_VALUE = Recogniser(
    # NCCL src/misc/param.cc: "%s set by environment to %s" (INFO), next to an NCCL failure
    kind="nccl_env_value",
    title="an NCCL setting that breaks it",
    anchors=tuple(f"{name} set by environment to" for name in RISKY_NCCL_SETTINGS),
    templates=(
        "nccl:nccl-graph-file-set-by-environment",
        "nccl:nccl-topo-file-set-by-environment",
        "nccl:nccl-proto-set-by-environment-to",
        "nccl:set-by-environment-to-2",
    ),
    facts=(R(r"(?P<setting>NCCL_[A-Z_]{2,40}) set by environment to (?P<value>\S{1,300})"),),
    requires=("saw_nccl_failure",),
    absorbs=("nccl_system_error", "nccl_error"),
    describe=_nccl_env,
)


RECOGNISERS = (
    NCCL_ENV_VALUE,
    LIBUV_UNAVAILABLE,
    HOSTNAME_RESOLUTION,
    NCCL_VERSION_MISMATCH,
    DUPLICATE_GPU,
    GPU_SELECTION,
    GPU_P2P,
    NETWORK_FAULT,
    NETWORK_INTERFACE,
    NCCL_SYSTEM_ERROR,
    BACKEND_UNAVAILABLE,
    DUPLICATE_NODE_RANK,
    RENDEZVOUS_OR_PORT,
    NCCL_ERROR_OTHER,
)
