"""Reading what torch.distributed printed when it failed: which host could not be reached, which NCCL error,
which collective timed out — the facts a verdict names, and what to try next for each.

``classify(text)`` returns one `Problem` per distinct failure found in a log or a traceback, e.g.::

    >>> [p.kind for p in classify("[E socket.cpp:860] [c10d] The client socket has timed out after 60s "
    ...                           "while trying to connect to 10.0.0.1:1234")]
    ['unreachable']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

NCCL_DEBUG_HINT = (
    "NCCL_DEBUG=INFO torchdoctor net --nccl-debug   # shows each rank's transport and the failing call"
)
REACH_HINT = (
    "From every other host, check the port is reachable: nc -zv {host} {port}\n"
    "Open the port in the firewall, or pick a free one (MASTER_PORT / --rdzv-endpoint HOST:PORT).\n"
    "Use the interface the hosts share: export NCCL_SOCKET_IFNAME=<iface> GLOO_SOCKET_IFNAME=<iface>"
)


@dataclass
class Problem:
    """One failure read from torch's output: ``kind`` is one of unreachable, interface, rendezvous,
    nccl_error, collective_timeout, peer_closed."""

    kind: str
    summary: str
    fix: str
    facts: dict[str, Any] = field(default_factory=dict)


# The endpoint a client was trying to reach, as torch names it (host as given, port)
_UNREACHABLE = (
    # [c10d] The client socket has timed out after 60s while trying to connect to (IP1, 2222).
    re.compile(
        r"timed out after (?P<after>\d+m?s) while trying to connect to \((?P<host>[^,\s]+), (?P<port>\d+)\)"
    ),
    # ... timed out after 60s while trying to connect to 10.0.0.1:1234
    re.compile(
        r"timed out after (?P<after>\d+m?s) while trying to connect to (?P<host>[^\s:()]+):(?P<port>\d+)"
    ),
    # failed to connect to any network address of (0.0.188.125, 59771)
    re.compile(r"failed to connect to any network address of \((?P<host>[^,\s]+), (?P<port>\d+)\)"),
    # TCP client failed to connect/validate to host 10.231.0.1:29400 - retrying
    re.compile(r"failed to connect/validate to host (?P<host>[^\s:]+):(?P<port>\d+)"),
    # NCCL's socketStartConnect: Connect to 10.0.0.2<52822> failed : No route to host
    re.compile(r"Connect to (?P<host>[^\s<]+)<(?P<port>\d+)> failed ?: (?P<reason>[^\n]+)"),
)
# One resolved address that failed, with the reason: adds the why to the endpoint above it.
# failed to connect to [::ffff:0.104.99.143]:47389 (errno: 110 - Connection timed out)
_ADDRESS_FAILED = re.compile(
    r"failed to connect to \[?(?P<host>[^\s\]]+?)\]?:(?P<port>\d+) \(errno: (?P<errno>\d+) - (?P<reason>[^)]+)\)"
)
_NCCL_ERROR = re.compile(
    r"NCCL error in: (?P<where>\S+?), (?P<reason>[^,\n]+?)(?: \(run with NCCL_DEBUG=INFO for details\))?, "
    r"NCCL version (?P<version>[\w.+]+)"
)
_LAST_ERROR = re.compile(r"Last error:[ \t]*\n(?P<last>[^\n]*)")
_WATCHDOG = re.compile(
    r"\[Rank (?P<rank>\d+)\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), "
    r"OpType=(?P<op>\w+),.*?Timeout\(ms\)=(?P<timeout_ms>\d+)\) ran for (?P<ran_ms>\d+) milliseconds"
)
_LAST_WORK = re.compile(
    r"last enqueued NCCL work: (?P<enqueued>\d+), last completed NCCL work: (?P<completed>\d+)"
)
_RENDEZVOUS = re.compile(r"(?P<error>Rendezvous(?:Connection|Timeout|Closed)?Error): (?P<message>[^\n\"]+)")
_PEER_CLOSED = re.compile(r"Connection closed by (?:remote )?peer \[?(?P<host>[^\s\]<]+)\]?[:<](?P<port>\d+)")
_GLOO_TIMEOUT = re.compile(r"Timed out waiting (?P<ms>\d+)ms for (?P<op>\w+) operation")


def _bogus(host: str) -> bool:
    """A host torch produced from a mis-parsed numeric host name: 0.x.x.x, or a bare number."""
    return host.isdigit() or host.startswith("0.") or host.startswith("::ffff:0.")


def _unreachable(text: str) -> list[Problem]:
    endpoints: dict[tuple[str, str], dict[str, Any]] = {}
    for pattern in _UNREACHABLE:
        for match in pattern.finditer(text):
            facts = {k: v for k, v in match.groupdict().items() if v}
            endpoints.setdefault((facts["host"], facts["port"]), facts)
    for match in _ADDRESS_FAILED.finditer(text):
        address = match.group("host").removeprefix("::ffff:")
        reason = {"errno": match.group("errno"), "reason": match.group("reason")}
        if endpoints:  # one of the endpoint's resolved addresses (torch may print them garbled): keep the why
            first = next(iter(endpoints.values()))
            first.setdefault("reason", reason["reason"])
            first.setdefault("errno", reason["errno"])
        else:
            endpoints.setdefault(
                (address, match.group("port")), {"host": address, "port": match.group("port"), **reason}
            )
    problems = []
    for (host, port), facts in endpoints.items():
        reason = facts.get("reason") or (f"timed out after {facts['after']}" if "after" in facts else "")
        summary = f"cannot reach {host}:{port}" + (f" ({reason.strip()})" if reason else "")
        fix = REACH_HINT.format(host=host, port=port)
        if _bogus(host):
            summary += "; the address torch tried looks like a host name misread as a number"
            fix = (
                "The rendezvous host name was read as a number (a purely numeric host name?).\n"
                "Pass the IP address instead: MASTER_ADDR=<ip of rank 0> or --rdzv-endpoint <ip>:<port>\n"
                + fix
            )
        problems.append(Problem("unreachable", summary, fix, facts))
    return problems


def _nccl_errors(text: str) -> list[Problem]:
    found: dict[tuple[str, str], Problem] = {}
    lasts = [m.group("last").strip() for m in _LAST_ERROR.finditer(text)]
    for match in _NCCL_ERROR.finditer(text):
        reason, version = match.group("reason").strip(), match.group("version")
        if (reason, version) in found:
            continue
        last = next((line for line in lasts if line), "")
        facts = {"reason": reason, "nccl_version": version, "where": match.group("where"), "last_error": last}
        fix = _nccl_fix(reason, last)
        summary = f"NCCL {version}: {reason}" + (f" — {last}" if last else "")
        found[(reason, version)] = Problem("nccl_error", summary, fix, facts)
    return list(found.values())


def _nccl_fix(reason: str, last: str) -> str:
    lowered = f"{reason} {last}".lower()
    if "no socket interface" in lowered:
        return "NCCL found no usable network interface: export NCCL_SOCKET_IFNAME=<iface> (see `ip -br addr`)"
    if "no route to host" in lowered or "connection refused" in lowered or "connect to" in lowered:
        return (
            "A peer is unreachable on NCCL's data port: open the firewall between the hosts (NCCL uses random "
            "ports) and pin the interface: export NCCL_SOCKET_IFNAME=<iface>\n" + NCCL_DEBUG_HINT
        )
    if "cuda" in lowered:
        return "Try without GPU peer-to-peer: NCCL_P2P_DISABLE=1 torchdoctor net\n" + NCCL_DEBUG_HINT
    return (
        "Rerun with NCCL's log to see the failing call:\n"
        + NCCL_DEBUG_HINT
        + "\nThen try NCCL_IB_DISABLE=1 (InfiniBand) or NCCL_P2P_DISABLE=1 (GPU peer-to-peer) to isolate it."
    )


def _watchdog(text: str) -> list[Problem]:
    by_work: dict[tuple[str, str], Problem] = {}
    for match in _WATCHDOG.finditer(text):
        op, seq = match.group("op"), match.group("seq")
        problem = by_work.get((op, seq))
        if problem is None:
            minutes = int(match.group("timeout_ms")) / 60000
            facts = {"op": op, "seq": int(seq), "timeout_ms": int(match.group("timeout_ms")), "ranks": []}
            fix = (
                f"A rank never reached {op} #{seq}, or the link stalled. Find the rank that is elsewhere "
                "(py-spy dump --pid PID on each rank), then rerun the smoke test:\n" + NCCL_DEBUG_HINT
            )
            if minutes >= 10:
                fix += "\nShorten the wait while debugging: init_process_group(..., timeout=timedelta(minutes=2))"
            problem = by_work[(op, seq)] = Problem("collective_timeout", "", fix, facts)
        rank = int(match.group("rank"))
        if rank not in problem.facts["ranks"]:
            problem.facts["ranks"].append(rank)
    last = _LAST_WORK.search(text)
    for (op, seq), problem in by_work.items():
        ranks = sorted(problem.facts["ranks"])
        problem.facts["ranks"] = ranks
        seconds = problem.facts["timeout_ms"] / 1000
        problem.summary = f"{op} (collective #{seq}) did not complete within {seconds:g}s on rank(s) {', '.join(map(str, ranks))}"
        if last:
            problem.facts.update(
                last_enqueued=int(last.group("enqueued")), last_completed=int(last.group("completed"))
            )
    return list(by_work.values())


_NO_INTERFACE = re.compile(r"Unable to find address for: (?P<name>\S+)")


def classify(text: str) -> list[Problem]:
    """Every distinct communication failure in ``text`` (a traceback, a launcher's output, a log)."""
    problems = _unreachable(text) + _nccl_errors(text) + _watchdog(text)
    for match in _NO_INTERFACE.finditer(text):
        name = match.group("name")
        problems.append(
            Problem(
                "interface",
                f"there is no network interface {name!r} here (GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME)",
                f"Name an interface this host has, the one that reaches the other hosts (`ip -br addr`):\n"
                f"export GLOO_SOCKET_IFNAME=<iface> NCCL_SOCKET_IFNAME=<iface>   # instead of {name}",
                {"interface": name},
            )
        )
        break
    for match in _GLOO_TIMEOUT.finditer(text):
        problems.append(
            Problem(
                "collective_timeout",
                f"gloo timed out after {int(match.group('ms')) / 1000:g}s waiting for a {match.group('op')}",
                "A peer stopped sending: find the rank that is elsewhere or gone, and check the link "
                "(GLOO_SOCKET_IFNAME=<iface>).",
                {"op": match.group("op"), "timeout_ms": int(match.group("ms"))},
            )
        )
        break
    for match in _PEER_CLOSED.finditer(text):
        host = match.group("host")
        problems.append(
            Problem(
                "peer_closed",
                f"the connection to {host}:{match.group('port')} was closed: that rank died or was killed",
                f"Look at the rank on {host} first: its error is the cause, this one the consequence.",
                {"host": host, "port": match.group("port")},
            )
        )
        break
    if not problems:
        match = _RENDEZVOUS.search(text)
        if match:
            problems.append(
                Problem(
                    "rendezvous",
                    f"{match.group('error')}: {match.group('message').strip()}",
                    "Check that every node was started with the same --rdzv-endpoint, --rdzv-id and --nnodes, "
                    "and that the endpoint's host is reachable from all of them.",
                    {"error": match.group("error")},
                )
            )
    return problems
