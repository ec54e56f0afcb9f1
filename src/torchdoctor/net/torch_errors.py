"""Reading what torch.distributed printed when it failed: which host could not be reached, which NCCL error,
which collective timed out — the facts a verdict names, and what to try next for each.

``classify(text)`` returns one `Problem` per distinct failure found in a log or a traceback, e.g.::

    >>> [p.kind for p in classify("[E socket.cpp:860] [c10d] The client socket has timed out after 60s "
    ...                           "while trying to connect to 10.0.0.1:1234")]
    ['unreachable']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The patterns and hints are explain's (one copy of what torch prints): `torchdoctor.explain.kinds.comm`.
from torchdoctor.explain.kinds.comm import ADDRESS_FAILED as _ADDRESS_FAILED
from torchdoctor.explain.kinds.comm import GLOO_TIMEOUT as _GLOO_TIMEOUT
from torchdoctor.explain.kinds.comm import LAST_ERROR as _LAST_ERROR
from torchdoctor.explain.kinds.comm import LAST_WORK as _LAST_WORK
from torchdoctor.explain.kinds.comm import NCCL_DEBUG_HINT, REACH_HINT
from torchdoctor.explain.kinds.comm import NCCL_ERROR as _NCCL_ERROR
from torchdoctor.explain.kinds.comm import NO_INTERFACE as _NO_INTERFACE
from torchdoctor.explain.kinds.comm import PEER_CLOSED as _PEER_CLOSED
from torchdoctor.explain.kinds.comm import RENDEZVOUS as _RENDEZVOUS
from torchdoctor.explain.kinds.comm import UNREACHABLE_PATTERNS as _UNREACHABLE
from torchdoctor.explain.kinds.comm import WATCHDOG as _WATCHDOG
from torchdoctor.explain.kinds.comm import bogus_host as _bogus
from torchdoctor.rank_list import ranks_text

__all__ = ["NCCL_DEBUG_HINT", "REACH_HINT", "Problem", "classify"]


@dataclass
class Problem:
    """One failure read from torch's output: ``kind`` is one of unreachable, interface, rendezvous,
    nccl_error, collective_timeout, peer_closed."""

    kind: str
    summary: str
    fix: str
    facts: dict[str, Any] = field(default_factory=dict)


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
    lasts = [m.group("last_error").strip() for m in _LAST_ERROR.finditer(text)]
    for match in _NCCL_ERROR.finditer(text):
        reason, version = match.group("reason").strip(), match.group("nccl_version")
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
        problem.summary = (
            f"{op} (collective #{seq}) did not complete within {seconds:g}s on rank(s) {ranks_text(ranks)}"
        )
        if last:
            problem.facts.update(
                last_enqueued=int(last.group("last_enqueued")),
                last_completed=int(last.group("last_completed")),
            )
    return list(by_work.values())


def classify(text: str) -> list[Problem]:
    """Every distinct communication failure in ``text`` (a traceback, a launcher's output, a log)."""
    problems = _unreachable(text) + _nccl_errors(text) + _watchdog(text)
    for match in _NO_INTERFACE.finditer(text):
        name = match.group("interface")
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
                f"gloo timed out after {int(match.group('timeout_ms')) / 1000:g}s waiting for a {match.group('op')}",
                "A peer stopped sending: find the rank that is elsewhere or gone, and check the link "
                "(GLOO_SOCKET_IFNAME=<iface>).",
                {"op": match.group("op"), "timeout_ms": int(match.group("timeout_ms"))},
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
