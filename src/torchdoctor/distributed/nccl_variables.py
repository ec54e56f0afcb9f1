"""NCCL's own variables with values NCCL cannot use: interfaces this host lacks, words where it reads a number.

NCCL reads its whole-number settings with ``strtoll`` (src/misc/param.cc): ``NCCL_P2P_DISABLE=yes`` is read as
0 (or the default), so P2P stays on with no message unless NCCL_DEBUG=INFO. ``NCCL_SOCKET_IFNAME`` is a comma
list of interface name prefixes (``=eth0`` an exact name, ``^docker`` an exclusion); when none of them names an
interface here, NCCL stops at start-up with "Bootstrap : no socket interface found".
"""

from __future__ import annotations

import socket
from collections.abc import Mapping

# NCCL settings read as a whole number (NCCL_PARAM in NCCL's sources), the ones people set by hand.
NUMBER_VARIABLES = (
    "NCCL_P2P_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_NVLS_ENABLE",
    "NCCL_CUMEM_ENABLE",
    "NCCL_NET_GDR_READ",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_BUFFSIZE",
    "NCCL_NTHREADS",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_SOCKET_NTHREADS",
    "NCCL_LAUNCH_MODE_BLOCKING",
)
# The variables whose interface list is matched against this host's interfaces.
INTERFACE_VARIABLES = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")


def interfaces() -> list[str]:
    """The network interfaces of this host (``lo``, ``eth0``, ...)."""
    return [name for _, name in socket.if_nameindex()]


def addressed_interfaces(inet6: str = "/proc/net/if_inet6") -> list[str]:
    """The interfaces of this host with an IP address (IPv4, or IPv6 in ``/proc/net/if_inet6``): the only ones
    gloo and NCCL can listen on; one without (never configured, its address gone) stops gloo at init with
    "Unable to find address for: IFACE"."""
    from torchdoctor.net.addresses import interface_addresses

    found = list(interface_addresses())
    try:
        lines = open(inet6, encoding="ascii").read().splitlines()
    except OSError:
        lines = []
    found += [fields[-1] for fields in map(str.split, lines) if fields and fields[-1] not in found]
    return found


def routed_interface(route_table: str = "/proc/net/route") -> str | None:
    """The interface of the default route (Linux's routing table), the one other hosts are reached by."""
    try:
        lines = open(route_table, encoding="ascii").read().splitlines()[1:]
    except OSError:
        return None
    return next(
        (fields[0] for fields in map(str.split, lines) if len(fields) > 1 and fields[1] == "00000000"), None
    )


def not_a_number(environ: Mapping[str, str]) -> dict[str, str]:
    """The whole-number NCCL settings set to something ``strtoll`` does not read whole (``yes``, ``true``, ``1.5``)."""
    return {name: environ[name] for name in NUMBER_VARIABLES if name in environ and not _whole(environ[name])}


def _whole(value: str) -> bool:
    text = value.strip()
    text = text[1:] if text[:1] in "+-" else text
    return text.isdigit() or (text.lower().startswith("0x") and len(text) > 2 and _hex(text[2:]))


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


def missing_interfaces(environ: Mapping[str, str], present: list[str]) -> dict[str, str]:
    """The ``*_SOCKET_IFNAME`` variables none of whose entries names an interface in ``present``, as NCCL
    matches them (a prefix; ``=name`` exact). An exclusion list (``^docker,lo``) is left alone: whatever it
    leaves is fine."""
    missing = {}
    for name in INTERFACE_VARIABLES:
        value = environ.get(name, "").strip()
        if not value or value.startswith("^"):
            continue
        wanted = [entry.strip() for entry in value.split(",") if entry.strip()]
        if name == "GLOO_SOCKET_IFNAME":  # gloo takes exact names only
            found = any(entry in present for entry in wanted)
        else:
            found = any(
                entry[1:] in present if entry.startswith("=") else any(i.startswith(entry) for i in present)
                for entry in wanted
            )
        if not found:
            missing[name] = value
    return missing
