"""Summarising ``NCCL_DEBUG=INFO`` output: what a person would grep for.

The NCCL version, the network NCCL chose and its interfaces (``NET/IB : Using [0]mlx5_0:1/IB``,
``NET/Socket : Using [0]eth0:10.0.0.1<0>``), the transport between each pair of ranks (``via P2P/IPC``,
``via SHM/direct/direct``, ``[send] via NET/IB/0/GDRDMA``, ``via NET/Socket/0``), and every ``NCCL WARN`` line
with what to try for it.

    >>> summary = summarise("node01:1:2 [0] NCCL INFO Channel 00 : 0[3000] -> 1[3000] via P2P/IPC")
    >>> summary.transports
    {'0->1': ['P2P/IPC']}
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from torchdoctor.explain.kinds.comm import NCCL_WARN_DEFAULT_HINT, NCCL_WARN_HINTS
from torchdoctor.findings import Finding

# "node01:63120:63120 [0] NCCL INFO ..." possibly behind a "(pid=909608) " or "[default0]:" prefix
# (bounded repeats: a 100,000-character line must not cost 100,000 squared steps)
_LINE = re.compile(
    r"(?P<host>[\w.\-]{1,255}):(?P<pid>\d{1,10}):(?P<tid>\d{1,10}) \[(?P<dev>\d{1,4})\] (?P<rest>.*)$"
)
_VERSION = re.compile(r"NCCL version (?P<version>\d+\.\d+\.\d+[\w.+\-]*)")
_CHANNEL = re.compile(
    r"Channel \d+(?:/\d+)? : (?P<src>\d+)\[[^\]]*\] -> (?P<dst>\d+)\[[^\]]*\]"
    r"(?: \[(?P<dir>send|receive)\])? via (?P<via>\S.*?)\s*$"
)
_NET_DEVICES = re.compile(r"NET/(?P<kind>IB|Socket) : Using (?P<devices>.+?)(?: ; OOB (?P<oob>\S+))?\s*$")
_DEVICE = re.compile(r"\[(?P<index>\d+)\](?P<name>[^\s:]+(?::\d+/\w+)?)(?::(?P<addr>[^\s<]+)<\d+>)?")
_BOOTSTRAP = re.compile(r"Bootstrap ?: Using (?P<devices>.+?)\s*$")  # NCCL 2.28: "Bootstrap: Using eth0:..."
_NETWORK = re.compile(r"Using network (?P<network>\S+)")
_WARN = re.compile(r"(?:(?P<where>\S{1,200}:\d{1,8}) )?NCCL WARN (?P<message>.*?)\s*$")

# (pattern, hint): the first that matches a WARN message gives its hint; one copy, shared with `explain`
WARN_HINTS = NCCL_WARN_HINTS
DEFAULT_HINT = NCCL_WARN_DEFAULT_HINT
# A line longer than this is cut: nobody's NCCL line is, and the patterns stay linear in the input.
MAX_LINE = 64 * 1024


@dataclass
class NcclSummary:
    """What a set of NCCL logs says: versions, network, interfaces, transport per peer pair, warnings."""

    versions: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)  # "IB", "Socket"
    interfaces: dict[str, list[str]] = field(default_factory=dict)  # host -> ["NET/IB mlx5_0:1/IB", ...]
    # "src->dst" -> ["NET/IB (mlx5_0:1/IB) GDRDMA", ...]: channels may use different NICs for one pair
    transports: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[dict[str, str]] = field(default_factory=list)  # {"host", "where", "message", "hint"}
    lines: int = 0

    @property
    def empty(self) -> bool:
        return not (self.versions or self.transports or self.warnings or self.interfaces)

    def transport_counts(self) -> dict[str, int]:
        """How many rank pairs use each transport, most used first."""
        return dict(Counter(t for used in self.transports.values() for t in used).most_common())


def hint_for(message: str) -> str:
    """What to try for one ``NCCL WARN`` message."""
    for pattern, hint in WARN_HINTS:
        if re.search(pattern, message):
            return hint
    return DEFAULT_HINT


def _transport(via: str, host: str, net_devices: dict[str, list[str]]) -> str:
    """``"NET/IB/0/GDRDMA"`` -> ``"NET/IB (mlx5_0:1/IB) GDRDMA"``; ``"SHM/direct/direct"`` -> ``"SHM"``."""
    parts = via.split("/")
    if parts[0] == "NET" and len(parts) >= 3:
        kind, index = parts[1], parts[2]
        devices = net_devices.get(host, [])
        name = devices[int(index)] if index.isdigit() and int(index) < len(devices) else f"dev {index}"
        extra = " ".join(parts[3:])
        return f"NET/{kind} ({name})" + (f" {extra}" if extra else "")
    if parts[0] == "SHM":
        return "SHM"
    if parts[0] == "P2P" and len(parts) >= 2:
        return "P2P/" + "/".join(parts[1:])
    return via


def summarise(text: str) -> NcclSummary:
    """Parse NCCL INFO/WARN output (one or several ranks' logs, in any order)."""
    summary = NcclSummary()
    net_devices: dict[str, list[str]] = {}
    pending: list[tuple[str, str, str, str]] = []
    seen_warnings: set[tuple[str, str]] = set()
    for raw in text.splitlines():
        raw = raw[:MAX_LINE]
        version = _VERSION.search(raw)
        if version and version.group("version") not in summary.versions:
            summary.versions.append(version.group("version"))
        match = _LINE.search(raw) if "] " in raw else None  # the cheap test first: most lines are not NCCL's
        if not match:
            continue
        summary.lines += 1
        host, rest = match.group("host"), match.group("rest")
        if warn := _WARN.search(rest):
            message = warn.group("message")
            if (host, message) not in seen_warnings:
                seen_warnings.add((host, message))
                summary.warnings.append(
                    {
                        "host": host,
                        "where": warn.group("where") or "",
                        "message": message,
                        "hint": hint_for(message),
                    }
                )
            continue
        if channel := _CHANNEL.search(rest):
            pending.append((host, channel.group("src"), channel.group("dst"), channel.group("via")))
        elif devices := _NET_DEVICES.search(rest):
            names = [d.group("name") for d in _DEVICE.finditer(devices.group("devices"))]
            if not names:  # "NET/IB : Using [RO]; OOB eth0:...": the IB plugin found no device (NCCL 2.28)
                continue
            net_devices[host] = names
            entry = f"NET/{devices.group('kind')} " + " ".join(names)
            if devices.group("oob"):
                entry += f" (OOB {devices.group('oob')})"
            _add(summary.interfaces.setdefault(host, []), entry)
        elif bootstrap := _BOOTSTRAP.search(rest):
            names = [
                d.group("name") + (f" {d.group('addr')}" if d.group("addr") else "")
                for d in _DEVICE.finditer(bootstrap.group("devices"))
            ]
            if not names:  # older NCCL: "Bootstrap : Using em1:10.0.0.2<0>"
                names = [bootstrap.group("devices").split("<")[0].replace(":", " ", 1)]
            _add(summary.interfaces.setdefault(host, []), "bootstrap " + ", ".join(names))
        elif network := _NETWORK.search(rest):
            _add(summary.networks, network.group("network"))
    for host, src, dst, via in pending:  # after the loop: a host's NET devices may be logged later
        _add(summary.transports.setdefault(f"{src}->{dst}", []), _transport(via, host, net_devices))
    return summary


def _add(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)


def findings(summary: NcclSummary, source: str = "the NCCL log") -> list[Finding]:
    """``net.nccl`` (versions, network, transports) and one ``net.nccl_warn`` per distinct WARN line."""
    if summary.empty:
        return [
            Finding(
                "net.nccl",
                "skip",
                f"no NCCL output in {source} (NCCL was not used, or NCCL_DEBUG was not INFO)",
            )
        ]
    counts = summary.transport_counts()
    transports = ", ".join(f"{name} ×{n}" for name, n in counts.items()) or "no connections logged"
    version = ", ".join(summary.versions) or "version not logged"
    network = f", network {'/'.join(summary.networks)}" if summary.networks else ""
    details: dict[str, Any] = {
        "versions": summary.versions,
        "networks": summary.networks,
        "interfaces": summary.interfaces,
        "transport_counts": counts,
        "transports": summary.transports,
        "source": source,
    }
    found = [
        Finding(
            "net.nccl",
            "warn" if summary.warnings else "ok",
            f"NCCL {version}{network}; rank pairs by transport: {transports}",
            details,
            "See the warnings below" if summary.warnings else "",
        )
    ]
    for warning in summary.warnings:
        found.append(
            Finding(
                "net.nccl_warn",
                "warn",
                f"{warning['host']}: NCCL WARN {warning['message']}",
                warning,
                warning["hint"],
            )
        )
    return found
