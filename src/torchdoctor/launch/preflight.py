"""Checks before torchrun starts, each done in seconds, so that a rendezvous that cannot work is named with
its fix instead of waited out (torch waits 600 s by default) or reported as pages of C++ frames.

- ``dist.preflight_host``: the rendezvous host resolves (else: `getent hosts HOST`, /etc/hosts), and on
  several nodes a rendezvous host named other than this one does not resolve to a loopback address here
  (a copied /etc/hosts line: this node would look for the rendezvous on itself); on several nodes this
  node's own name resolves (torch's c10d rendezvous looks it up, and dies on a name nothing knows).
- ``dist.preflight_port``: on the node that hosts the rendezvous, the host is one of this machine's
  addresses and the port is free (else: who holds it, and the flag that picks another).
- ``dist.preflight_reach``: on the other nodes, the port answers (a refusal only means the host node has
  not started yet, unless this is the only node).
- ``dist.preflight_interface``: the interfaces named in ``GLOO_SOCKET_IFNAME`` / ``NCCL_SOCKET_IFNAME``
  exist (else: the ones there are).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path

from torchdoctor.findings import Finding

# Seconds for a name to resolve or a port to answer: a healthy network does either in milliseconds.
TIMEOUT = 3.0
INTERFACE_VARIABLES = ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")


def preflight(
    host: str,
    port: int,
    hosted_here: bool | None = None,
    port_flag: str = "--master-port",
    single_node: bool = False,
    environ: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> list[Finding]:
    """Every pre-flight finding for a rendezvous at ``host:port``.

    ``hosted_here``: this node hosts the rendezvous store (static rendezvous: node rank 0); ``None``
    decides as torch's c10d does, by whether ``host`` is an address of this machine. ``port_flag`` is
    how the user gave the port (``--master-port`` or ``--rdzv-endpoint``), for the fix. ``port`` 0 means
    torch picks a free one (``--standalone``): nothing to check there.
    """
    environ = os.environ if environ is None else environ
    findings = [check_interfaces(environ)]
    if port == 0:
        return findings
    resolved = check_host(host, timeout)
    findings.append(resolved)
    if resolved.status == "fail":
        return findings
    addresses = resolved.details["addresses"]
    if not single_node:
        elsewhere = check_loopback_name(host, addresses) or check_own_name(host, timeout=timeout)
        if elsewhere is not None:
            return [*findings[:-1], elsewhere]
    local = any(is_local_address(a) for a in addresses)
    if hosted_here is None:
        hosted_here = local
    if hosted_here:
        findings.append(check_port_free(host, port, local, port_flag, addresses))
    else:
        findings.append(check_reachable(host, port, single_node, timeout))
    return findings


def failures(findings: list[Finding]) -> list[Finding]:
    """The findings that stop a launch."""
    return [f for f in findings if f.status == "fail"]


def check_host(host: str, timeout: float = TIMEOUT) -> Finding:
    """``dist.preflight_host``: ``host`` resolves to an address within ``timeout`` seconds."""
    result: dict = {}

    def resolve() -> None:
        try:
            result["addresses"] = sorted({info[4][0] for info in socket.getaddrinfo(host, None)})
        except (OSError, UnicodeError) as error:
            result["error"] = getattr(error, "strerror", None) or str(error)

    thread = threading.Thread(target=resolve, daemon=True)  # getaddrinfo has no timeout of its own
    thread.start()
    thread.join(timeout)
    fix = (
        f"`getent hosts {host}` prints nothing here: add '<address> {host}' to /etc/hosts on every node, "
        "fix DNS, or give the IP address instead"
    )
    if "addresses" in result:
        return Finding(
            "dist.preflight_host",
            "ok",
            f"rendezvous host {host} is {', '.join(result['addresses'])}",
            {"host": host, "addresses": result["addresses"]},
        )
    why = result.get("error") or f"no answer from the resolver in {timeout:g}s"
    return Finding(
        "dist.preflight_host",
        "fail",
        f"rendezvous host {host!r} does not resolve ({why})",
        {"host": host, "error": why},
        fix,
    )


def check_loopback_name(host: str, addresses: list[str], this_host: str | None = None) -> Finding | None:
    """``dist.preflight_host`` on one of several nodes: the failure when ``host``, a name other than this
    node's own, resolves here only to loopback addresses (``127.0.1.1 node01`` copied into every node's
    /etc/hosts): this node would look for the rendezvous on itself, and wait. None when that is not so;
    ``localhost`` or a loopback address given as such is the user's choice (every node on one machine)."""
    this_host = this_host or socket.gethostname()
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None  # an address, not a name: what was given is what is used
    except ValueError:
        pass
    if host.lower() == "localhost" or not addresses:
        return None
    if not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses):
        return None
    if host.split(".")[0].lower() == this_host.split(".")[0].lower():
        return None  # this node's own name: it is the rendezvous host, and its store listens on every address
    shown = ", ".join(addresses)
    return Finding(
        "dist.preflight_host",
        "fail",
        f"rendezvous host {host} resolves here to {shown}, a loopback address: on {this_host} that is "
        f"{this_host} itself, not {host}, so this node would look for the rendezvous on itself",
        {"host": host, "addresses": addresses, "this_host": this_host},
        f"on {this_host}, `getent hosts {host}` shows {addresses[0]}: map {host} to the address the nodes share "
        f"(`hostname -I` on {host}) in /etc/hosts here, instead of {addresses[0]}, or give that IP address "
        "instead of the name",
    )


def check_own_name(host: str, this_host: str | None = None, timeout: float = TIMEOUT) -> Finding | None:
    """``dist.preflight_host`` on one of several nodes meeting at ``host``: the failure when this node's own
    host name does not resolve. torch's c10d rendezvous looks it up to tell whether this node hosts the store
    (unless ``host`` is ``localhost``, a loopback address or this very name), and its launcher dies at once
    with ``socket.gaierror`` (a container or a new node whose name is in no /etc/hosts)."""
    this_host = this_host or socket.gethostname()
    if host.lower() in ("localhost", this_host.lower()) or _is_loopback(host):
        return None
    found = check_host(this_host, timeout)
    if found.status == "ok":
        return None
    why = found.details["error"]
    return Finding(
        "dist.preflight_host",
        "fail",
        f"this node's own name {this_host!r} does not resolve here ({why}): torch's launcher looks it up to "
        "tell whether this node hosts the rendezvous, and stops at once",
        {"this_host": this_host, "error": why},
        f"add '<address> {this_host}' to /etc/hosts on this node (the address the other nodes reach it at: "
        f"`hostname -I`), or fix DNS; `getent hosts {this_host}` must print it",
    )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_local_address(address: str) -> bool:
    """Whether ``address`` belongs to this machine: only then can a socket be bound to it."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((address, 0))
        return True
    except OSError:
        return False


def check_port_free(
    host: str, port: int, local: bool, port_flag: str = "--master-port", addresses: list[str] = ()
) -> Finding:
    """``dist.preflight_port`` on the node that hosts the rendezvous: ``host`` is an address of this
    machine (or the others would never find the store) and ``port`` can be listened on."""
    details = {"host": host, "port": port, "addresses": list(addresses)}
    if not local:
        return Finding(
            "dist.preflight_port",
            "fail",
            f"this node hosts the rendezvous, but {host} ({', '.join(addresses)}) is not one of its "
            "addresses: the nodes, this one included, would wait for a store nobody opens",
            details,
            "give an address of this machine (127.0.0.1 on one node; on several, one the others reach: "
            "`hostname -I`), or start this node with a node rank other than 0",
        )
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as torch's store does
            probe.bind(("", port))
            probe.listen(1)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            why = error.strerror or str(error)
            return Finding(
                "dist.preflight_port",
                "fail",
                f"port {port} cannot be listened on here: {why}",
                {**details, "error": why},
                _other_port_fix(host, port, port_flag),
            )
        holder = port_holder(port)
        details["holder"] = holder
        who = f", by pid {holder['pid']} ({holder['command']})" if holder else ""
        return Finding(
            "dist.preflight_port",
            "fail",
            f"port {port} is already taken on this node{who}",
            details,
            _other_port_fix(host, port, port_flag)
            + (f", or stop that process if it is an old run (kill {holder['pid']})" if holder else ""),
        )
    return Finding("dist.preflight_port", "ok", f"port {port} is free on this node", details)


def _other_port_fix(host: str, port: int, port_flag: str) -> str:
    free = free_port_near(port)
    between = "=" if port_flag.isupper() else " "  # a variable (PET_MASTER_PORT, MASTER_PORT), or a flag
    if port_flag in ("--rdzv-endpoint", "PET_RDZV_ENDPOINT"):
        shown = f"[{host}]" if ":" in host else host
        return f"pick a free port on every node: {port_flag}{between}{shown}:{free}"
    return f"pick a free port on every node: {port_flag}{between}{free}"


def free_port_near(port: int) -> int:
    """The first port after ``port`` that can be listened on here (else one the system picks)."""
    for candidate in range(port + 1, min(port + 100, 65535) + 1):
        try:
            with socket.socket() as probe:
                probe.bind(("", candidate))
            return candidate
        except OSError:
            continue
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def port_holder(port: int, root: Path = Path("/")) -> dict | None:
    """``{"pid": ..., "command": ...}`` of a process listening on TCP ``port``, read from
    ``/proc/net/tcp{,6}`` and ``/proc/*/fd``; None when it cannot be told (another user's process)."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (root / "proc/net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return None
    for proc in (root / "proc").iterdir():
        if not proc.name.isdigit():
            continue
        if inodes.intersection(_fd_links(proc)):
            try:
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                command = ""
            return {"pid": int(proc.name), "command": " ".join(command.split())[:120] or "?"}
    return None


def _fd_links(proc: Path) -> set[str]:
    links = set()
    try:
        fds = list((proc / "fd").iterdir())
    except OSError:  # another user's process, or gone
        return links
    for fd in fds:
        try:
            links.add(os.readlink(fd))
        except OSError:  # closed meanwhile (the listing's own descriptor, for one)
            pass
    return links


def check_reachable(host: str, port: int, single_node: bool = False, timeout: float = TIMEOUT) -> Finding:
    """``dist.preflight_reach`` on a node that does not host the rendezvous: ``host:port`` answers.

    A refusal is a failure only for ``single_node`` (no one else will ever open it); on several nodes
    it means the host node has not started yet, which is fine."""
    details = {"host": host, "port": port}
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except ConnectionRefusedError:
        if single_node:
            return Finding(
                "dist.preflight_reach",
                "fail",
                f"nothing listens on {host}:{port}, and this is the only node: the rendezvous would "
                "wait for a store nobody opens",
                details,
                "on one node leave the address out (or give 127.0.0.1, or --standalone)",
            )
        return Finding(
            "dist.preflight_reach",
            "ok",
            f"{host}:{port} refuses for now: fine if the node hosting the rendezvous has not started yet",
            details,
        )
    except TimeoutError:
        return Finding(
            "dist.preflight_reach",
            "fail" if single_node else "warn",
            f"no answer from {host}:{port} in {timeout:g}s",
            details,
            f"check the address and that a firewall lets port {port} through: "
            f"`nc -vz {host} {port}` from this node",
        )
    except OSError as error:
        why = error.strerror or str(error)
        return Finding(
            "dist.preflight_reach",
            "fail",
            f"cannot reach {host}:{port} from this node: {why}",
            {**details, "error": why},
            f"check the address: `ip route get {host}` shows how this node would reach it",
        )
    return Finding("dist.preflight_reach", "ok", f"{host}:{port} answers", details)


def interfaces(root: Path = Path("/")) -> list[str]:
    """The network interfaces of this machine (``/sys/class/net``)."""
    try:
        return sorted(p.name for p in (root / "sys/class/net").iterdir())
    except OSError:
        return sorted(name for _, name in socket.if_nameindex())


def check_interfaces(environ: Mapping[str, str], present: list[str] | None = None) -> Finding:
    """``dist.preflight_interface``: every interface ``GLOO_SOCKET_IFNAME`` names exists, and
    ``NCCL_SOCKET_IFNAME`` matches one (NCCL reads its names as prefixes, ``=name`` exact, ``^`` excludes)."""
    present = interfaces() if present is None else present
    asked = {v: environ[v] for v in INTERFACE_VARIABLES if environ.get(v, "").strip()}
    if not asked:
        return Finding(
            "dist.preflight_interface", "skip", "no socket interface named (GLOO/NCCL_SOCKET_IFNAME)"
        )
    missing = []
    for variable, value in asked.items():
        names = [n.strip() for n in value.split(",") if n.strip()]
        if variable == "GLOO_SOCKET_IFNAME":
            missing += [(variable, n) for n in names if n not in present]
        elif not names[0].startswith("^"):
            exact = [n[1:] for n in names if n.startswith("=")]
            prefixes = [n for n in names if not n.startswith("=")]
            if not any(p in exact or any(p.startswith(x) for x in prefixes) for p in present):
                missing.append((variable, value))
    details = {"asked": asked, "present": present}
    if not missing:
        said = ", ".join(f"{k}={v}" for k, v in asked.items())
        return Finding("dist.preflight_interface", "ok", f"{said}: present", details)
    named = "; ".join(f"{variable}={name!r}" for variable, name in missing)
    return Finding(
        "dist.preflight_interface",
        "fail",
        f"no such network interface on this node: {named} (there are: {', '.join(present)})",
        details,
        f"export {missing[0][0]}=<one of {', '.join(present)}>, the one the other nodes reach "
        "(`ip -br addr` shows their addresses)",
    )
