"""From what each rank reported (and what the launcher printed) to verdicts a person can act on.

The ranks' states carry job-wide observations (who never joined, who had not entered a stuck collective,
whose contribution came back wrong), so a verdict can be given from any subset of them: all of one host's
ranks, or a single rank under torchrun.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping
from typing import Any

from torchdoctor.findings import Finding
from torchdoctor.net.rank_state import COLLECTIVE_STAGES, RankState
from torchdoctor.net.torch_errors import NCCL_DEBUG_HINT, classify
from torchdoctor.rank_list import who

# torchrun's failure block: "rank : 1 (local_rank: 1)" ... "exitcode : -11 (pid: 42)" ... "traceback : ..."
_FAILURE = re.compile(
    r"host\s*:\s*(?P<host>\S+)\s*\n\s*rank\s*:\s*(?P<rank>\d+) \(local_rank: \d+\)\s*\n\s*exitcode\s*:\s*"
    r"(?P<exitcode>-?\d+)[^\n]*\n(?:[^\n]*\n)?\s*traceback\s*:\s*(?P<traceback>[^\n]*)"
)
_TRY_NEXT = (
    "Then, one at a time: NCCL_P2P_DISABLE=1 (GPU peer-to-peer), NCCL_IB_DISABLE=1 (InfiniBand), "
    "NCCL_SOCKET_IFNAME=<iface> / GLOO_SOCKET_IFNAME=<iface> (the interface the hosts share)"
)


_GLOO_NEXT = (
    "gloo runs over TCP: on each host GLOO_SOCKET_IFNAME must name the interface the other hosts reach "
    "(`ip -br addr`; `ip route get <another host's address>`), and no firewall may drop the ports between the "
    "hosts (gloo connects on random ports)"
)


def _next_steps(states) -> str:
    """What to try next for the backend the ranks used: NCCL's debug log and switches, or gloo's TCP."""
    if {state.backend for state in states.values() if state.backend} == {"gloo"}:
        return _GLOO_NEXT
    return NCCL_DEBUG_HINT + "\n" + _TRY_NEXT


# Below this a stage that timed out may have needed longer, not a rank or the network: the verdict says so.
SHORT_TIMEOUT = 10.0


def _too_short(timeout: float) -> str:
    """What a verdict about a wait adds when the wait was short: the timeout may be the cause."""
    if timeout >= SHORT_TIMEOUT:
        return ""
    return f"; the --timeout of {timeout:g}s may be too short for this stage: try --timeout 30 first"


def _who(rank: int, hosts: Mapping[int, str]) -> str:
    host = hosts.get(rank)
    return f"rank {rank}" + (f" on {host}" if host else "")


def launcher_failures(output: str) -> dict[int, dict[str, Any]]:
    """Ranks torchrun reported as failed: ``{rank: {"host", "exitcode", "signal", "traceback"}}``."""
    failed = {}
    for match in _FAILURE.finditer(output or ""):
        code = int(match.group("exitcode"))
        failed[int(match.group("rank"))] = {
            "host": match.group("host"),
            "exitcode": code,
            "killed": code == -15,  # SIGTERM: torchrun stopping the others after a failure
            "traceback": match.group("traceback").strip(),
        }
    return failed


def verdicts(
    states: Mapping[int, RankState],
    world_size: int,
    timeout: float,
    output: str = "",
    finished: bool = True,
    expected_reports: int | None = None,
    endpoint: str = "",
    nnodes: int = 1,
    exits: Mapping[int, Mapping[str, Any]] | None = None,
) -> list[Finding]:
    """Findings for one run of the smoke test.

    ``states`` maps rank -> that rank's `RankState`; ranks without one are named from the others'
    observations, how their process ended (``exits``, as `launcher_failures` gives them) or the launcher's
    ``output``. ``finished`` is False when the ranks had to be stopped at the deadline. ``expected_reports``
    is how many ranks report here (default all of them; one host's share in a multi-node run, 1 for a single
    rank under torchrun). ``endpoint`` and ``nnodes`` describe a multi-host rendezvous, to name it when it
    fails.
    """
    hosts: dict[int, str] = {}
    for state in states.values():
        hosts.update({int(r): h for r, h in state.joined.items()})
    hosts.update({r: state.host for r, state in states.items() if state.host})
    failed = {**launcher_failures(output), **(exits or {})}
    for rank, failure in failed.items():
        hosts.setdefault(rank, failure["host"])

    findings: list[Finding] = []
    crashes = _crashes(states, failed, hosts)
    findings += crashes
    if not crashes:
        findings += _never_joined(states, world_size, timeout, hosts, endpoint)
    findings += _wrong_values(states, hosts)
    if not findings:
        findings += _stuck(states, timeout, hosts)
    if not findings:
        findings += _other_errors(states, hosts)
    mixed = _mixed_software(states, hosts)
    expected = world_size if expected_reports is None else expected_reports
    if not findings and output and (failed or not finished or len(states) < expected):
        findings += _launcher_problems(output, timeout, endpoint, nnodes)
    if not findings:
        done = [r for r, state in states.items() if state.stage == "done"]
        if states and len(done) >= expected:
            return [_passed(states, world_size), *_shared_names(states), *mixed]
        findings.append(_incomplete(states, world_size, expected, finished, hosts, nnodes))
    stalled = any(f.id in _STALLS for f in findings)
    settings = _mixed_settings(states, hosts, stalled)
    # the settings first where a rank stalled (DETAIL's wrapper waits at init for a group the others never set up);
    # after the failure, and a warning, where it is something they do not cause (a crash, a wrong sum, a launch)
    return settings + findings + mixed if stalled else findings + settings + mixed


# what a rank stalled on: a collective (init's included) that did not return, or a run stopped unfinished
_STALLS = frozenset({"net.collective", "net.slow", "net.smoke"})
# a rank's connection to the store dropped because the rank hosting it (rank 0) exited: under load rank 0 can fail
# its own init and exit while a slower peer still reads the store ("joined"), whose error is then a consequence
_LOST_STORE = re.compile(r"Connection reset by peer|Connection closed by peer|Broken pipe|Connection refused")


# an error that only says a rank waited too long (the store's "waiting for clients", a collective's timeout): a
# victim's, never a cause that a lost store follows from
_WAITED = re.compile(r"[Tt]imed out|[Tt]imeout|waiting for clients")


def _lost_store(error) -> bool:
    """Whether a rank's error is its connection to the store dropping, not a fault of its own."""
    return error.stage in ("joined", "store") and bool(_LOST_STORE.search(f"{error.type}: {error.message}"))


def _crashes(states, failed, hosts) -> list[Finding]:
    findings = []
    for rank, state in sorted(states.items()):
        error = state.error
        if error is None or state.missing or state.stuck or state.wrong:
            continue
        if error.stage in COLLECTIVE_STAGES or error.stage == "store" or _lost_store(error):
            continue  # a communication failure, judged below
        findings.append(
            Finding(
                "net.crash",
                "fail",
                f"{_who(rank, hosts)} crashed at {error.stage}: {error.type}: {error.message}",
                {"rank": rank, "host": hosts.get(rank), "error": error.facts()},
                f"Fix rank {rank}'s error first (the others stopped because of it); its traceback is in the "
                "details: torchdoctor net -v",
            )
        )
    for rank, failure in sorted(failed.items()):
        if failure.get("killed") or failure["exitcode"] >= 0:
            continue  # a normal exit status is a failure the rank's own state explains
        findings.append(
            Finding(
                "net.crash",
                "fail",
                f"{_who(rank, hosts)} died with exit code {failure['exitcode']} ({failure['traceback']})",
                {"rank": rank, **failure},
                "A signal killed the process: check `dmesg` for the OOM killer or a segfault, and "
                "`ulimit -a` / the size of /dev/shm on that host.",
            )
        )
    return findings


def _never_joined(states, world_size, timeout, hosts, endpoint: str = "") -> list[Finding]:
    missing, seen_by, master = set(), [], ""
    for rank, state in states.items():
        if state.missing:
            missing |= set(state.missing)
            seen_by.append(rank)
        master = master or state.master
    unreached = {
        rank: state for rank, state in states.items() if state.error and state.error.stage == "store"
    }
    launchers = {state.launcher for state in states.values()}
    findings = []
    if missing:
        names = ", ".join(_who(r, hosts) for r in sorted(missing))
        joined = sorted(set(range(world_size)) - missing)
        host, _, port = master.rpartition(":")
        summary = f"{names} never joined within {timeout:g}s ({len(joined)} of {world_size} ranks did)"
        fix = (
            f"Check that every host started the job with the same WORLD_SIZE/--nnodes and can reach {master}.\n"
            + _store_reach_fix(host or "MASTER_ADDR", port or "MASTER_PORT", {})
            + (
                "\nUnder SLURM start one task per rank with srun (`srun torchdoctor net`), not in the batch "
                "script itself."
                if "slurm" in launchers
                else ""
            )
        )
        behind = _past_the_rendezvous(endpoint, master, "every other host")
        if behind is not None:
            summary, fix = summary + behind[0], behind[1]
        findings.append(
            Finding(
                "net.join",
                "fail",
                summary + _too_short(timeout),
                {"missing": sorted(missing), "joined": joined, "seen_by": seen_by, "master": master},
                fix,
            )
        )
    for rank, state in sorted(unreached.items()):
        master = state.master or "MASTER_ADDR:MASTER_PORT"
        host, _, port = master.rpartition(":")
        facts = next((p.facts for p in classify(state.error.message) if p.kind == "unreachable"), {})
        why = facts.get("reason") or (f"timed out after {facts['after']}" if "after" in facts else "")
        if "after" in facts:
            why += _too_short(timeout)
        summary = f"{_who(rank, hosts)} cannot reach rank 0's store at {master}" + (
            f" ({why})" if why else f": {state.error.message[:300]}"
        )
        fix = _store_reach_fix(host, port, facts)
        behind = _past_the_rendezvous(endpoint, master, state.host)
        if behind is not None:
            summary, fix = summary + behind[0], behind[1]
        findings.append(
            Finding(
                "net.join",
                "fail",
                summary,
                {"rank": rank, "master": master, "error": state.error.facts()},
                fix,
            )
        )
    return findings


def _past_the_rendezvous(endpoint: str, master: str, where: str) -> tuple[str, str] | None:
    """Over hosts the ranks' store is on a port torch's launcher picks after the rendezvous: when that one
    cannot be reached although the rendezvous worked, what to add to the verdict, and the fix (a firewall
    open on the rendezvous port only). None when the store is the rendezvous's own port, or no rendezvous."""
    met = endpoint.rpartition(":")[2]
    host, _, port = master.rpartition(":")
    if not met or not port or met == port:
        return None
    return (
        f"; the rendezvous on port {met} worked, but {port} is a port torch's launcher picked for the ranks' "
        f"store after it: likely a firewall that lets only {met} through",
        "Open the firewall between the hosts for every TCP port (or for the hosts' subnet), not only the "
        f"rendezvous port: torch's launcher picks the store's port at random ({port} this time), and gloo and "
        f"NCCL connect on random ports too.\nFrom {where}: nc -zv {host} {port}",
    )


def _wrong_values(states, hosts) -> list[Finding]:
    wrong: dict[int, Any] = {}
    seen_by = []
    for rank, state in states.items():
        if state.wrong:
            seen_by.append(rank)
            for item in state.wrong:
                wrong.setdefault(item.rank, item)
    if not wrong:
        return []
    parts = [
        f"rank {r}'s {w.expected:g} came back as {w.got:g}"
        if r >= 0
        else f"the 4 MiB payload came back wrong ({w.got})"
        for r, w in sorted(wrong.items())
    ]
    return [
        Finding(
            "net.all_reduce",
            "fail",
            f"all_reduce returned wrong values on {who(seen_by)}: " + "; ".join(parts),
            {"wrong": [vars(w) for w in wrong.values()], "seen_by": sorted(seen_by)},
            "Data was corrupted in transit, silently. Try without GPU peer-to-peer:\n"
            "NCCL_P2P_DISABLE=1 torchdoctor net\n"
            "If that passes, P2P is broken on this machine: check `nvidia-smi topo -m`, and disable PCIe ACS "
            "or the IOMMU (iommu=pt) as your board vendor documents.",
        )
    ]


_FIND_BAD = "Name the slow link or rank: torchdoctor net --find-bad (on the same hosts, with the same flags)"
# two namespace hosts at MTU 9000 with a 1500 hop on the bridge between them: the rendezvous and the store (small
# messages) worked, the smoke test's all_reduce never completed, every rank in it and alive
_MTU = (
    "Stuck for good rather than slow, with the rendezvous working: the MTU may differ along the path (jumbo frames, "
    "9000, on the hosts and 1500 on a switch or tunnel between them), so small messages pass and larger ones never "
    "arrive: compare `ip link show <iface>` on each host, and from one host `ping -M do -s 8972 <another host>` "
    "(MTU 9000 less 28 bytes of headers) must answer; else set one MTU on every host and switch port"
)
_SLOW_SIGNS = ("peer_closed", "collective_timeout")  # what the ranks around a slow link report


def _stuck(states, timeout, hosts) -> list[Finding]:
    by_stage: dict[str, dict[str, Any]] = {}
    for rank, state in states.items():
        stuck = state.stuck
        if stuck is None or state.error is None or state.error.type != "Timeout":
            continue
        entry = by_stage.setdefault(
            stuck.stage, {"waiting": [], "not_entered": set(), "failed": {}, "stages": {}}
        )
        entry["waiting"].append(rank)
        entry["not_entered"] |= set(stuck.not_entered)
        entry["failed"].update({int(r): text for r, text in stuck.failed.items()})
        entry["stages"].update(stuck.stages)
    findings = []
    for stage, entry in by_stage.items():
        late, failed = sorted(entry["not_entered"]), entry["failed"]
        details = {
            "stage": stage,
            "waiting": sorted(entry["waiting"]),
            "not_entered": late,
            "failed": {str(r): text for r, text in failed.items()},
            "stages": entry["stages"],
        }
        consequences = [classify(text) for text in failed.values()]
        if failed and not late and all(c and c[0].kind in _SLOW_SIGNS for c in consequences):
            # Every rank was in the stage and alive; those that "failed" only saw a peer give up at its own
            # timeout. That is a slow link (or a timeout too short for it), not a dead rank.
            summary = (
                f"{stage} did not complete within {timeout:g}s although every rank was in it and alive: a link "
                f"too slow for this timeout, not a dead rank ({who(sorted(failed))} only saw a peer give up "
                "at its own timeout)"
            )
            fix = _FIND_BAD + f"\nor give the stage more time: --timeout {max(2 * timeout, 60):g}"
            findings.append(Finding("net.slow", "fail", summary, details, fix))
            continue
        if failed:  # the others wait on a rank that already failed: name it and why
            parts, problems = [], []
            for r, text in sorted(failed.items()):
                found = classify(text)
                problems += found
                said = f"{text.split(':', 1)[0]}: {found[0].summary}" if found else text
                parts.append(f"{_who(r, hosts)} {said}")
            summary = f"{stage} did not complete within {timeout:g}s: {'; '.join(parts)}{_too_short(timeout)}"
            on = ", ".join(sorted({hosts[r] for r in failed if r in hosts})) or f"{who(failed)}'s host"
            fix = (problems[0].fix if problems else _next_steps(states)) + f"\n(on {on})"
        elif late:
            where = "; ".join(f"{_who(r, hosts)} last at {entry['stages'].get(str(r), '?')}" for r in late)
            summary = (
                f"{stage} did not complete within {timeout:g}s: {who(late)} never entered it ({where})"
                + _too_short(timeout)
            )
            pids = {int(r): pid for state in states.values() for r, pid in state.pids.items()}
            dumps = [f"py-spy dump --pid {pids[r]}   # {_who(r, hosts)}" for r in late if r in pids]
            fix = (
                f"{who(late).capitalize()} is elsewhere: see where with py-spy (pip install py-spy) on its host:\n"
                + ("\n".join(dumps) if dumps else "py-spy dump --pid PID")
                + "\nIn training code this is a rank that skipped a collective or stopped early."
            )
        else:
            summary = (
                f"{stage} did not complete within {timeout:g}s although all ranks entered it and were alive: "
                + (
                    "it may only need longer" + _too_short(timeout)
                    if timeout < SHORT_TIMEOUT
                    else "a link between them is too slow for this timeout, or stuck"
                )
            )
            fix = _FIND_BAD + "\n" + _next_steps(states)
            if len(set(hosts.values())) > 1:
                fix += "\n" + _MTU
        findings.append(Finding("net.collective", "fail", summary, details, fix))
    return findings


def _other_errors(states, hosts) -> list[Finding]:
    """Failures inside the backend, one finding per distinct error (naming every rank that had it)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for rank, state in sorted(states.items()):
        if state.error is not None:
            groups.setdefault((state.error.stage, state.error.message), []).append(rank)
    own = {
        key: ranks
        for key, ranks in groups.items()
        if not _lost_store(states[ranks[0]].error) and not _WAITED.search(states[ranks[0]].error.message)
    }
    # a lost store beside a rank's own error follows from it (the store's host exited); beside a wait that timed
    # out (rank 0 waiting for the clients that lost it) both are kept, the lost store first
    groups = own or dict(sorted(groups.items(), key=lambda item: not _lost_store(states[item[1][0]].error)))
    findings = []
    for (stage, _message), ranks in groups.items():
        error = states[ranks[0]].error
        cut_off = _offers_out_of_reach(states, ranks, hosts)
        if cut_off is not None:
            findings.append(cut_off)
            continue
        problems = classify(f"{error.message}\n{error.where}")
        hint = problems[0] if problems else None
        names = sorted({hosts.get(r, "?") for r in ranks})
        where = f"{who(ranks)} on {', '.join(names)}"
        on_gloo = {states[r].backend for r in ranks} == {"gloo"}
        fix = (hint.fix + ("" if on_gloo else "\n" + _TRY_NEXT)) if hint else _next_steps(states)
        if hint and hint.kind == "interface":
            interfaces = states[ranks[0]].interfaces
            fix = hint.fix + (f"\n{names[0]} has: {', '.join(interfaces)}" if interfaces else "")
            named = hint.facts["interface"]
            if (
                named in interfaces
            ):  # gloo's "Unable to find address": the interface is here, its address is not
                hint.summary = (
                    f"network interface {named!r} is here but has no IP address, so gloo cannot listen on it "
                    "(GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME)"
                )
                fix = (
                    f"ip addr add <address>/<prefix> dev {named} && ip link set {named} up   # give it its address\n"
                    + fix
                )
        if _lost_store(error) and 0 not in ranks:
            # the store lives in rank 0's process: its connection dropping is most often that process ending
            fix = (
                "The store these ranks lost is served by rank 0's process: look first at how rank 0 ended (its "
                "own output, its exit code, dmesg for the OOM killer); a network at fault is the rarer cause.\n"
                + fix
            )
        findings.append(
            Finding(
                "net.collective",
                "fail",
                f"{stage} failed on {where}: "
                + (hint.summary if hint else f"{error.type}: {error.message[:300]}"),
                {"ranks": ranks, "error": error.facts(), "problems": [vars(p) for p in problems]},
                fix,
            )
        )
    return findings


def _offers_out_of_reach(states, ranks, hosts) -> Finding | None:
    """``init`` failed connecting to a peer whose offered address this host cannot reach (its
    GLOO_SOCKET_IFNAME on a network the hosts do not share, or its name resolving to loopback): name the
    peer, its interface and address, and the interfaces it has that this host can reach."""
    state = states[ranks[0]]
    if not state.unreachable:
        return None
    here = state.host
    parts, fixes = [], []
    for rank, out_of_reach in sorted(state.unreachable.items(), key=lambda item: int(item[0])):
        offer = state.offers.get(rank, {})
        peer = state.joined.get(rank, "?")
        variable, interface = offer.get("variable", "GLOO_SOCKET_IFNAME"), offer.get("interface", "")
        source = (
            f"the address of {interface}, which {variable}={interface} names there"
            if interface
            else f"the address its name resolves to ({variable} unset there)"
        )
        parts.append(f"rank {rank} on {peer} offers {offer.get('address')}, {source}: {out_of_reach['why']}")
        reachable = out_of_reach.get("reachable") or {}
        if reachable:
            name, address = next(iter(reachable.items()))
            fixes.append(
                f"On {peer}: export {variable}={name}   # {address}, which {here} reaches"
                + (f" (instead of {interface})" if interface else "")
            )
        else:
            fixes.append(
                f"On {peer}: export {variable}=<the interface on the network the hosts share> (`ip -br addr`); "
                f"none of {peer}'s interfaces is reachable from {here}: check the cabling, VLAN or routes"
            )
    return Finding(
        "net.collective",
        "fail",
        f"init failed on {who(ranks)} on {here}: it cannot connect to a peer at the address the peer offers: "
        + "; ".join(parts),
        {
            "ranks": ranks,
            "error": state.error.facts(),
            "unreachable": state.unreachable,
            "offers": state.offers,
        },
        "\n".join(dict.fromkeys(fixes))
        + "\nCheck from here: `ip route get <address>`; `ip -br addr` on each host",
    )


def _launcher_problems(output, timeout, endpoint, nnodes) -> list[Finding]:
    """The launcher failed before the workers could state: read its output."""
    this_host = socket.gethostname()
    findings = []
    for problem in classify(output):
        summary = problem.summary
        if problem.kind == "unreachable":
            rendezvous = endpoint.startswith(f"{problem.facts['host']}:")
            what = "the rendezvous host" if rendezvous else "a peer"
            summary = f"{this_host} cannot reach {what} {summary.removeprefix('cannot reach ')}"
            if rendezvous:
                problem.fix = _store_reach_fix(problem.facts["host"], problem.facts["port"], problem.facts)
                interface = unrecognised_own_address(problem.facts["host"])
                if interface:
                    summary = (
                        f"{this_host} waited for the rendezvous store at {endpoint}, an address of its own ({interface}) "
                        "that torch does not take for this host (it knows it by its host name's addresses only), "
                        "so no store was started here"
                    )
                    problem.fix = (
                        f"Give every host --rdzv-endpoint {this_host}:{problem.facts['port']} (where the other hosts "
                        f"reach {this_host}'s name; `getent hosts {this_host}`), or the address of {this_host} they "
                        "reach; with torchrun, keep it and add --rdzv-conf is_host=true on this host only"
                    )
        if problem.summary.startswith("RendezvousConnectionError") and nnodes > 1:
            findings.append(_store_lost(this_host, endpoint))
            continue
        details = {"kind": problem.kind, "host": this_host, "endpoint": endpoint, **problem.facts}
        findings.append(Finding("net.join", "fail", summary, details, problem.fix))
    if "RendezvousConnectionError" in output and not findings and nnodes > 1:
        findings.append(_store_lost(this_host, endpoint))
    if "RendezvousTimeoutError" in output and not findings:
        host, _, port = endpoint.rpartition(":")
        # of two nodes, the other one; of more, this node cannot tell how many came (three namespace hosts, the
        # third refused by its own check: both others said "only this node ... 2 other nodes never came")
        summary = (
            f"only this node ({this_host}) reached the rendezvous at {endpoint or '?'} within {timeout:g}s: "
            "1 other node never came"
            if nnodes == 2
            else f"the rendezvous at {endpoint or '?'} did not complete within {timeout:g}s: not all {nnodes} nodes "
            f"came (this node, {this_host}, did; which of the other {nnodes - 1} did not, it cannot tell: their "
            "own verdicts say why)"
        )
        findings.append(
            Finding(
                "net.join",
                "fail",
                summary,
                {"kind": "rendezvous_timeout", "host": this_host, "endpoint": endpoint, "nnodes": nnodes},
                _rendezvous_fix(host or "HOST", port or "PORT"),
            )
        )
    return findings


def unrecognised_own_address(host: str) -> str:
    """The interface of this host that has the address ``host``, when torch's c10d rendezvous would not take it
    for this host: it compares with the addresses this host's name resolves to (torch's
    ``_matches_machine_hostname``: "a false negative ... for IP addresses assigned to secondary NICs"); else "".
    """
    from torchdoctor.net.addresses import interface_addresses

    try:
        if ipaddress.ip_address(host).is_loopback:
            return ""
    except ValueError:
        return ""
    interface = next((name for name, address in interface_addresses().items() if address == host), "")
    if not interface:
        return ""
    try:
        named = {
            info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)
        }
    except OSError:
        named = set()
    return "" if host in named else interface


def _store_lost(this_host: str, endpoint: str) -> Finding:
    """torch's ``RendezvousConnectionError`` with no reason read beside it: a store operation of the c10d
    rendezvous failed. The store lives in the launcher on the endpoint's host, so that host's run ended first
    (three namespace hosts, the endpoint's refused by its own check: the second ended with torch's trace and
    nothing else) or it cannot be reached from here; which, its own verdict says."""
    host, _, port = endpoint.rpartition(":")
    host = host or "the rendezvous host"
    return Finding(
        "net.join",
        "fail",
        f"{this_host} lost the c10d rendezvous store at {endpoint or '?'} (torch's RendezvousConnectionError): "
        f"the run on {host}, which serves it, ended first (it gave up, or its own check refused it) or {host} "
        "could not be reached from here",
        {"kind": "rendezvous_store_lost", "host": this_host, "endpoint": endpoint},
        f"Read the verdict on {host} first and fix what it names; then start `torchdoctor net` again on every "
        f"host, {host} first. From here, `nc -zv {host} {port or 'PORT'}` shows whether it answers.",
    )


def _store_reach_fix(host: str, port: str, facts: dict[str, Any]) -> str:
    """What to do when a host cannot connect to the store at ``host:port`` (the rendezvous's, or rank 0's),
    by why (``facts``: torch's ``reason`` or ``after``, as `classify` read them). Only the connection to that
    one port is at stake: an interface setting (NCCL_/GLOO_SOCKET_IFNAME) plays no part in it, and another
    port helps only where this one is taken, which a connection does not show."""
    reason = str(facts.get("reason", "")).lower()
    check = f"From every other host, check that the port answers: nc -zv {host} {port}\n"
    if "refused" in reason:
        return check + (
            f"The connection was refused: nothing listens on {host}:{port} (the job on {host} has not started "
            "yet, or gave up already: its own verdict says why), or the address is not that host's."
        )
    if "unreachable" in reason or "no route" in reason:
        return check + (
            f"This host has no route to {host} (`ip route get {host}`): it is an address on a network this host "
            f"is not on (another interface of the rendezvous host?). Give every host the rendezvous host's address "
            "on the network they share (`ip -br addr` there)."
        )
    if "after" in facts or "timed out" in reason:
        return check + (
            f"The connection timed out: something drops what is sent to port {port} (a firewall on {host} or "
            f"on the way: open TCP port {port} there to the other hosts), or {host} is an address the other "
            f"hosts do not reach (`ip route get {host}` on them)."
        )
    return (
        check + f"Open TCP port {port} in the firewall on {host} (and on the way there) to the other hosts."
    )


def _rendezvous_fix(host: str, port: str) -> str:
    """What to do when the other nodes never reached the rendezvous. Only the store at the endpoint is reached
    at that point: a socket interface setting (NCCL_/GLOO_SOCKET_IFNAME) plays no part yet, so none is offered."""
    fix = (
        "Start the same command on every node (same --nnodes, --rdzv-id, --rdzv-endpoint), and check from each "
        f"of them that the endpoint answers: nc -zv {host} {port}\n"
        f"Open TCP port {port} in the firewall on {host} (and on the way there) to the other nodes."
    )
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback:
        fix += (
            f"\n{host} is a loopback address: only nodes on this machine reach it there. For nodes on other "
            "machines give an address of this one that they reach (`hostname -I`)."
        )
    return fix


def _incomplete(states, world_size, expected, finished, hosts, nnodes: int = 1) -> Finding:
    stages = {r: state.stage for r, state in sorted(states.items())}
    absent = sorted(set(range(world_size)) - set(states)) if expected == world_size else []
    parts = [f"{_who(r, hosts)} stopped at {s}" for r, s in stages.items() if s != "done"]
    if not states:
        parts.append(f"no rank reported (expected {expected})")
    if absent:
        parts.append(f"no state from {who(absent)}")
    why = "the launcher was stopped at its deadline" if not finished else "the launcher gave up"
    backends = {state.backend for state in states.values() if state.backend}
    # no rank reported: its backend is not known here, so neither NCCL's advice nor gloo's is offered
    advice = NCCL_DEBUG_HINT if "nccl" in backends else _GLOO_NEXT if backends else ""
    fix = "Rerun with a longer --timeout and -v" + (f"; {advice}" if advice else ".")
    if finished and nnodes > 1 and states and not any(state.error for state in states.values()):
        # torch's launcher stops every host's ranks when one rank fails: the cause is on the host it failed on
        parts.append(
            "torch's launcher stopped them before the timeout, as it does when a rank on another host fails"
        )
        fix = (
            "Read the verdict on the other hosts: the host whose rank failed (or the host of rank 0) names the "
            "failure and its fix. A longer --timeout does not help here."
        )
    return Finding(
        "net.smoke",
        "fail",
        f"the smoke test did not finish ({why}): " + "; ".join(parts),
        {"stages": stages, "absent": absent},
        fix,
    )


def _mixed_software(states, hosts) -> list[Finding]:
    """A warning when the ranks of one job run different Python or torch versions (one node's environment
    left behind): collectives are only meant to work between ranks of one torch build, and a mismatch can
    hang or fail in ways that name nothing."""
    software = {rank: sw for state in states.values() for rank, sw in state.software.items()}
    findings = []
    for name in ("torch", "Python"):
        by_version: dict[str, list[int]] = {}
        for rank, sw in software.items():
            if sw.get(name):
                by_version.setdefault(sw[name], []).append(int(rank))
        if len(by_version) < 2:
            continue
        ordered = sorted(by_version.items(), key=lambda item: (-len(item[1]), item[0]))
        parts = []
        for version, ranks in ordered:
            on = sorted({hosts[r] for r in ranks if r in hosts})
            parts.append(f"{name} {version} on {who(sorted(ranks))}" + (f" ({', '.join(on)})" if on else ""))
        odd = sorted({hosts[r] for _, ranks in ordered[1:] for r in ranks if r in hosts})
        findings.append(
            Finding(
                "net.versions",
                "warn",
                f"the ranks run different {name} versions: " + "; ".join(parts),
                {"name": name, "versions": {v: sorted(r) for v, r in by_version.items()}},
                f"Install {name} {ordered[0][0]} on "
                + (", ".join(odd) if odd else "every host")
                + " too (`python -c 'import sys, torch; print(sys.version, torch.__version__)'` on each host), "
                "or start every rank from the same environment (one shared venv or container image)",
            )
        )
    return findings


def _mixed_settings(states, hosts, stalled: bool = True) -> list[Finding]:
    """A failure when TORCH_DISTRIBUTED_DEBUG=DETAIL is set for some ranks only (one host's environment differs):
    those ranks wrap their process group in a checking wrapper with a gloo group of its own, which the others
    never set up, so init_process_group waits on them until its timeout. Other values (INFO, OFF) wrap nothing.
    A warning where no rank ``stalled``: the run failed on something else (a crash, a wrong sum), not on this."""
    settings = {int(rank): s for state in states.values() for rank, s in state.settings.items()}
    detail = sorted(
        r for r, s in settings.items() if s.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"
    )
    plain = sorted(r for r in settings if r not in detail)
    if not detail or not plain:
        return []

    def on(ranks: list[int]) -> str:
        named = sorted({hosts[r] for r in ranks if r in hosts})
        return who(ranks) + (f" ({', '.join(named)})" if named else "")

    others = sorted({settings[r].get("TORCH_DISTRIBUTED_DEBUG") or "unset" for r in plain})
    odd = sorted({hosts[r] for r in detail if r in hosts})
    consequence = (
        "so init waits for them until its timeout"
        if stalled
        else "which stalls init or a collective (not what failed here: no rank stalled)"
    )
    return [
        Finding(
            "net.settings",
            "fail" if stalled else "warn",
            f"TORCH_DISTRIBUTED_DEBUG is DETAIL on {on(detail)} and {' or '.join(others)} on {on(plain)}: under "
            "DETAIL init_process_group sets up a checking wrapper with a process group of its own, which the other "
            f"ranks never set up, {consequence}",
            {"detail": detail, "plain": plain, "values": {str(r): s for r, s in settings.items()}},
            "Set it alike on every host: unset it (`unset TORCH_DISTRIBUTED_DEBUG`"
            + (f" on {', '.join(odd)}" if odd else "")
            + "), or export TORCH_DISTRIBUTED_DEBUG=DETAIL on every host to check every rank's collectives",
        )
    ]


def _shared_names(states) -> list[Finding]:
    """A warning when two machines answer to one host name (a cloned image, a container's default name):
    whatever tells hosts apart by name (this report, --find-bad's host pairs, MPI hostfiles, logs) takes them
    for one."""
    nodes: dict[str, dict[str, list[int]]] = {}  # host name -> machine -> ranks
    for state in states.values():
        for rank, host in state.joined.items():
            node = state.nodes.get(rank)
            if node:
                nodes.setdefault(host, {}).setdefault(node, []).append(int(rank))
    shared = {host: machines for host, machines in nodes.items() if len(machines) > 1}
    if not shared:
        return []
    offers = {rank: offer for state in states.values() for rank, offer in state.offers.items()}

    def machine(ranks: list[int]) -> str:
        address = offers.get(str(ranks[0]), {}).get("address")
        return who(sorted(set(ranks))) + (f" at {address}" if address else "")

    parts = [
        f"{len(machines)} machines call themselves {host!r} ("
        + "; ".join(machine(ranks) for ranks in machines.values())
        + ")"
        for host, machines in shared.items()
    ]
    return [
        Finding(
            "net.hostnames",
            "warn",
            "; ".join(parts) + ": whatever tells hosts apart by name (MPI hostfiles, per-host reports and "
            "--find-bad's host pairs, logs) takes them for one",
            {"shared": {host: {node: sorted(set(r)) for node, r in m.items()} for host, m in shared.items()}},
            "Give each machine its own name, and a line in every node's /etc/hosts: "
            "`sudo hostnamectl set-hostname <name>` (in a container: `docker run --hostname <name>`)",
        )
    ]


def _passed(states, world_size) -> Finding:
    first = states.get(0) or next(iter(states.values()))
    hosts = sorted({h for state in states.values() for h in [state.host, *state.joined.values()]})
    machines = {
        (host, state.nodes.get(rank, "")) for state in states.values() for rank, host in state.joined.items()
    }
    named = {host: sum(1 for h, _ in machines if h == host) for host in hosts}
    shown = ", ".join(f"{host} ×{named[host]}" if named[host] > 1 else host for host in hosts)
    versions = first.versions
    devices = sorted({state.device for state in states.values()})
    count = max(len(hosts), sum(named.values()))
    where = f"{count} host{'s' if count > 1 else ''} ({shown})"
    build = f"torch {versions.get('torch')}" if versions else ""
    build += f", NCCL {versions['nccl']}" if versions.get("nccl") else ""
    # one rank talks to nobody: say what was tested, not "ranks talk to each other"
    who = (
        f"{world_size} ranks on {where} talk to each other"
        if world_size > 1
        else f"1 rank on {where}, alone (nothing to talk to: start 2 or more ranks to test communication), runs"
    )
    return Finding(
        "net.smoke",
        "ok",
        f"{who} over {first.backend}: all_reduce sum checked, barrier, memory on {', '.join(devices)}"
        + (f" ({build})" if build else ""),
        {
            "backend": first.backend,
            "world_size": world_size,
            "hosts": hosts,
            "ranks": {str(r): f"{state.host}:{state.local_rank}" for r, state in sorted(states.items())},
            "versions": versions,
        },
    )
