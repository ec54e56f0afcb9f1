"""Kinds of failure in the communication layer: rendezvous and ports, network interfaces and links, the backend.

The message texts are torch's (``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``, ``TCPStore``/
``socket.cpp``, ``distributed_c10d.py``, ``elastic/rendezvous``) and NCCL's (``src/misc/socket.cc``,
``src/transport/net_ib.cc``) as printed across torch 1.x-2.x. The patterns and hints here are shared:
`kinds/nccl.py` (NCCL's own errors and settings), `kinds/gpus.py` (which GPUs the ranks use), `kinds/ranks.py`
(what the ranks did relative to each other: timeouts, divergence, a worker's exit), `net.torch_errors` and
`net.nccl_log` read them from here.
"""

from __future__ import annotations

import re

from torchdoctor.explain.quote import quote
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    merged,
    on_ranks,
)
from torchdoctor.rank_list import who

FAMILY = "rendezvous and network"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

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
    # (kept after the P2P hint: kinds/gpus.py reads that one as NCCL_WARN_HINTS[0]) settings NCCL's own WARN names
    (
        r"verify NCCL_OOB_NET_IFNAME",
        "NCCL_OOB_NET_IFNAME names no network device on this host: name one `ibv_devinfo` lists, or unset it "
        "(and NCCL_OOB_NET_ENABLE) to bootstrap over sockets",
    ),
    (
        r"device counts across ranks",
        "The hosts see different numbers of NICs: check each host's ports (`ibstat`) and NCCL_IB_HCA; "
        "NCCL_IGNORE_NET_MISMATCH=1 (CollNet: NCCL_IGNORE_COLLNET_MISMATCH=1) goes on with the smaller count",
    ),
    (
        r"algorithm/protocol available for function .* was set to",
        "The NCCL_ALGO / NCCL_PROTO set leave this collective no algorithm: unset them",
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
    R(r"[Cc]onnect to (?P<host>[^\s<]{1,255})<(?P<port>\d+)> failed ?: (?P<reason>[^\n]{1,200})"),
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
    # "Last enqueued" in the heartbeat monitor's dump-signal line (torch 2.4+), -1 before any work completed
    r"[Ll]ast enqueued (?:NCCL )?work: (?P<last_enqueued>-?\d+), last completed (?:NCCL )?work: "
    r"(?P<last_completed>-?\d+)"
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


def ping_text(got: str | None) -> str | None:
    """The text a store's ping read back, when the server that answered spoke another protocol: TCPStore reads the
    first 4 bytes of the answer as its little-endian number (an HTTP server's "HTTP/1.1 400" is 1347703880, an ssh
    server's "SSH-" 759714643); None when ``got`` is not 4 printable ASCII characters."""
    if not got or int(got) >= 2**32:
        return None
    text = int(got).to_bytes(4, "little").decode("latin-1")
    return text if all(" " <= c <= "~" for c in text) else None


def _another_protocol(where: str, text: str, got: str, hits: list[Hit]) -> tuple[str, str]:
    """A store's ping answered in another protocol's words: the address is not a store's, nor a port of the run."""
    what = "an HTTP server (a web service, or a proxy between the nodes)" if text == "HTTP" else "a program"
    if text == "SSH-":
        what = "an ssh server"
    return (
        f"what answers{where} is {what}, not this run's TCPStore: the store's ping read back the text '{text}' "
        f"(Got: {got})" + on_ranks(hits),
        f"The store's address (MASTER_ADDR / --master_addr / --rdzv-endpoint HOST:PORT) reaches {what} that speaks "
        "another protocol. Check the address first: it must be the node of rank 0 (node_rank 0) as the other nodes "
        "reach it (on that node: hostname -I), not a gateway, a login node or an address that no longer exists; "
        "a connection to an address nobody on the network has can be answered by a proxy or a sandbox's egress "
        "filter. Then the port: MASTER_PORT / the endpoint's port must be free on that node, not a web service's "
        "(ss -ltnp | grep :<port> there). Every node must give the same address and port.",
    )


def _nccl_bind(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    """NCCL's own bind that failed with EADDRINUSE (socket.cc ncclSocketListen's SYSCHECK): not torch's MASTER_PORT.

    Only the bootstrap root binds a port someone chose: NCCL_COMM_ID's, on rank 0 of every communicator, with
    SO_REUSEPORT (so one user's jobs share it and another user's or a program without that option holds it);
    every other socket NCCL listens on (each rank's bootstrap, the proxy, the socket transport) binds port 0,
    which fails with this errno only when the kernel's ephemeral range has no port left."""
    comm_id = ctx.facts.get("nccl_comm_id")
    port = comm_id.rpartition(":")[2] if comm_id else ""
    if port.isdigit():
        summary = (
            f"address already in use: NCCL's bootstrap root could not bind port {port} of NCCL_COMM_ID={comm_id} "
            "(NCCL's own socket, not torch's MASTER_PORT)"
        )
        fix = (
            f"NCCL_COMM_ID fixes the port NCCL's bootstrap root listens on, and rank 0 of every communicator binds "
            f"it: another process holds port {port} on that host. That is torch's own store where NCCL_COMM_ID "
            "repeats MASTER_ADDR:MASTER_PORT, another user's job with the same NCCL_COMM_ID (one user's jobs may "
            f"share the port and cross their bootstraps instead), or any program on it: ss -ltnp | grep :{port}. "
            "torch needs no NCCL_COMM_ID (it hands NCCL its id through the store and NCCL picks a free port): "
            "unset it, or give it a port nothing else uses, one per job."
        )
    else:
        summary = (
            "address already in use: NCCL could not bind one of its own sockets (NCCL's, not torch's MASTER_PORT; "
            "the log names no port)"
        )
        fix = (
            "NCCL binds a port someone chose only for its bootstrap root, where NCCL_COMM_ID=HOST:PORT is set (rank "
            "0 of every communicator binds it): check the job's environment for it; another process then holds "
            "that port (torch's store where it repeats MASTER_ADDR:MASTER_PORT, another user's job with the same "
            "NCCL_COMM_ID, any program: ss -ltnp | grep :PORT); torch needs none, unset it. Without NCCL_COMM_ID "
            "every socket NCCL listens on takes a port the kernel picks, which fails so only when this host's "
            "ephemeral range (sysctl net.ipv4.ip_local_port_range) has none left: many connections or sockets in "
            "TIME_WAIT (ss -s; jobs or ranks that open and close connections in a loop) or a narrowed range. "
            "Widen the range or stop what holds the ports."
        )
    return summary + on_ranks(hits), fix


def _rendezvous(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    in_use = next((h for h in hits if h.facts.get("in_use")), None)
    wrong_server = next((h.facts for h in hits if h.facts.get("store_ping")), None)
    if wrong_server and not in_use:
        where = (
            f" at {wrong_server['host']}:{wrong_server['port']}"
            if wrong_server.get("host")
            else " at MASTER_PORT"
        )
        text = ping_text(wrong_server.get("ping_got"))
        if text is not None:
            return _another_protocol(where, text, wrong_server["ping_got"], hits)
        return (
            f"what answers{where} is not this run's TCPStore: its ping came back with another value"
            + on_ranks(hits),
            "Another program listens on the store's port (a leftover or concurrent job, possibly of another torch "
            "release, or a service that is not a store at all). See who holds it on the store's host: ss -ltnp | "
            "grep :<port>; stop the leftover (pgrep -af python) or give this run a port of its own (MASTER_PORT / "
            "--master_port / --rdzv-endpoint HOST:PORT), and install the same torch on every node.",
        )
    if (
        in_use
        and first(hits, "asyncio_bind")
        and not any(h.specific and "asyncio_bind" not in h.facts for h in hits)
    ):
        port = first(hits, "bind_port", "?")
        return (
            f"address already in use: an asyncio server (uvicorn: vLLM's OpenAI server, a web or metrics app) "
            f"could not bind port {port}, which another process holds" + on_ranks(hits),
            f'CPython\'s asyncio prints "error while attempting to bind on address" when a server it starts cannot '
            f"bind its port; torch's rendezvous store is not such a server. Another process (an earlier server "
            f"still running or exiting, a second copy of it) holds port {port}: see who, ss -ltnp | grep :{port}, "
            "stop it, or start the server on a free port (vllm serve --port / trl vllm-serve --port, and the "
            "trainer's matching setting, e.g. GRPOConfig(vllm_server_port=...)).",
        )
    path = first(hits, "unix_socket")
    # a Unix-domain socket: a name in use, no TCP port (and never torch's store)
    if in_use and path and not first(hits, "bind_port") and not first(hits, "port"):
        return (
            f"address already in use: the Unix socket {path} is held by another process (or left behind by "
            "one that ended)" + on_ranks(hits),
            f"A Unix-domain socket's name, not a TCP port, is in use: another process of this user's (a second "
            f"copy of the job, an earlier run still exiting) holds {path}, or a file of that name was left by "
            f"one that ended. See who: ss -lxp | grep {path.split('://')[-1].removeprefix('unix:')}; stop it, or "
            "remove the stale file, or give each job its own path (the library's setting for it). torch's "
            "rendezvous store never binds one: MASTER_PORT is not the cause.",
        )
    if (
        in_use
        and first(hits, "python_socket")
        and not any(h.specific and not {"asyncio_bind", "python_socket"} & h.facts.keys() for h in hits)
    ):
        port = first(hits, "bind_port")
        which = f"port {port}" if port else "its port"
        return (
            "address already in use: a socket bound by Python code ("
            + (
                "pyzmq's ZMQError"
                if "ZMQError" in first(hits, "python_socket")
                else "the socket module's OSError"
            )
            + f") could not bind {which}, which another process holds; a server of a library or the script, or the "
            "rendezvous port where the script binds MASTER_PORT itself" + on_ranks(hits),
            "torch's rendezvous store never raises this: its C++ raises RuntimeError (DistNetworkError: \"The server "
            "socket has failed to bind\"). Python's socket module (OSError) and pyzmq (ZMQError) do, for the server "
            "whose frames the traceback shows: a ZMQ socket of an inference engine's workers (vLLM: VLLM_PORT), a "
            "web or metrics app (Flask, TensorBoard), a multiprocessing manager, or the script's own check of a "
            f"port. Another process (an earlier run still exiting, a second copy) holds {which}: see who, ss -ltnp "
            f"| grep :{port or '<port>'}, stop it, or give that server a free port. Where the script binds "
            "MASTER_PORT itself before init_process_group, pick another: torchrun --master_port=29501 ...",
        )
    if (
        in_use
        and first(hits, "nccl_bind")
        and not any(h.specific and "nccl_bind" not in h.facts for h in hits)
    ):
        return _nccl_bind(hits, ctx)
    if in_use and first(hits, "tensorpipe_bind") and not first(hits, "port"):
        return (
            "address already in use: torch.distributed.rpc's TensorPipe agent could not bind its own listening "
            f"socket ({first(hits, 'tensorpipe_bind')}; not MASTER_PORT)" + on_ranks(hits),
            "TensorPipe listens on a socket of its own for each RPC worker: its uv transport on a TCP port the kernel "
            "picks, its shm transport on an abstract Unix socket named for the process. Either leftover workers of "
            "an earlier RPC job still hold them (pgrep -af python; stop them), or the host's ephemeral ports are "
            "used up (ss -s: many sockets in TIME_WAIT; sysctl net.ipv4.ip_local_port_range). Restricting the "
            "transports avoids the shm one: TensorPipeRpcBackendOptions(_transports=['uv']).",
        )
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
        if "saw_spawn" in ctx.facts:
            # found with pytorch/examples' ddp-tutorial-series/multigpu.py, whose ddp_setup sets MASTER_PORT to
            # 12355 before init_process_group, run twice: a launcher's port or the variable set outside is overwritten
            fix += (
                "\nUnder mp.spawn no launcher picks the port: the script sets it, most often "
                f"os.environ['MASTER_PORT'] = '{port_number}' before init_process_group, which overwrites a MASTER_PORT "
                "set outside. Change it there, or keep one set outside: os.environ.setdefault('MASTER_PORT', "
                f"'{port_number}'), then MASTER_PORT=... python train.py."
            )
        return summary, fix
    if first(hits, "launch_at"):
        return _launch_gave_up(hits)
    if first(hits, "etcd_server"):
        return _etcd_server(hits)
    facts = next((h.facts for h in hits if "host" in h.facts), {})
    host, port = facts.get("host", "").removeprefix("::ffff:") or None, facts.get("port")
    # the store's host counting the clients that came ("1/4 clients joined") says more than a client that could not
    # connect after it gave up (Lightning's late-started rank 1 in the same console)
    if host is None or first(hits, "joined"):
        error = first(hits, "error") or first(hits, "what") or "the rendezvous failed"
        message = first(hits, "message", "")
        summary = f"{error}: {message}".rstrip(": ") + on_ranks(hits)
        if first(hits, "socket_timeout"):
            waited = first(hits, "store_wait")
            summary = (
                f"a read from the rendezvous store timed out ({(waited or 'Socket Timeout').strip()}): the key "
                "another rank should set never came, or the store's host (MASTER_ADDR) stopped answering"
                + on_ranks(hits)
            )
        missing = _missing_gloo_peer(hits, ctx)
        if missing is not None:
            summary = missing
        if first(hits, "exit_barrier"):
            summary = (
                "this node's workers finished, and the other nodes did not reach torchrun's exit barrier in time "
                f"({first(hits, 'exit_barrier').strip()}): another node's workers failed, hang or were still "
                "running" + on_ranks(hits)
            )
        if first(hits, "agent_lost_store"):
            summary = (
                f"this node's torchrun agent lost the rendezvous store ({first(hits, 'agent_lost_store').strip()}): "
                "the node that hosts it (the --rdzv-endpoint host) failed, finished or cannot be reached"
                + on_ranks(hits)
            )
        if first(hits, "join_timeout"):
            summary = (
                "torchrun's rendezvous timed out waiting for the other nodes: fewer nodes than --nnodes (its "
                "minimum) joined before the join timeout (600 s unless --rdzv-conf join_timeout= says otherwise)"
                + on_ranks(hits)
            )
        if first(hits, "rdzv_closed"):
            summary = (
                "the rendezvous was already closed when this node's agent tried to join it: the node arrived after "
                "the others had completed it" + on_ranks(hits)
            )
        if first(hits, "joined"):
            summary = (
                f"only {first(hits, 'joined')} of {first(hits, 'expected')} processes reached the store: the "
                "others never started, or cannot reach MASTER_ADDR:MASTER_PORT"
            )
            if ctx.facts.get("store_by_script") and ctx.facts.get("lightning_world"):
                summary += _LIGHTNING_WORLD.format(world=ctx.facts["lightning_world"])
            elif ctx.facts.get("store_by_script") and not ctx.facts.get("spawned"):
                summary += _HOSTED_BY_SCRIPT
        elif first(hits, "worker_count"):
            summary += (
                f" ({first(hits, 'worker_count')} of {first(hits, 'world_size')} processes arrived at the "
                "barrier)"
            )
        fix = (
            "Every node must be started with the same --rdzv-endpoint (or MASTER_ADDR / MASTER_PORT), "
            "--rdzv-id and --nnodes, and the endpoint's host must be reachable from all of them.\n"
            + _MASTER_ADDR_AS_SEEN
        )
        if first(hits, "joined") and ctx.facts.get("store_by_script") and ctx.facts.get("lightning_world"):
            fix = _LIGHTNING_FIX.format(world=ctx.facts["lightning_world"]) + "\n" + _MASTER_ADDR_AS_SEEN
        elif first(hits, "joined") and ctx.facts.get("store_by_script") and not ctx.facts.get("spawned"):
            fix = _started_by_hand_fix(first(hits, "expected")) + "\n" + _MASTER_ADDR_AS_SEEN
        if first(hits, "joined") and ctx.facts.get("saw_accelerate") and not ctx.facts.get("store_by_script"):
            # found with accelerate's nlp_example under a config for two machines launched on one
            summary += "; accelerate launch waits for the processes of every machine its config's num_machines counts"
            fix = _ACCELERATE_MACHINES + "\n" + fix
        if first(hits, "hand_world"):
            summary, fix = _hand_wait(hits)
        if first(hits, "joined") and ctx.facts.get("spawned"):
            # found with pytorch/examples' imagenet/main.py: --multiprocessing-distributed --world-size 2 on a
            # machine it counts one device on spawns 1 process for a world of 2
            summary += " (torch.multiprocessing.spawn started fewer processes than world_size)"
            fix = (
                "torch.multiprocessing.spawn starts nprocs processes, and init_process_group waits for world_size of "
                "them: on one machine nprocs must equal world_size (mp.spawn(fn, nprocs=world_size, ...)); on "
                "several, world_size is machines x nprocs and every machine must run the script with its own "
                "node rank (pytorch/examples' imagenet: --world-size is the number of machines with "
                "--multiprocessing-distributed, and nprocs the devices it counts on each).\n" + fix
            )
        if missing is not None:
            peer = first(hits, "gloo_peer")
            fix = (
                f"Rank {peer} never wrote its address to the store. Either no process has that rank: the world size "
                "counts more processes than were started (world_size= passed to init_process_group by hand, or "
                "WORLD_SIZE set by hand); under torchrun leave both out, init_process_group(backend) reads RANK and "
                "WORLD_SIZE, nnodes x nproc_per_node, from the launcher. Or rank "
                f"{peer} runs on another node that did not start, or failed before its init_process_group: read "
                "that node's log.\n" + fix
            )
        if first(hits, "join_timeout"):
            fix += (
                "\nStart the same torchrun on every node (one per node, --node-rank or the rendezvous picks it); a "
                "node that failed before joining (its own output says why) or a firewall on the endpoint's port "
                "keeps the others waiting. On one machine pass --nnodes 1 (or --standalone)."
            )
        if first(hits, "rdzv_closed"):
            fix += (
                "\nA node that starts late (slow scheduling, an image pull, a node still being provisioned) finds "
                "the rendezvous completed or closed without it: an elastic --nnodes MIN:MAX range completes it "
                "last_call_timeout (30 s by default) after MIN nodes joined. Start the nodes together, or give the "
                "rendezvous more time: torchrun --rdzv-conf join_timeout=1800,last_call_timeout=300 (one "
                "--rdzv-conf with every key)."
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


def _etcd_server(hits: list[Hit]) -> tuple[str, str]:
    """The etcd server an etcd rendezvous starts on this host (elastic/rendezvous/etcd_server.py EtcdServer: it runs
    the etcd binary on a free port, then polls it for 60 s, three tries) that never answered or exited."""
    said = first(hits, "etcd_server").strip()
    return (
        f"the etcd rendezvous' own etcd server did not come up ({said}): the job never reached its rendezvous"
        + on_ranks(hits),
        "torch's EtcdServer runs the etcd binary named by TORCHELASTIC_ETCD_BINARY_PATH (else `etcd` on PATH) with "
        "--enable-v2 and waits for it to answer on localhost. Check that the binary is there and starts: "
        "`etcd --version`, then `etcd --enable-v2` by hand (an etcd 3.4+ serves the v2 API the python-etcd client "
        "needs only with --enable-v2, and later etcd releases drop that API: an etcd 3.4 or 3.5 serves it), and that python-etcd is installed "
        "(pip install python-etcd). Unless the job needs etcd, use torch's own store instead: torchrun "
        "--rdzv-backend=c10d --rdzv-endpoint=HOST:PORT (or --standalone on one machine).",
    )


# torch 1.x's rendezvous.py names the variable in its raise (`raise _env_error("MASTER_ADDR")`); later releases
# raise from a helper (`raise _env_error(env_var)`), whose message line then names it
ENV_ERROR_RAISED = R(r'raise _env_error\("(?P<missing_var>\w{1,40})"\)')


# The anchors of RENDEZVOUS_OR_PORT that alone make it only likely (one list: they are its anchors and its
# ``generic``). A store that cannot be reached or timed out is what every rank sees when rank 0 died first, a
# wrong MASTER_ADDR or a firewall: only "likely" a rendezvous problem.
_RENDEZVOUS_SUGGESTIVE = (
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
    # torch 1.x rendezvous.py's _env_rendezvous_handler raising for the variable it names: the source line a
    # traceback shows when the paste stops before the message ("environment variable X expected, but not set")
    "raise _env_error(",
    "RendezvousClosedError",
    "clients joined",
    # the same store timeout's first sentence, where the paste stops before the count (first_sentence_anchors.py)
    "seconds waiting for clients",
    # torchdoctor's debug mode waiting in init_process_group for ranks started by hand (distributed/joining.py):
    # never started, another MASTER_ADDR, or failed before their init_process_group
    "(MASTER_ADDR:MASTER_PORT; ",
    # elastic's c10d/etcd backends and the store's server socket: what a wrong endpoint, a firewall, a port
    # in use and a rank 0 that died first all print
    "The connection to the C10d store has failed",
    "The connection to etcd has failed",
    "Rendezvous timeout occurred in EtcdRendezvousHandler",
    "has failed to listen on any local network address",
    # c10d Utils.hpp SYSCHECK: a store socket's send/recv that ran past its timeout (EAGAIN): the key another
    # rank should have written never came, or the store's host stopped answering; TCPStore's own wait and
    # barrier timeouts (torch 2.4+), the elastic store's and etcd's: the same, in their words
    "Socket Timeout",
    "wait timeout after ",
    "barrier timeout after ",
    "timed out waiting for all ",
    "Timeout while waiting for keys in EtcdStore",
    # dynamic_rendezvous.py: a keep-alive or the closing of the rendezvous that failed (its error type named):
    # the store's node died or ended first as often as the network between them failed
    "has failed to send a keep-alive heartbeat to the rendezvous",
    "has failed to shutdown the rendezvous",
    # the agent whose workers finished waits for the others in the store: they failed or are still running
    "Error waiting on exit barrier",
    # the port answers, but not as this run's store: another job (or torch release), or another program
    "Ping failed, invalid value returned from server",
    # socket.cpp: the store's sockets that could not be made, bound or listened on (a port another process
    # holds, a sandbox or container that forbids the socket, no usable address family), a client wait on
    # the store past its timeout (waitForInput); the IPv6 attempt's errno 97 before IPv4 is rejected below
    "The client socket cannot be initialized to connect to",
    "The server socket cannot be initialized on",
    "The server socket has failed to bind",
    "The server socket has failed to listen on",
    "The server could not be initialized on any address for port",
    "waitForInput: socket ",
)


# ... and those printed for that cause alone: a port in use (the OS, accelerate's check of it), accelerate's
# multi-node launch without MASTER_ADDR
def _not_an_asyncio_server(hits: list[Hit], ctx: Context) -> bool:
    """Certain as the anchors decide, unless every hit is CPython asyncio's bind failure (base_events.py
    create_server: "error while attempting to bind on address ('0.0.0.0', 8000): address already in use"), which a
    uvicorn / aiohttp server prints for its own port (vLLM's OpenAI server, vllm-project/vllm#7514) and torch's
    TCPStore never does; or a socket that Python code bound (`python_socket`: CPython's socket module raises
    OSError, pyzmq ZMQError), which torch's store, C++ raising RuntimeError (DistNetworkError), never raises; or
    TensorPipe's own listener (`tensorpipe_bind`) or a Unix-domain socket (`unix_socket`), neither MASTER_PORT. NCCL's
    own bind (`nccl_bind`) is a port in use as surely as the store's: certain, its fix naming what holds one."""
    return any(
        h.specific
        and not {"asyncio_bind", "python_socket", "tensorpipe_bind", "unix_socket"} & h.facts.keys()
        for h in hits
    )


_not_an_asyncio_server.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


# the words of etcd_server.py's timeout, which collective_timeout's "Timed out waiting" must leave to this kind
ETCD_SERVER_TIMEOUT = "Timed out waiting for etcd server to be ready"
_RENDEZVOUS_DECISIVE = (
    "Address already in use",
    "address already in use",
    "EADDRINUSE",
    "but another process is utilizing it",
    "env was not set, please try exporting rank 0's hostname",
    # elastic/rendezvous/etcd_server.py _wait_for_ready: the etcd server an etcd rendezvous started for itself
    # (EtcdServer: the binary TORCHELASTIC_ETCD_BINARY_PATH or `etcd` on PATH) never answered, or exited
    ETCD_SERVER_TIMEOUT,
    "Etcd server process exited with the code: ",
    # torchdoctor launch's own account of a node that gave up at the rendezvous (launch/run.py never_joined)
    "Start `torchdoctor launch` on every node with --nnodes ",
    " could not reach the rendezvous at ",
)


# the script's own init_process_group hosts the store (rendezvous.py's _create_c10d_store with is_master for rank
# 0): torchrun's workers only connect to its agent's store (TORCHELASTIC_USE_AGENT_STORE), so a worker never prints
# "waiting for clients"; a process that does was started by hand or by mp.spawn (the ProcessRaisedException says
# which). Found with pytorch/examples' DDP tutorial under RANK=0 WORLD_SIZE=2 python train.py: silent for the
# 30 minutes of gloo's default timeout, deaf to Ctrl-C
_HOSTED_BY_SCRIPT = (
    " (this process hosts the store itself, as rank 0 of init_process_group's env:// or tcp:// rendezvous does when "
    "no launcher started it: the world size it was given counts processes nobody started)"
)


# Lightning's own launcher started this machine's processes (its "Initializing distributed: GLOBAL_RANK: 0, MEMBER:
# 1/4"): the world is Trainer's num_nodes x devices, and the other nodes' processes never came. Found with Lightning's
# bug_report_model.py given num_nodes=2 on one machine
_LIGHTNING_WORLD = (
    " (Lightning set up a world of {world} processes, Trainer's num_nodes x devices: the processes of the other "
    "nodes never came)"
)
_LIGHTNING_FIX = (
    "Trainer(num_nodes=N, devices=D) (Fabric's too) waits for N x D = {world} processes. On one machine pass "
    "num_nodes=1. On several, start the same script on every node, each with its NODE_RANK (0 to N-1) and the "
    "same MASTER_ADDR (node 0's address) and MASTER_PORT, or start it through SLURM (srun, one task per device) or "
    "torchrun --nnodes N --nproc-per-node D, which set them; Lightning starts the D processes of each node itself."
)
_MASTER_ADDR_AS_SEEN = "MASTER_ADDR must be the address of rank 0's host as the other hosts see it."


def _started_by_hand_fix(world: str | None, debugged: bool = False) -> str:
    last = str(int(world) - 1) if world and world.isdigit() else "WORLD_SIZE-1"
    world = world or "N"
    fix = (
        f"Started by hand (RANK=0 WORLD_SIZE={world} python train.py), every rank, 0 to {last}, must be "
        "started too, each with its own RANK and the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE; or let a "
        f"launcher start them all: torchrun --nproc-per-node {world} train.py (with RANK and WORLD_SIZE left "
        "unset, and no world_size= in init_process_group). For one process, WORLD_SIZE=1 or no init_process_group."
    )
    if debugged:
        return fix
    return fix + (
        " This wait lasts init_process_group's timeout (30 minutes by default), prints nothing and Ctrl-C does not "
        "stop it (Ctrl-\\ or kill does): torchdoctor.distributed.debug.enable() before init_process_group says "
        "whom it waits for every 10 s and lets Ctrl-C stop it."
    )


# torchdoctor launch's last line on a node that gave up at the rendezvous (launch/run.py never_joined), after torch's
# own error: a static rendezvous names the node ranks it waited for, a c10d one how many nodes; a node that does not
# host the rendezvous and got no answer from it when it tried again says so instead
_LAUNCH_GAVE_UP = (
    R(
        r"torchdoctor: node rank (?P<launch_node>\d+) of (?P<launch_nnodes>\d+) waited (?P<launch_waited>\d+)s for "
        r"the other nodes? \((?P<launch_missing>[^)\n]{1,200})\) at (?P<launch_at>\S{1,300}); "
        r"(?P<launch_none>none|not all of them) came\."
    ),
    R(
        r"torchdoctor: this node waited (?P<launch_waited>\d+)s at the c10d rendezvous (?P<launch_at>\S{1,300}) for "
        r"(?P<launch_nnodes>\d+) nodes in all; they did not all come\."
    ),
    R(
        r"torchdoctor: (?:node rank (?P<launch_node>\d+) of (?P<launch_nnodes>\d+)|this node) could not reach the "
        r"rendezvous at (?P<launch_at>\S{1,300}) in (?P<launch_waited>\d+)s: (?P<launch_unreached>[^\n]{1,300}?) "
        r"when tried again"
    ),
)


def _launch_gave_up(hits: list[Hit]) -> tuple[str, str]:
    """torchdoctor launch's own account of a node that gave up at the rendezvous: whom it waited for, or that it
    could not reach the endpoint; the fix follows."""
    at, waited, node = first(hits, "launch_at"), first(hits, "launch_waited"), first(hits, "launch_node")
    this = f"node rank {node} of {first(hits, 'launch_nnodes')}" if node else "this node"
    host, _, port = at.rpartition(":")
    unreached = first(hits, "launch_unreached")
    if unreached:
        return (
            f"{this} could not reach the rendezvous at {at}: {unreached} when torchdoctor launch tried it again after "
            f"waiting {waited} s there (a firewall dropping port {port}, or an address the nodes do not share); "
            "whether the other nodes came cannot be known from this node",
            f"From this node: nc -vz {host} {port}. No answer is a firewall between the nodes dropping the port, or "
            f"an address of {host} this node does not reach (`ip route get {host}`). Open the port, and every port "
            "between the nodes: after the rendezvous, the ranks' store and gloo or NCCL connect on ports picked at "
            f"random. On {host}, `ss -ltn 'sport = :{port}'` shows whether the launch there listens.",
        )
    missing = first(hits, "launch_missing")
    start = (
        "Start `torchdoctor launch` on every node with the same --nnodes and --master-addr/--master-port (or "
        "--rdzv-endpoint and --rdzv-id), each node with its own --node-rank, and check from each that "
        f"nc -vz {host} {port} answers."
    )
    if missing:
        came = "which never came" if first(hits, "launch_none") == "none" else "not all of which came"
        return (
            f"{this} waited {waited} s at the rendezvous {at} for {missing}, {came} (torchdoctor launch's count)",
            f"The console of {missing} says why: a check before the start that failed there (a rendezvous host "
            "that does not resolve there, an interface it lacks), a crash, a firewall between it and "
            f"{host}, or it was never started; `torchdoctor explain` reads it. {start}",
        )
    return (
        f"this node waited {waited} s at the c10d rendezvous {at} for {first(hits, 'launch_nnodes')} nodes in all, "
        "and they did not all come (torchdoctor launch's count)",
        "The consoles of the nodes that did not come say why: a check before the start that failed there, a "
        f"crash, a firewall between them and {host}, or they were never started; `torchdoctor explain` reads "
        f"them. {start}",
    )


def _hand_wait(hits: list[Hit]) -> tuple[str, str]:
    """torchdoctor's debug mode's own account of a rank started by hand that waited in init_process_group
    (distributed/joining.py): whom it waited for, where, and its fix."""
    rank, world, waited = first(hits, "hand_rank"), first(hits, "hand_world"), first(hits, "hand_for")
    summary = (
        f"rank {rank} of {world}, started without a launcher, waited in init_process_group for {waited} at "
        f"{first(hits, 'hand_at')} (MASTER_ADDR:MASTER_PORT) and none came: those ranks were never started, or "
        "with another MASTER_ADDR, MASTER_PORT or WORLD_SIZE, or failed before their init_process_group"
    )
    return summary, _started_by_hand_fix(world, debugged=True) + "\n" + _MASTER_ADDR_AS_SEEN


_ACCELERATE_MACHINES = (
    "accelerate launch takes num_machines and num_processes from its config file (accelerate config writes "
    "~/.cache/huggingface/accelerate/default_config.yaml; --config_file names another), and num_processes counts "
    "the processes of every machine together: check the file the command used against the machines started. On "
    "one machine: num_machines: 1 (or accelerate launch --num_machines 1 --num_processes N); on several: run the "
    "same accelerate launch on each, with its own --machine_rank and the same main_process_ip and port."
)


def _missing_gloo_peer(hits: list[Hit], ctx: Context) -> str | None:
    """What a store wait in gloo's rendezvous says when the rank it waited for is not among the ranks the log shows
    (a world size larger than the processes started, or that rank on another node): None otherwise."""
    peer = first(hits, "gloo_peer")
    waited = first(hits, "store_wait")
    if peer is None or waited is None or not ctx.ranks or int(peer) in ctx.ranks:
        return None
    return (
        f"gloo's rendezvous in init_process_group (or new_group) waited for rank {peer}'s address "
        f"({waited.strip()}), and this log has no rank {peer} (only {who(sorted(ctx.ranks))}): no process with "
        f"that rank started, or it runs on a node whose log is not here"
    )


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
        # torchdoctor's debug mode: a rank started by hand that waited in init_process_group (distributed/joining.py)
        "torchdoctor:rank-of-waited-s-of-in",
        # accelerate/state.py: a multi-node launch without MASTER_ADDR
        "accelerate:tried-to-launch-on-distributed-with",
        # accelerate/commands/launch.py: its check that the main process port is free
        "accelerate:tried-to-launch-distributed-communication-on",
        # torch/distributed/elastic/rendezvous: c10d_rendezvous_backend.py, etcd_store.py, etcd_rendezvous.py
        "torch:the-connection-to-the-c10d-store",
        "torch:the-connection-to-etcd-has-failed",
        "torch:rendezvous-timeout-occurred-in-etcdrendezvoushandler",
        # etcd_server.py: the etcd server an etcd rendezvous starts itself, not ready in time or exited
        "torch:timed-out-waiting-for-etcd-server",
        "torch:etcd-server-process-exited-with-the",
        "torch_cpp:the-server-socket-has-failed-to-6",  # socket.cpp: no local address to listen on
        "torch_native:socket-timeout",  # Utils.hpp SYSCHECK: a store socket's recv/send past its timeout
        # TCPStore.cpp doWait (torch 2.4+, where older releases threw "Socket Timeout"): a get/wait for keys no
        # rank set within the store's timeout; its barrier command the same for a barrier key
        "torch_cpp:wait-timeout-after-ms-keys",
        "torch_cpp:barrier-timeout-after-ms-key",
        # elastic/utils/distributed.py _check_full_rank: fewer members than world_size reached the store
        "torch:timed-out-waiting-for-all-members",
        # elastic/rendezvous/etcd_store.py: the etcd rendezvous' wait for keys
        "torch:timeout-while-waiting-for-keys-in",
        # elastic/rendezvous/dynamic_rendezvous.py: the agent's keep-alive and its closing of the rendezvous fail
        # when the store (on the --rdzv-endpoint host) is gone
        "torch:the-node-has-failed-to-send",
        "torch:the-node-has-failed-to-shutdown",
        # elastic/agent/server/api.py _exit_barrier: logger.exception when the other agents did not arrive
        "torch:error-waiting-on-exit-barrier-elapsed",
        # TCPStore.cpp ping(): the nonce it sent did not come back: not a store of this run answers on the port
        "torch_cpp:ping-failed-invalid-value-returned-from",
        # socket.cpp SocketConnectOp / SocketListenOp and libuv's listen (TCPStoreLibUvBackend.cpp)
        "torch_cpp:the-client-socket-cannot-be-initialized",
        "torch_cpp:the-server-socket-cannot-be-initialized",
        "torch_cpp:the-server-socket-has-failed-to",
        "torch_cpp:the-server-socket-has-failed-to-2",
        "torch_cpp:the-server-socket-has-failed-to-4",
        "torch_cpp:the-server-socket-has-failed-to-5",
        "torch_cpp:the-server-could-not-be-initialized",
        "torch_cpp:waitforinput-socket-timed-out-after-ms",
        # torchdoctor launch on several nodes, after torch's own error: the nodes that never came, or this node
        # could not reach the endpoint when it tried again (launch/run.py never_joined)
        "torchdoctor:node-rank-waited-for-the-other-nodes",
        "torchdoctor:node-waited-at-the-c10d-rendezvous",
        "torchdoctor:could-not-reach-the-rendezvous",
    ),
    title="rendezvous failed",
    anchors=(*_RENDEZVOUS_DECISIVE, *_RENDEZVOUS_SUGGESTIVE),
    generic=_RENDEZVOUS_SUGGESTIVE,
    confirm=_not_an_asyncio_server,
    also=(
        Alternative(
            "not_launched_distributed",
            "a script written for a distributed launch run as a plain process",
            "Start it with torchrun --nproc_per_node=N (which sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), "
            "or skip init_process_group when WORLD_SIZE is not in os.environ to run one process.",
            when=("missing_var",),
        ),
        Alternative(
            "rank_env_missing",
            "processes started by a scheduler (srun, mpirun) without a torch launcher to set the variables",
            "Start one torchrun per node from the scheduler (srun torchrun --nnodes=$SLURM_NNODES ...), or export "
            "MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE from the scheduler's variables before "
            "init_process_group.",
            when=("missing_var",),
        ),
        Alternative(
            "peer_closed",
            "another node or rank that failed, hung or ended first (its agent closes the rendezvous; the store "
            "waits for what it never writes)",
            "Read the other nodes' logs for the first error: the rendezvous closes when one node's agent stops "
            "(its workers failed past --max-restarts, or it finished), a node that crashed never joins, and a "
            "store read times out (Socket Timeout) when the rank that should set the key (rank 0 for the NCCL "
            "id, every rank for a barrier) died, hangs or is still loading.",
            when=("rdzv_closed", "joined", "socket_timeout", "agent_lost_store", "exit_barrier"),
        ),
    ),
    # a warning torch prints on hosts without IPv6 before it tries IPv4: not a failure; a store read that timed
    # out inside ProcessGroupNCCL's wait for rank 0's NCCL id is that wait's (collective_timeout reads it)
    reject=R(
        r"errno: 97 - Address family not supported|ncclUniqueId[^\n]{0,300}(?:Socket Timeout|wait timeout after)|"
        # the store's timeouts only as TCPStore and elastic word them, not the same words in another message
        r"(?:wait|barrier) timeout after (?!\d+ms, key)|timed out waiting for all (?!\d+ members to join)|"
        # socket.cpp's warning for one address of several: localhost's IPv6 ::1 on a host without IPv6 loopback
        # (EADDRNOTAVAIL) before the IPv4 address connects; a connect that fails for good raises its own error
        r"client socket has failed to connect to \[(?:localhost|::1)\]:\d+ \(errno: 99 - Cannot assign requested|"
        # NCCL 2.24+'s RAS (ras/client_support.cc rasClientInitSocket) binding localhost:28028 (NCCL_RAS_ADDR) for the
        # ncclras tool: that it failed (another user's NCCL job holds the port) leaves the job running without it
        r"(?:client_support\.cc:\d+|\(rasClientInitSocket\))[^\n]{0,20} NCCL WARN Call to bind failed|"
        # NCCL's Unix-domain socket for cuMem handles (os/linux_ipcsocket.cc, 2.19+): its name, not a TCP port, is
        # the one in use (nccl_system_error's fix speaks of it)
        r"UDS: Binding to socket [^\n]{1,200} failed|"
        # socket.cpp's warnings (W) of a store wait that goes on: a poll that returned nothing yet, as torch prints
        # it under a wait with a short timeout that is retried (torchdoctor's debug mode waiting for a rank); a wait
        # that fails for good raises its own error after them (DistStoreError: wait timeout after ...)
        r"\A[^\n]{0,40}\[W\d{4} [^\]\n]{0,60}socket\.cpp:\d+\] \[c10d\] waitForInput"
    ),
    facts=(
        R(r"(?P<in_use>[Aa]ddress already in use|EADDRINUSE|another process is utilizing it)"),
        # NCCL's own sockets (misc/socket.cc, 2.4-2.8's include/socket.h): SYSCHECK's "Call to bind failed : %s",
        # "failed: %s" since 2.23
        R(r"(?P<nccl_bind>Call to (?:bind|listen) failed ?: [Aa]ddress already in use)"),
        # torch.distributed.rpc's TensorPipe agent binding its own listener (its uv transport's TCP socket on a port
        # the kernel picks, its shm transport's abstract Unix socket): "In bind at tensorpipe/transport/uv/...",
        # "(this error originated at tensorpipe/transport/...)": not MASTER_PORT
        R(r"(?P<tensorpipe_bind>tensorpipe/(?:transport|channel|core)/[^\s:\")]{1,120})"),
        # a Unix-domain socket (ZMQ's ipc://, a unix: path): a path is in use, not a TCP port
        R(r"(?P<unix_socket>ipc://[^\s')\]]{1,200}|unix:/[^\s')\]]{1,200})"),
        R(
            r"(?P<asyncio_bind>error while attempting to bind on address \('?[^'\n]{0,100}'?, (?P<bind_port>\d+)[,)])"
        ),
        # the same errno raised by Python code's own socket: CPython's socket module (OSError's "[Errno 98]", its
        # str: a socketserver / Flask / multiprocessing manager) or pyzmq (ZMQError: vLLM's and DeepSpeed-MII's workers),
        # never by torch's TCPStore, whose C++ raises RuntimeError ("RuntimeError: Address already in use" before
        # torch 1.9, DistNetworkError's "The server socket has failed to bind ... (errno: 98 - Address already in
        # use)" since)
        R(
            r"(?P<python_socket>\[Errno \d+\] [Aa]ddress already in use|(?:ZMQError|socket\.error): [Aa]ddress "
            r"already in use)(?: \(addr='[a-z]+://[^'\n]{0,200}:(?P<bind_port>\d+)'\))?"
        ),
        R(r"communication on port `(?P<port>\d+)`"),
        R(r"port: (?P<port>\d+), useIpv6"),
        R(r"failed to bind to \[?[^\s\]]{0,255}\]?:(?P<port>\d+)"),
        *UNREACHABLE_PATTERNS[:4],
        ADDRESS_FAILED,
        RENDEZVOUS,
        R(r"environment variable (?P<missing_var>\w+) expected, but not set"),
        R(r"but `?(?P<missing_var>MASTER_ADDR)`? env was not set"),
        ENV_ERROR_RAISED,
        R(r"(?P<what>waiting for clients\. (?P<joined>\d+)/(?P<expected>\d+) clients joined)"),
        R(
            r"rank (?P<hand_rank>\d+) of (?P<hand_world>\d+) waited \d+ s of [\d.e+]+ in init_process_group for "
            r"(?P<hand_for>[^\n]{1,200}?) at (?P<hand_at>\S{1,200}) \(MASTER_ADDR:MASTER_PORT"
        ),
        R(r"(?P<rdzv_closed>RendezvousClosedError)"),
        *_LAUNCH_GAVE_UP,
        # elastic/rendezvous/dynamic_rendezvous.py _RendezvousOpExecutor.run: `raise RendezvousTimeoutError` with no
        # message when the join (next_rendezvous) passed its deadline: fewer nodes than --nnodes joined
        R(r"(?:^|[\s.])(?P<join_timeout>RendezvousTimeoutError)\s*$"),
        # socket.cpp's own account of the store socket it could not make, bind or listen on (address and errno)
        R(
            r"(?P<what>The (?:client|server) socket (?:cannot be initialized|has failed to (?:bind|listen))[^\n]{0,200}|"
            r"The server could not be initialized on any address[^\n]{0,120})"
        ),
        R(r"(?P<socket_timeout>Socket Timeout|waitForInput: socket \S{0,80} timed out after)"),
        R(
            r"(?P<socket_timeout>(?P<store_wait>(?:wait|barrier) timeout after \d+ms, keys?: [^\n]{0,120}|timed out "
            r"waiting for all \d+ members to join|Timeout while waiting for keys in EtcdStore))"
        ),
        # gloo's full-mesh rendezvous (ProcessGroupGloo: a PrefixStore per process group, device type and device,
        # then gloo's connectFullMesh key, the rank whose address it waits for): "/default_pg/0//cpu//0/2"
        R(r"keys?: [^\s,]{0,80}//(?:cpu|cuda)//\d+/(?P<gloo_peer>\d+)\b"),
        R(r"Error waiting on exit barrier\. (?P<exit_barrier>Elapsed: [\d.]{1,12} seconds)"),
        R(
            r"(?P<store_ping>Ping failed, invalid value returned from server)(?:\. Expected: \d+, Got: (?P<ping_got>\d+))?"
        ),
        R(
            r"(?P<agent_lost_store>failed to (?:send a keep-alive heartbeat to|shutdown) the rendezvous '[^'\n]{0,100}' "
            r"due to an error of type \w{1,60})"
        ),
        R(r"world_size=(?P<world_size>\d+), worker_count=(?P<worker_count>\d+)"),
        R(
            r"(?P<etcd_server>Timed out waiting for etcd server to be ready|Etcd server process exited with the "
            r"code: -?\d{1,4})"
        ),
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


def _gloo_hostname(hits: list[Hit], facts: dict) -> tuple[str, str]:
    """gloo's device.cc looking up the address to listen on from the host name (GLOO_SOCKET_IFNAME unset): the
    name resolves to an address this host cannot bind ("Unable to find address for node1; bind(2) for
    10.0.0.9:0 failed with: Cannot assign requested address"), or to none it can use ("rp != nullptr. Unable to
    find address for: node1")."""
    if "bind_host" in facts:
        summary = (
            f"gloo looked up this host's address from its name {facts['bind_host']!r}, which resolves to "
            f"{facts['bind_addr']}: not an address of this host (bind: {facts['bind_reason'].strip()})"
        )
    else:
        summary = f"gloo found no usable address for this host's name {facts.get('interface', '')!r}"
    return (
        summary + on_ranks(hits),
        "With GLOO_SOCKET_IFNAME unset, gloo listens on the address the host name resolves to: correct the "
        "host's entry in /etc/hosts (`getent hosts $(hostname)` must print one of `ip -br addr`'s addresses), or "
        "name the interface the hosts share:\n"
        "export GLOO_SOCKET_IFNAME=<iface> NCCL_SOCKET_IFNAME=<iface>   # see `ip -br addr`",
    )


def _network(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    ifname = ctx.facts.get("socket_ifname")
    set_to = f" (NCCL_SOCKET_IFNAME is set to {ifname})" if ifname else ""
    if facts.get("oob_ifname"):
        return (
            f"NCCL_OOB_NET_IFNAME={facts['oob_value']} names no network device NCCL sees on this host: "
            "NCCL's bootstrap over the network plugin (NCCL_OOB_NET_ENABLE=1) stops" + on_ranks(hits),
            "NCCL_OOB_NET_IFNAME picks the device of the network plugin (an IB/RoCE HCA such as mlx5_0, with ^ "
            "to exclude, = for an exact name) that carries NCCL's bootstrap: name one this host has (ibv_devinfo "
            "lists them; NCCL_DEBUG=INFO prints 'NET/IB : Using [0]mlx5_0:1/...'), or unset it, or unset "
            "NCCL_OOB_NET_ENABLE to bootstrap over the sockets of NCCL_SOCKET_IFNAME again.",
        )
    if facts.get("net_count_mismatch"):
        kind = "CollNet (SHARP)" if facts.get("net_coll") else "network"
        switch = "NCCL_IGNORE_COLLNET_MISMATCH" if facts.get("net_coll") else "NCCL_IGNORE_NET_MISMATCH"
        return (
            f"the hosts see different numbers of {kind} devices (min {facts['net_min']}, max {facts['net_max']}): "
            "NCCL 2.30+ refuses to build the communicator" + on_ranks(hits),
            "Every host should see the same NICs: on the host with fewer, check the ports are up (ibstat: State "
            "Active; a NIC down or missing its driver), and that NCCL_IB_HCA / NCCL_SOCKET_IFNAME select the same "
            "devices everywhere (NCCL_DEBUG=INFO prints which rank has how many: 'Rank N has M local Net "
            f"devices'). If the hosts really differ, {switch}=1 lets NCCL go on with the smaller count.",
        )
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
    if "ib_cqe" in facts:
        side = f" ({facts['ib_side']})" if facts.get("ib_side") else ""
        nic = f" on NIC index {facts['ib_dev_index']}" if facts.get("ib_dev_index") else ""
        summary = (
            f"an InfiniBand/RoCE transfer{side} completed in error{nic}: the peer did not answer, the link "
            "failed, or the peer died first" + on_ranks(hits)
        )
        fix = (
            "NCCL's next line ('Got completion from peer ... with status=...') names the status: a retry counter "
            "exceeded (12) is the peer not answering (RoCE settings the hosts do not share: NCCL_IB_GID_INDEX, "
            "NCCL_IB_TC), a flushed request (5) the consequence of an earlier error. Check the link (`ibstat`, "
            "`perfquery`), the peer host's log for a failure before this one, and confirm with NCCL_IB_DISABLE=1."
        )
        return summary, fix
    if "ibv_modify_qp" in facts:
        reason = f" ({facts['ibv_reason'].strip()})" if facts.get("ibv_reason") else ""
        summary = (
            f"InfiniBand verbs call ibv_modify_qp failed{reason}: the queue pair to the peer could not be "
            "connected (the NICs cannot reach each other with these settings)" + on_ranks(hits)
        )
        fix = (
            "NCCL moves a queue pair to the peer's address (RTR/RTS) and the NIC refused: on RoCE pick the RoCE "
            "v2 GID of the NIC on every host, NCCL_IB_GID_INDEX=3 (list them with `show_gids`); on a "
            "rail-optimised fabric only NICs of the same rail reach each other: NCCL_CROSS_NIC=0; NCCL_IB_HCA=<nic> "
            "picks the NICs. Test the pair with `ib_write_bw` between the two hosts on the same NIC.\n"
            "NCCL_IB_DISABLE=1 confirms it is the fabric (NCCL falls back to sockets)."
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
    if "bind_host" in facts or "gloo_hostname_lookup" in facts:
        return _gloo_hostname(hits, facts)
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
    if ctx.facts.get("restarted_attempt") and ("gloo_mesh" in facts or "connect_host" in facts):
        return _restarted_connect(hits, ctx, facts)
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


def _restarted_connect(hits: list[Hit], ctx: Context, facts: dict) -> tuple[str, str]:
    """A restarted attempt's ranks that could not connect to each other: torchrun's c10d rendezvous shares its
    TCPStore with the workers' init_process_group (torch 2.5+, TORCH_DISABLE_SHARE_RDZV_TCP_STORE unset), and a
    restarted attempt's workers can read the previous attempt's addresses from it and connect to ports nobody
    listens on any more (pytorch/pytorch#135712, #167288: gloo's connectFullMesh refused, NCCL's connect
    retries); reproduced with torch 2.13 and gloo on one host under --standalone --max-restarts 2."""
    what = quote(facts["gloo_mesh"].strip()) if "gloo_mesh" in facts else facts["connect_host"]
    return (
        f"a restarted attempt (torchrun's restart {ctx.facts['restarted_attempt']}) could not connect its ranks "
        f"({what})"
        + on_ranks(hits)
        + ": the ranks likely connected to addresses the previous attempt left in the rendezvous store "
        "torchrun shares with them",
        "torchrun (torch 2.5 and later) shares its rendezvous store with init_process_group, and a restarted "
        "attempt can read the previous attempt's addresses from it (pytorch/pytorch#135712). Where an earlier "
        "attempt connected on the same hosts, the network is not the cause. Give each attempt a store of its own:\n"
        "export TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1   # before torchrun\n"
        "The error that made torchrun restart is an earlier attempt's: read it below (or in attempt_0/ of "
        "the --log-dir folder).",
    )


NETWORK_INTERFACE = Recogniser(
    # NCCL src/misc/socket.cc (ncclSocketInit, socketStartConnect), src/bootstrap.cc, transport/net_ib.cc,
    # misc/ibvwrap.cc; gloo's "Unable to find address for"
    kind="network_interface",
    templates=(
        "nccl:bootstrap-no-socket-interface-found",
        "nccl:ncclsocketinit-connecting-to-address-with-family",
        "nccl:net-connecting-to-address-with-family",  # the same check as 2.10-2.14 worded it (ncclSocketConnect)
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
        # NCCL 2.27+ (misc/socket.cc, 2.30's os/linux.cc): the connect that failed, and the retries given up, in
        # lower case and with the peer's address
        "nccl:connect-to-failed",
        "nccl:connect-to-returned-exceeded-error-retry",
        # torch/csrc/distributed/c10d/ProcessGroupGloo.cpp: gloo could not connect its full mesh of pairs
        "torch_cpp:gloo-connectfullmesh-failed-with",
        # bootstrap.cc (2.25+): NCCL_OOB_NET_IFNAME matches no device of the net plugin (ncclInvalidArgument)
        "nccl:no-device-found-matching-verify-nccl",
        "nccl:no-device-found-after-excluding-verify",
        # init.cc (2.30+): the ranks' hosts count different NICs (ncclSystemError unless told to ignore it)
        "nccl:detected-mixed-local-net-device-counts",
        "nccl:detected-mixed-local-collnet-device-counts",
        # transport/net_ib/p2p.cc (2.30+): a work completion in error, before the completion line that names its
        # status (ncclRemoteError when resiliency is off)
        "nccl:net-ib-got-cqe-with-error",
        # transport/net_ib/init.cc: no IP interface for the IB transport's out-of-band connections
        # (NCCL_SOCKET_IFNAME matching none, or more than one; ncclInternalError)
        "nccl:net-ib-no-ip-interface-found",
        # gloo's transport/tcp (vendored in torch): GLOO_SOCKET_IFNAME naming no interface, the host name
        # resolving to an address not this host's, a pair that never connected to the peer
        "torch_native:gloo-unable-to-find-address-for-interface",
        "torch_native:gloo-unable-to-bind-hostname-address",
        "torch_native:gloo-connect-timeout",
    ),
    title="network interface problem",
    anchors=(
        "no socket interface found",
        "Unable to find address for",
        "is neither AF_INET",
        "Got completion",
        "Call to ibv_",
        "Connect to",
        # NCCL 2.27+ (misc/socket.cc, 2.30's os/linux.cc): "socketStartConnect: connect to 10.0.0.2<52822> failed :
        # No route to host", "...: connect to ... returned ..., exceeded error retry count after 20 attempts"
        ": connect to ",
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
        "verify NCCL_OOB_NET_IFNAME",
        "device counts across ranks (min ",
        "NET/IB: Got CQE with error",
        "NET/IB : No IP interface found",
        # gloo transport/tcp: a pair that never connected to the peer's announced address (pair.h), and the host
        # name resolving to an address this host does not have (device.cc)
        "Connect timeout [",
        "; bind(2) for ",
    ),
    match=R(
        r"\] Connect timeout \[[^\s\]]{1,255}\]:\d+|Unable to find address for \S{1,255}; bind\(2\) for |"
        r"no socket interface found|Unable to find address for|is neither AF_INET|Got completion|Call to ibv_|"
        r"Call to connect failed|Attempted to connect incompatible devices|Socket : no interface found|"
        r"No interface found in the same subnet|device is incompatible with the local|Attempted to merge incompatible|"
        r"net devices with different link_layer|together with different link_layer|"
        r"Gloo connectFullMesh failed with|socket(?:Start|Poll)Connect: exceeded (?:retries|timeouts)|"
        r"connect (?:to [^\s<]{1,255}<\d+> )?returned [^\n]{0,80}exceeded error retry|"
        r"[Cc]onnect to [^\s<]{1,255}<\d+> (?:failed|returned \d+\()|No usable listening interface found|"
        r"pair\.cc:\d+\] connect\s{1,3}\[?[^\s\]]{1,255}\]?:\d+: |verify NCCL_OOB_NET_IFNAME|"
        # the WARN, not the INFO line NCCL prints instead when told to ignore the mismatch
        r"Detected mixed local (?:Coll)?Net device counts across ranks \(min \d+, max \d+\)\. Set |"
        r"NET/IB: Got CQE with error \(devIndex|NET/IB : No IP interface found"
    ),
    facts=(
        R(
            r"(?P<what>Bootstrap : no socket interface found|No usable listening interface found|NET/IB : No IP "
            r"interface found)"
        ),
        R(
            r"(?P<oob_ifname>no device found (?:matching|after excluding) (?:exactly )?(?P<oob_value>[^\s,]{0,100}), "
            r"verify NCCL_OOB_NET_IFNAME)"
        ),
        # the class alone decides how sure it is; the details, when printed whole, only describe it
        R(r"(?P<ib_cqe>NET/IB: Got CQE with error)"),
        R(r"Got CQE with error \(devIndex=(?P<ib_dev_index>\d+)[^)\n]{0,200}\((?P<ib_side>send|recv)\)"),
        R(
            r"(?P<net_count_mismatch>Detected mixed local (?P<net_coll>Coll)?Net device counts across ranks "
            r"\(min (?P<net_min>\d+), max (?P<net_max>\d+)\))"
        ),
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
        R(r"\] (?P<gloo_reason>Connect timeout) \[(?P<gloo_host>[^\s\]]{1,255})\]:(?P<gloo_port>\d+)"),
        R(
            r"Unable to find address for (?P<bind_host>\S{1,255}); bind\(2\) for (?P<bind_addr>\S{1,255}) failed "
            r"with: (?P<bind_reason>[^\n]{1,100})"
        ),
        R(r"(?P<gloo_hostname_lookup>rp != nullptr)\. Unable to find address for: "),
        # the connect retries NCCL gives up after: the peer's address never answered
        R(
            r"(?P<connect_retries>socket(?:Start|Poll)Connect: exceeded (?:retries|timeouts) \(\d+\)|connect "
            r"(?:to [^\s<]{1,255}<\d+> )?returned [^\n]{0,80}exceeded error retry count[^\n]{0,20})"
        ),
        NO_INTERFACE,
        R(r"connecting to address\s+with family (?P<family>\d+) is neither AF_INET"),
        # NCCL 2.23+ (transport/net_ib/p2p.cc) names the status before its number: "status=transport retry counter
        # exceeded(12)"; older releases and gin.cc print the number alone ("status=12", "with error 12")
        R(
            r"Got completion (?:from peer (?P<ib_peer>\S{1,100}) )?with (?:error |status=)(?:[A-Za-z][\w ]{0,60}\()?"
            r"(?P<ib_status>\d+)"
        ),
        R(r"Call to (?P<ibv_call>ibv_\w+) failed"),
        # misc/ibvwrap.cc: "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state
        # INIT, next state RTR, ..." (older: "failed with error Connection timed out")
        R(
            r"Call to (?P<ibv_modify_qp>ibv_modify_qp) failed(?: with (?:error )?(?:\d+ )?(?P<ibv_reason>[A-Za-z][^,\n]{0,60}))?"
        ),
        R(
            r"\] connect\s{1,3}\[?(?P<gloo_host>[^\s\]]{1,255})\]?:(?P<gloo_port>\d+): (?P<gloo_reason>[^\n]{1,100})"
        ),
        R(
            r"[Cc]onnect to (?P<connect_host>[^\s<]{1,255})<(?P<connect_port>\d+)> failed ?: "
            r"(?P<connect_reason>[^\n]{1,200})"
        ),
        # socketPollConnect (2.20-2.25): "Connect to 10.0.0.2<52822> returned 111(Connection refused) errno 115(...)"
        R(
            r"[Cc]onnect to (?P<connect_host>[^\s<]{1,255})<(?P<connect_port>\d+)> returned \d+\("
            r"(?P<connect_reason>[^)\n]{1,100})\)"
        ),
        R(r"Call to connect failed ?: (?P<connect_reason>[^\n]{1,200})"),
    ),
    span=1,  # gloo prints "connect" and the address on two lines
    # "Connection refused" is what any dead or unready peer gets, and an IB completion error (status 12, a
    # timeout) what RoCE settings the hosts do not share, a faulty link and a peer that died first all print:
    # only likely an interface / firewall problem. The rest (no interface found, a verbs call) is certain, but
    # ibv_modify_qp: the queue pair that cannot reach its peer is a RoCE GID, NICs on different rails of the
    # fabric (NCCL_CROSS_NIC=0 fixed it, nccl#2013) or an NCCL release's bug (a newer NCCL fixed it for others
    # there): only likely.
    # NCCL giving up its connect retries is the same: a peer that never answered, for whatever reason.
    # A connect that failed for any reason ("No route to host" is also what a firewall's REJECT answers,
    # "timed out" what its DROP leaves) is a firewall as much as an interface, and on one host a peer that
    # died or is not listening yet: likely, whatever the reason says.
    confirm=lambda hits, ctx: any(
        not (h.facts.get("gloo_reason") or h.facts.get("connect_reason"))
        and "ib_status" not in h.facts
        and "ib_cqe" not in h.facts
        and "connect_retries" not in h.facts
        and "gloo_mesh" not in h.facts
        and "ibv_modify_qp" not in h.facts
        for h in hits
    ),
    absorbs=("nccl_error", "nccl_system_error"),
    # NCCL's INFO lines of a connect or a queue pair it retries (misc/socket.cc, os/linux.cc, misc/ibvwrap.cc, 2.4+):
    # a run that goes on prints them too; the WARN of the retries given up, or of the call failing, is the failure
    reject=R(r"\A[^\n]*(?:returned [^\n]{0,80}, retrying|, retrying \d+/\d+ after \d+ msec of sleep)"),
    also=(
        Alternative(
            "network_fault",
            "a faulty InfiniBand/RoCE link or port between the hosts (or a peer that died first)",
            "Test the link on its own: ib_write_bw between the two hosts, `ibstat` (State: Active, no "
            "rising error counters: perfquery), and the other host's log for a failure before this one; "
            "NCCL_IB_DISABLE=1 confirms it is the IB path.",
            when=("ib_status", "ib_cqe"),
        ),
        Alternative(
            "rendezvous_or_port",
            "a firewall closing the ports the ranks connect on (or a peer not listening yet)",
            "From the other host: nc -zv <host> <port>. gloo and NCCL connect on random ports besides "
            "MASTER_PORT: open the firewall between the hosts for them (or allow the whole subnet), and check "
            "the peer was up and listening when this one connected.",
            when=("gloo_reason", "connect_reason", "connect_retries", "gloo_mesh"),
        ),
        Alternative(
            "nccl_bug_upgrade",
            "a bug of the NCCL release in use (a newer NCCL connected the same NICs for others)",
            "Upgrade NCCL (a newer torch, or the nvidia-nccl-cu* wheel matching torch's CUDA: pip install -U "
            'nvidia-nccl-cu12) and compare with NCCL_DEBUG=INFO\'s "NCCL version" line.',
            when=("ibv_modify_qp",),
        ),
    ),
    describe=_network,
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
    anchors=(
        "Got async event",
        "async fatal event",
        "Got async error event",
        # transport/net_ib (2.23+): a communicator's call that found the adapter's fatal-event count above zero,
        # printed after (or, where the log was cut, instead of) the event's own line
        "communicator encountered a fatal error (detected in",
    ),
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
        "nccl:communicator-encountered-fatal-error-detected-in",
    ),
    facts=(
        R(r"Got async event : (?P<ib_event>[^\n]{1,80})"),
        R(r"Got async error event: (?P<ib_event>[^\n]{1,80})"),
        R(r"(?P<ib_fatal>Got async error event)"),  # NCCL's own class: not the non-fatal events
        R(r"async fatal event(?: on (?:CQ|QP|SRQ)[^:\n]{0,100})?: (?P<ib_event>[^\n]{1,80})"),
        R(r"(?P<ib_event>async fatal event(?: on (?:CQ|QP|SRQ))?)"),
        R(r"(?P<ib_fatal>async fatal event)"),  # NCCL itself calls it fatal, whatever the event's own name
        # counted only for the events NCCL's async thread deems fatal (the device's, a CQ's, a QP's; not a port's)
        R(
            r"(?P<ib_fatal>communicator encountered a fatal error) \(detected in (?P<ib_detected_in>\w{1,60})\)"
        ),
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


def _backend(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("linalg_lib"):
        return _linalg_library(facts)
    if facts.get("no_gpus"):
        return (
            "the NCCL backend needs GPUs, and this process sees none",
            "Use backend='gloo' on CPU, or make the GPUs visible (CUDA_VISIBLE_DEVICES, --gpus all in Docker).",
        )
    if facts.get("gloo_device"):
        return (
            "gloo has no transport for this platform or for GLOO_DEVICE_TRANSPORT "
            f"({facts['gloo_device'].strip()})",
            "torch's gloo picks its transport by platform (TCP on Linux, libuv on macOS and Windows) unless "
            "GLOO_DEVICE_TRANSPORT names one: unset GLOO_DEVICE_TRANSPORT (or name one this build has: TCP, "
            "TCP_TLS only in builds with it, UV); a torch built without its platform's transport (a custom "
            "build) has none: install the official wheel.",
        )
    if facts.get("rdzv_scheme") or facts.get("no_distributed"):
        what = (
            f"no rendezvous handler for {facts['rdzv_scheme']}://"
            if facts.get("rdzv_scheme")
            else "this torch was built without torch.distributed"
        )
        return (
            f"{what}: this torch build lacks part of torch.distributed (a Windows or macOS build, or a custom one)",
            "Check with python -c 'import torch.distributed as d; print(d.is_available())': False is a build "
            "without it (older macOS and Windows binaries shipped so; a source build with USE_DISTRIBUTED=0), "
            "where the fix is a torch that has it, or training on Linux. On Windows torch "
            "has only gloo and the file:// / env:// rendezvous (no tcp:// store in old versions, no NCCL): use "
            "init_method='env://' (or file://) with backend='gloo', or train on Linux (WSL2 works), where the "
            "official torch wheels have NCCL and every rendezvous.",
        )
    if facts.get("acc_backend"):
        asked, used = facts["acc_backend"], facts["acc_use"]
        return (
            f"accelerate was asked for the {asked} backend, but on this machine it must use {used}"
            + on_ranks(hits),
            f"accelerate picks the backend from what is installed (torch_xla: xla; torch_npu: hccl; torch_mlu: "
            f"cncl; torch_musa: mccl; CUDA: nccl) and refuses another one passed to Accelerator / PartialState "
            f"(backend='{asked}', or the launcher's kwargs handler): drop the backend argument, or pass "
            f"backend='{used}'. If {used} is not what this machine should use, the package that brings it is "
            "installed by mistake (pip uninstall torch_xla, for one on a GPU machine).",
        )
    backend = facts.get("backend", "NCCL")
    summary = f"this torch has no {backend} backend (Distributed package doesn't have {backend} built in)"
    if backend in _OTHER_MISSING_BACKENDS:
        return summary + on_ranks(hits), _OTHER_MISSING_BACKENDS[backend]
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


# distributed_c10d.py raises "doesn't have <X> built in" where the build lacks that backend, one check per backend:
# told to switch to gloo, a build without gloo, or without Intel's XCCL, would be sent to the wrong fix
_OTHER_MISSING_BACKENDS = {
    "Gloo": (
        "This torch was built without gloo (USE_GLOO=0: a source or custom build; every official build for "
        "Linux, Windows and macOS has it). Install an official build of torch in the environment the job runs in "
        "(pip install torch, or pytorch.org's index for a CUDA build), or rebuild with USE_GLOO=1. For CUDA "
        "tensors only, backend='nccl' needs no gloo."
    ),
    "XCCL": (
        "XCCL is the backend for Intel GPUs (XPU): this torch was built without it (a CUDA or CPU build, or an "
        "XPU build without XCCL). On an Intel GPU install torch's XPU build for Linux (pip install torch "
        "--index-url https://download.pytorch.org/whl/xpu; torch.distributed.is_xccl_available() says whether "
        "the build has it); on NVIDIA GPUs use backend='nccl', on the CPU backend='gloo'."
    ),
}


def _linalg_library(facts: dict) -> tuple[str, str]:
    """ATen's linear-algebra kernels in a torch built without MAGMA (CUDA) or LAPACK (CPU): the op cannot run."""
    lib = facts["linalg_lib"]
    op = facts.get("linalg_op") or "a linear-algebra op"
    if lib == "LAPACK":
        return (
            f"this torch was built without LAPACK, which {op} needs on the CPU: a source build (or a custom one) "
            "made without a LAPACK library",
            "The official wheels and conda packages of torch have LAPACK (through MKL or OpenBLAS): install one. For "
            "a source build, install a LAPACK first (MKL, or OpenBLAS: apt install libopenblas-dev) and rebuild "
            "PyTorch; the build's CMake output should then find it and torch.__config__.show() list "
            "LAPACK is enabled.",
        )
    return (
        f"this torch was built without MAGMA, which {op} needs on a CUDA tensor: a source build (a Jetson, a "
        "custom CUDA) made without MAGMA",
        "The official CUDA wheels of torch have MAGMA: install one where there is one for the platform (pip install "
        "torch --index-url https://download.pytorch.org/whl/cu<XY>; NVIDIA's Jetson wheels for a Jetson). For a "
        "source build, install MAGMA for the CUDA version first (conda install -c pytorch magma-cuda<XY>, or build "
        "MAGMA from source) and rebuild PyTorch: its CMake output then says Compiling with MAGMA support and "
        "torch.__config__.show() lists Magma. Until then, run the op on the CPU (x.cpu(), then move the result "
        "back).",
    )


BACKEND_UNAVAILABLE = Recogniser(
    # torch distributed_c10d.py: "Distributed package doesn't have NCCL built in"; ProcessGroupNCCL.cpp
    kind="backend_unavailable",
    templates=(
        "torch:distributed-package-doesn-have-mpi-built",
        # the same check for each backend (distributed_c10d.py _new_process_group_helper): a build without it
        "torch:distributed-package-doesn-have-nccl-built",
        "torch:distributed-package-doesn-have-gloo-built",
        "torch:distributed-package-doesn-have-xccl-built",
        "torch_native:processgroupnccl-only-gpus",
        "torch_cpp:no-backend-type-associated-with-device",
        "torch:no-rendezvous-handler-for",
        # torch/distributed/distributed_c10d.py: a torch without NCCL asked for its timeout; a device type no
        # backend was registered for; an accelerator torch has no backend for
        "torch:attempted-to-get-default-timeout-for",
        "torch:default-backend-not-registered-for-device",
        "torch:we-detected-accelerator-on-your-machine",
        "lightning:torch-distributed-is-not-available-cannot",  # lightning/fabric/utilities/distributed.py
        # c10d/GlooDeviceFactory.cpp: no gloo transport for the platform or for GLOO_DEVICE_TRANSPORT
        "torch_native:gloo-unsupported-device",
        # accelerate/state.py: the backend passed to PartialState/Accelerator, overridden by the one accelerate
        # must use where torch_xla or another accelerator's torch plug-in is installed
        "accelerate:your-assigned-backend-is-not-available",
        # ATen's linear algebra in a build without MAGMA (CUDA) or LAPACK (CPU): cuda/linalg/BatchLinearAlgebra.cpp,
        # BatchLinearAlgebra.cpp
        "torch_native:magma-library-not-found-in-compilation",
        "torch_native:lapack-library-not-found-in-compilation",
        "torch_native:lu-requires-compiling-pytorch-with-magma",
        "torch_native:pytorch-was-not-compiled-with-magma",
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
        "(): unsupported gloo device",
        "Your assigned backend ",
        "MAGMA library not found in compilation",
        "LAPACK library not found in compilation",
        "requires compiling PyTorch with MAGMA",
        "PyTorch was not compiled with MAGMA support",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "torch.distributed is not available",
    ),
    facts=(
        R(
            r"Your assigned backend (?P<acc_backend>\w{1,20}) is not available, please use (?P<acc_use>\w{1,20})"
        ),
        R(r"doesn't have (?P<backend>NCCL|MPI|Gloo|UCC|XCCL)\b"),
        R(r"(?P<backend>NCCL) support is not compiled"),
        R(r"Default backend not registered for device : (?P<device_type>\w+)"),
        R(r"(?P<no_gpus>only supported with GPUs)"),
        R(r"(?P<gloo_device>makeDeviceFor(?:Hostname|Interface)\(\): unsupported gloo device)"),
        R(r"associated with device type (?P<device_type>\w+)"),
        R(r"No rendezvous handler for (?P<rdzv_scheme>\w+)://"),
        R(
            r"(?:(?<![\w.])(?P<linalg_op>(?!\w*(?:Error|Exception):)[A-Za-z_][\w.]{0,40}): )?"
            r"(?P<linalg_lib>MAGMA|LAPACK) library not found in compilation"
        ),
        R(
            r"Calling (?P<linalg_op>[\w.]{1,40}) on a CUDA tensor requires compiling PyTorch with (?P<linalg_lib>MAGMA)"
        ),
        R(
            r"(?:(?<![\w.])(?P<linalg_op>(?!\w*(?:Error|Exception):)[A-Za-z_][\w.]{0,40}): )?"
            r"PyTorch was not compiled with (?P<linalg_lib>MAGMA) support"
        ),
        # torch/distributed/__init__.py binds init_process_group and the rest only `if is_available()`: a build
        # without torch.distributed (older macOS binaries, USE_DISTRIBUTED=0) has the module but not them
        R(
            r"(?P<no_distributed>built without distributed support|has no attribute '_c10d_init'|"
            r"torch\.distributed is not available\. Cannot initialize|"
            r"module 'torch\.distributed' has no attribute 'init_process_group')"
        ),
    ),
    # a CPU tensor on an NCCL group: cpu_tensor_nccl. torch/distributed/rendezvous.py registers the tcp://,
    # env:// and file:// handlers in every build that has torch.distributed (Windows builds before 1.7 lacked
    # tcp:// and env://): "No rendezvous handler for localhost://" is an init_method with no scheme or a
    # misspelt one (urlparse("localhost:29500").scheme == "localhost"), not a build that lacks part of it
    # accelerate's raise as a traceback quotes it (the f-string, not the values): the message line says them
    # CPython's AttributeError names the object: only torch.distributed's module lacking init_process_group is a
    # build without it; another module or object (deepspeed, horovod.torch, an Accelerator) is the script calling
    # a function that object never had, and a "partially initialized module" is a circular import
    reject=R(
        r"associated with device type cpu\b|No rendezvous handler for (?!(?:env|tcp)://)|Your assigned backend "
        r"(?!\w{1,20} is not available, please use \w)"
        r"|(?<!module 'torch\.distributed' )has no attribute 'init_process_group'|partially initialized module"
    ),
    describe=_backend,
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
    gai = (facts.get("gai") or facts.get("gai_old") or "name resolution failed").strip()
    if facts.get("hydra_host"):
        host = facts["hydra_host"].strip()
        return (
            f"MPICH's mpiexec (Hydra) cannot resolve the host name {host!r} it was told to start processes on"
            + on_ranks(hits),
            f"Hydra looks up every host of -hosts / -f hostfile (and the scheduler's node list) before it starts "
            f"its proxies: make {host} resolve on the launching node (`getent hosts {host}`; add '<IP> {host}' to "
            "/etc/hosts or fix DNS), or list the hosts by IP address in the hostfile; check the name for a typo "
            "or a stale hostfile from another allocation.",
        )
    host = facts.get("unresolved_host")
    if host is None:  # torch 1.x's c10d does not say which name: the store's (MASTER_ADDR, the endpoint)
        return (
            f"the store's host name does not resolve ({gai})" + on_ranks(hits),
            "A rank looked up the host name of the rendezvous store (MASTER_ADDR, the rendezvous endpoint, the "
            "name a node advertises for itself) and the name did not resolve on that host. Make it resolve on "
            "every host: add '<IP> <name>' to /etc/hosts (or fix DNS / the pods' service names), or pass an IP "
            "address instead of the name: MASTER_ADDR=<IP>, --rdzv-endpoint <IP>:29500.",
        )
    return (
        f"the host name {host!r} does not resolve ({gai})" + on_ranks(hits),
        f"torch's store looks up {host} to find its own address. Make the name resolve on every host: add "
        f"'<this host's IP> {host}' to /etc/hosts (or fix DNS), or give torchrun an address instead: "
        "--rdzv-endpoint <IP>:29500 / MASTER_ADDR=<IP>. A warning about IPv6 alone is harmless when IPv4 works.",
    )


HOSTNAME_RESOLUTION = Recogniser(
    # torch socket.cpp: "The {IPv4 |IPv6 }network addresses of ({}, {}) cannot be retrieved (gai error: ...)";
    # before it (torch 1.x) c10d's tcputil::connect (torch/lib/c10d/Utils.cpp): "host not found: " and
    # gai_strerror of the failed getaddrinfo, glibc's words for a name that does not resolve
    kind="hostname_resolution",
    title="host name does not resolve",
    anchors=("network addresses of (", "host not found: ", "unable to get host address for "),
    templates=(
        "torch_cpp:the-network-addresses-of-cannot-be",
        "torch_native:c10d-host-not-found",
        # MPICH Hydra's src/pm/hydra/lib/utils/sock.c: mpiexec's lookup of a host it is to start proxies on
        "schedulers:hydra-host-address",
    ),
    match=R(
        r"(?P<family>IPv4|IPv6)? ?network addresses of \((?P<unresolved_host>[^,\s]{1,255}), \d+\) cannot be "
        r"retrieved \(gai error: (?P<gai>[^)]{1,100})\)|"
        r"\bhost not found: (?P<gai_old>Name or service not known|Temporary failure in name resolution|"
        r"No address associated with hostname|nodename nor servname provided, or not known)|"
        r"HYDU_sock_connect \([^)\n]{1,120}\): unable to get host address for (?P<hydra_host>[^\s()]{1,255})"
    ),
    # IPv6 failing alone is printed by runs that work; an IPv4 failure (or any without the family) confirms it
    confirm=lambda hits, ctx: any(h.facts.get("family") != "IPv6" for h in hits),
    describe=_hostname,
)
