"""Which address a rank offers its peers, and whether this host has a route to a peer's.

gloo listens on the address of the interface ``GLOO_SOCKET_IFNAME`` names (else the one this host's name
resolves to) and tells the other ranks to connect there; when that interface is on a network the other hosts
do not share, they fail at ``init`` with ``connect: Network is unreachable`` and no address. Each rank says
what it offers when it joins, so that the rank that cannot connect can name whose address it cannot reach.
"""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct
from collections.abc import Mapping

_SIOCGIFADDR = 0x8915  # Linux: the IPv4 address of an interface


def interface_addresses() -> dict[str, str]:
    """This host's interfaces with an IPv4 address: ``{"eth0": "10.0.0.2", ...}`` (empty where it cannot be read)."""
    found = {}
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return found
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for name in names:
            try:
                packed = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:  # no IPv4 address on it (down, or IPv6 only)
                continue
            found[name] = socket.inet_ntoa(packed[20:24])
    return found


def offered_address(environ: Mapping[str, str], backend: str = "gloo") -> dict[str, str]:
    """``{"interface", "address", "variable"}``: what this rank's backend listens on and tells its peers.

    The first interface of ``GLOO_SOCKET_IFNAME`` (``NCCL_SOCKET_IFNAME`` for NCCL, when it names one plainly),
    else the address this host's name resolves to (``interface`` empty)."""
    variable = "NCCL_SOCKET_IFNAME" if backend == "nccl" else "GLOO_SOCKET_IFNAME"
    named = environ.get(variable, "").split(",")[0].strip()
    if named and not named.startswith(("^", "=")):
        return {"interface": named, "address": interface_addresses().get(named, ""), "variable": variable}
    try:
        address = socket.gethostbyname(socket.gethostname())
    except OSError:
        address = ""
    return {"interface": "", "address": address, "variable": variable}


def no_route(address: str) -> str:
    """Why this host cannot send to ``address`` (``"Network is unreachable"``), or "" when it has a route.

    A UDP ``connect`` sends nothing: it only looks the route up, so it answers at once."""
    try:
        family = socket.AF_INET6 if ipaddress.ip_address(address).version == 6 else socket.AF_INET
    except ValueError:
        return ""
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((address, 9))
        except OSError as error:
            return error.strerror or str(error)
    return ""
