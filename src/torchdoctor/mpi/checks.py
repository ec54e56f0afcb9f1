"""``mpi.*`` checks behind `torchdoctor mpi`: is there an ``mpirun``, does the hostfile suit it, can we ssh to every
host without a password, and does ``mpirun … hostname`` come back from the hosts the hostfile lists?

Each check reads the world through its arguments (``run`` for commands, ``names_of_this_host`` for this
machine's names), so tests drive them with fake ``ssh``/``mpirun`` scripts on ``PATH``.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from torchdoctor.checks import verdict_of
from torchdoctor.findings import Finding
from torchdoctor.mpi.hostfile import HostfileEntry, as_style, distinct_hosts, styles
from torchdoctor.runner import CommandResult, end_running_commands, run_command

AREA = "mpi"
FLAVOUR_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH", "intel": "Intel MPI", "unknown": "an unknown MPI"}
INSTALL_MPI = (
    "Install the same MPI on every host, e.g.\n"
    "sudo apt-get install -y openmpi-bin      # Open MPI (Debian/Ubuntu; dnf install openmpi on Fedora/RHEL)\n"
    "sudo apt-get install -y mpich            # or MPICH\n"
    "conda install -c conda-forge openmpi     # or into the conda env\n"
    "or put the directory that holds mpirun first on PATH."
)


def identify_mpi(version_text: str) -> tuple[str, str]:
    """``(flavour, version)`` from what ``mpirun --version`` printed.

    >>> identify_mpi("mpirun (Open MPI) 4.1.4")
    ('openmpi', '4.1.4')
    """
    patterns = (
        ("openmpi", r"\((?:Open MPI|OpenRTE)\)\s*(\S+)"),
        ("intel", r"Intel\(R\) MPI Library.*?Version\s+([\w.]+)"),
        ("mpich", r"HYDRA build details:.*?Version:\s*(\S+)"),  # MPICH, MVAPICH: both launch with Hydra
    )
    for flavour, pattern in patterns:
        found = re.search(pattern, version_text, re.S)
        if found:
            return flavour, found.group(1)
    if "Open MPI" in version_text:
        return "openmpi", "?"
    if "MPICH" in version_text or "HYDRA" in version_text:
        return "mpich", "?"
    return "unknown", "?"


def check_mpirun(run: Callable[..., CommandResult] = run_command) -> Finding:
    """Which ``mpirun`` is on ``PATH`` and which MPI it belongs to (Open MPI, MPICH, Intel MPI)."""
    verdict = verdict_of(check_mpirun)
    result = run(["mpirun", "--version"], timeout=20)
    if result.returncode is None:
        summary = (
            "mpirun is not on PATH" if result.error.startswith("not found") else f"mpirun: {result.error}"
        )
        return verdict("fail", summary, {"error": result.error}, INSTALL_MPI)
    text = result.stdout + result.stderr
    flavour, version = identify_mpi(text)
    details = {"flavour": flavour, "version": version, "version_output": text.strip()[:500]}
    if flavour == "unknown":
        first = text.strip().splitlines()[0] if text.strip() else "(nothing)"
        return verdict(
            "warn",
            f"mpirun --version printed {first!r}: not Open MPI, MPICH or Intel MPI; trying MPICH's options",
            details,
            "Check `which mpirun`; " + INSTALL_MPI,
        )
    return verdict("ok", f"mpirun is {FLAVOUR_NAMES[flavour]} {version}", details)


def check_hostfile(path: Path, entries: list[HostfileEntry], flavour: str) -> Finding:
    """The hosts and slots the hostfile lists, and whether its syntax is the one this ``mpirun`` reads."""
    verdict = verdict_of(check_hostfile)
    hosts = distinct_hosts(entries)
    details = {
        "path": str(path),
        "hosts": [e.host for e in hosts],
        "lines": [
            {"line": e.line, "host": e.host, "slots": e.slots, "max_slots": e.max_slots} for e in entries
        ],
    }
    slots = [e.slots for e in entries if e.slots is not None]
    counted = f", {sum(slots)} slot(s)" if len(slots) == len(entries) else ""
    summary = f"hostfile {path}: {len(hosts)} host(s){counted} — {', '.join(e.host for e in hosts[:8])}"
    summary += ", …" if len(hosts) > 8 else ""
    # Open MPI reads host:N as a host name with an illegal ':' and Hydra rejects slots=: both fail to launch.
    wanted = {"openmpi": "openmpi", "mpich": "mpich", "intel": "mpich"}.get(flavour)
    wrong = sorted(styles(entries) - {wanted}) if wanted else []
    if wrong:
        bad = next(e for e in entries if e.style == wrong[0])
        example = f"{bad.host}:{bad.slots}" if wrong[0] == "mpich" else f"{bad.host} slots={bad.slots}"
        return verdict(
            "fail",
            f"hostfile {path} line {bad.line} ({example!r}) is {FLAVOUR_NAMES[wrong[0]]} syntax, "
            f"but mpirun is {FLAVOUR_NAMES[flavour]}",
            details,
            f"Rewrite {path} in {FLAVOUR_NAMES[flavour]}'s syntax:\n{as_style(entries, wanted)}",
        )
    return verdict("ok", summary, details)


def local_names() -> set[str]:
    """Names and addresses that mean this machine: mpirun starts processes here without ssh."""
    names = {"localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn()}
    return {n.lower() for n in names} | {n.lower().split(".")[0] for n in names if not _is_ip(n)}


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def ssh_fix(host: str, error_text: str) -> str:
    """The command that fixes why ``ssh -o BatchMode=yes host true`` failed, judged from what ssh printed."""
    name = host.rpartition("@")[2]
    text = error_text.lower()
    if "permission denied" in text:
        return f"ssh-keygen -t ed25519   # only if ~/.ssh/id_ed25519 does not exist yet\nssh-copy-id {host}"
    if "host key verification failed" in text or "remote host identification has changed" in text:
        return f"ssh-keygen -R {name}; ssh-keyscan -H {name} >> ~/.ssh/known_hosts   # after checking the key"
    if "could not resolve hostname" in text or "name or service not known" in text:
        return f"getent hosts {name}   # add '<address> {name}' to /etc/hosts on every host, or fix DNS"
    if "connection refused" in text:
        return f"sshd is not running on {name}: there, `sudo apt-get install -y openssh-server && sudo systemctl enable --now ssh`"
    if "timed out" in text or "no route to host" in text:
        return (
            f"{name} does not answer on port 22: check it is up (`ping {name}`) and that its firewall lets ssh "
            f"in, e.g. on {name}: `sudo ufw allow ssh`"
        )
    return f"ssh -v {host} true   # shows why the login fails"


def _quiet(_text: str) -> None:
    pass


def _try_ssh(host: str, run: Callable[..., CommandResult], connect_timeout: int) -> dict:
    args = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={connect_timeout}", host, "true"]
    # ConnectTimeout bounds the TCP connect only; the login after it gets as long again.
    result = run(args, timeout=2 * connect_timeout + 1)
    error = result.error or result.stderr.strip()
    if result.returncode is None and result.error.startswith("timed out"):
        error = f"ssh timed out after {2 * connect_timeout + 1}s"
    return {
        "host": host,
        "ok": result.ok,
        "error": "" if result.ok else (error or f"exit {result.returncode}"),
    }


def check_ssh(
    entries: list[HostfileEntry],
    run: Callable[..., CommandResult] = run_command,
    names_of_this_host: Iterable[str] | None = None,
    connect_timeout: int = 5,
    say: Callable[[str], None] = _quiet,
) -> Finding:
    """Passwordless ssh (``ssh -o BatchMode=yes``) to every host that is not this machine, in parallel.

    ``say`` hears whom it still waits for (the status line); Ctrl-C ends every ssh at once."""
    verdict = verdict_of(check_ssh)
    here = {n.lower() for n in (local_names() if names_of_this_host is None else names_of_this_host)}
    hosts = [e.host for e in distinct_hosts(entries)]
    remote = [h for h in hosts if h.rpartition("@")[2].lower() not in here]
    if not remote:
        return verdict("skip", "every host is this machine: mpirun needs no ssh", {"hosts": hosts})
    waiting = dict.fromkeys(remote)
    lock = threading.Lock()

    def tell() -> None:
        with lock:
            left = list(waiting)
        if not left:
            say(f"ssh: all {len(remote)} host(s) answered")
            return
        shown = ", ".join(left[:4]) + (f" and {len(left) - 4} more" if len(left) > 4 else "")
        say(f"ssh: waiting for {shown} ({len(left)} of {len(remote)}; at most {2 * connect_timeout + 1}s)")

    def try_one(host: str) -> dict:
        result = _try_ssh(host, run, connect_timeout)
        with lock:
            waiting.pop(host, None)
        tell()
        return result

    tell()
    with ThreadPoolExecutor(max_workers=min(16, len(remote))) as pool:
        try:
            results = list(pool.map(try_one, remote))
        except BaseException:  # Ctrl-C: the threads' ssh, each in its own session, would hold the exit
            end_running_commands()
            raise
    failed = [r for r in results if not r["ok"]]
    if all(r["error"] == "not found: ssh" for r in results):
        return verdict(
            "fail",
            f"ssh is not on PATH; mpirun needs it to start processes on {', '.join(remote)}",
            {"remote": remote},
            "sudo apt-get install -y openssh-client   # dnf install openssh-clients on Fedora/RHEL",
        )
    details = {"results": results, "local": [h for h in hosts if h not in remote]}
    if not failed:
        return verdict("ok", f"passwordless ssh works to {len(remote)} host(s): {', '.join(remote)}", details)
    reasons = "; ".join(f"{r['host']}: {_telling_line(r['error'], last=True)}" for r in failed[:4])
    more = f"; and {len(failed) - 4} more" if len(failed) > 4 else ""
    fixes = "\n".join(f"# {r['host']}\n{ssh_fix(r['host'], r['error'])}" for r in failed)
    return verdict(
        "fail",
        f"passwordless ssh fails to {len(failed)} of {len(remote)} host(s) — {reasons}{more}",
        details,
        fixes,
    )


def _telling_line(text: str, last: bool = False) -> str:
    """The first (or last) line with words in it: Open MPI frames its messages with '-----' lines."""
    lines = [line.strip() for line in text.strip().splitlines() if re.search(r"[A-Za-z]{2}", line)]
    if not lines:
        return text.strip()
    return lines[-1] if last else lines[0]


def sanity_command(flavour: str, hostfile: Path, n: int) -> list[str]:
    """``mpirun`` running ``hostname`` once on each of the first ``n`` hosts, in this MPI's own options."""
    if flavour == "openmpi":
        return ["mpirun", "--hostfile", str(hostfile), "-np", str(n), "--map-by", "ppr:1:node", "hostname"]
    return ["mpirun", "-f", str(hostfile), "-n", str(n), "-ppn", "1", "hostname"]


def same_host(listed: str, reported: str, here: set[str], resolve: Callable[[str], str]) -> bool:
    """Whether ``hostname`` printing ``reported`` means the process ran on the hostfile's ``listed`` host."""
    listed, reported = listed.rpartition("@")[2].lower(), reported.strip().lower()
    if listed == reported:
        return True
    if listed in here and reported in here:
        return True
    if _is_ip(listed):
        try:
            return resolve(reported) == listed
        except OSError:
            return False
    return listed.split(".")[0] == reported.split(".")[0]  # node1 vs node1.cluster.local


def sanity_fix(
    flavour: str, output: str, command: list[str], timed_out: bool, hosts: Iterable[str] = ()
) -> str:
    """The fix for a failed ``mpirun … hostname``, judged from what mpirun printed."""
    text = output.lower()
    if "attempt to run as root" in text:
        return (
            "Run as a normal user, or allow Open MPI to run as root:\n"
            "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # or mpirun --allow-run-as-root"
        )
    if "not enough slots" in text:
        return "Give each host slots=N in the hostfile (or pass --oversubscribe)."
    ssh_failed = re.search(
        r"ssh: Could not resolve hostname (\S+?):|ssh: connect to host (\S+) port|(\S+?): Permission denied",
        output,
    )
    if ssh_failed:
        host = next(name for name in ssh_failed.groups() if name)
        fix = f"mpirun's own ssh to {host} failed:\n{ssh_fix(host, output)}"
        shortened = [h for h in hosts if h.rpartition("@")[2].startswith(host + ".") and not _is_ip(h)]
        if shortened and flavour == "openmpi":
            fix += (
                f"\nOpen MPI shortened {shortened[0]} to {host}: keep whole names with "
                "`--mca orte_keep_fqdn_hostnames 1`, or make the short name resolve (/etc/hosts)."
            )
        return fix
    if "host key verification failed" in text:
        return "ssh-keyscan -H <host> >> ~/.ssh/known_hosts   # for each host, after checking its key"
    if "command not found" in text or "no such file or directory" in text:
        prefix = " (or mpirun --prefix /path/to/openmpi)" if flavour == "openmpi" else ""
        return (
            "mpirun's helper is missing on a remote host or not on PATH in a non-interactive ssh shell: install "
            f"the same MPI at the same path on every host, and set PATH in ~/.bashrc above its 'interactive' "
            f"return{prefix}."
        )
    if timed_out or "unable to reliably start" in text or "connection" in text:
        iface = (
            "--mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0"
            if flavour == "openmpi"
            else "-iface eth0"
        )
        return (
            "The hosts cannot connect back to mpirun: open the firewall between them (e.g. on each host "
            "`sudo ufw allow from 10.0.0.0/8`), and if they have several networks pick the shared one with "
            f"{iface} (use your interface, see `ip addr`). Rerun by hand to see more:\n{' '.join(command)}"
        )
    return "Rerun it by hand to see the whole error:\n" + " ".join(command)


def check_hostnames(
    hostfile: Path,
    entries: list[HostfileEntry],
    n: int,
    flavour: str,
    run: Callable[..., CommandResult] = run_command,
    timeout: float = 60,
    names_of_this_host: Iterable[str] | None = None,
    resolve: Callable[[str], str] = socket.gethostbyname,
    say: Callable[[str], None] = _quiet,
) -> Finding:
    """Run ``hostname`` with ``mpirun`` once on each of the first ``n`` hosts; compare what comes back."""
    verdict = verdict_of(check_hostnames)
    here = {x.lower() for x in (local_names() if names_of_this_host is None else names_of_this_host)}
    command = sanity_command(flavour, hostfile, n)
    expected = [e.host for e in distinct_hosts(entries)[:n]]
    shown = ", ".join(expected[:4]) + (f" and {len(expected) - 4} more" if len(expected) > 4 else "")
    say(f"mpirun: waiting for hostname from {shown} (at most {timeout:g}s)")
    result = run(command, timeout=timeout)
    output = (result.stdout + "\n" + result.stderr).strip()
    details = {"command": command, "expected": expected, "stdout": result.stdout[-2000:]}
    details["stderr"] = (result.error + "\n" + result.stderr).strip()[-2000:]
    if not result.ok:
        timed_out = result.error.startswith("timed out")
        why = (
            f"hung for {timeout:g}s"
            if timed_out
            else f"failed ({result.error or f'exit {result.returncode}'})"
        )
        last = _telling_line(result.stderr)
        return verdict(
            "fail",
            f"`{' '.join(command)}` {why}" + (f": {last}" if last else ""),
            details,
            sanity_fix(flavour, output, command, timed_out, expected),
        )
    reported = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    details["reported"] = reported
    unmatched = list(reported)
    missing = []
    for host in expected:
        match = next((r for r in unmatched if same_host(host, r, here, resolve)), None)
        if match is None:
            missing.append(host)
        else:
            unmatched.remove(match)
    if not missing and not unmatched:
        return verdict(
            "ok",
            f"mpirun ran hostname on {len(expected)} host(s) and each answered: {', '.join(reported)}",
            details,
        )
    return verdict(
        "fail",
        f"mpirun ran on {', '.join(reported) or 'no host'}; expected {', '.join(expected)}"
        + (f" (no answer from {', '.join(missing)})" if missing else ""),
        details,
        "Each name in the hostfile must reach the machine it names: compare `getent hosts "
        + " ".join(h.rpartition("@")[2] for h in missing or expected)
        + "` with `hostname -I` on each host and fix /etc/hosts or DNS.\n"
        + "Rerun by hand: "
        + " ".join(command),
    )


def diagnose(
    hostfile: Path,
    entries: list[HostfileEntry],
    n: int,
    run: Callable[..., CommandResult] = run_command,
    timeout: float = 60,
    connect_timeout: int = 5,
    names_of_this_host: Iterable[str] | None = None,
    say: Callable[[str], None] = _quiet,
) -> list[Finding]:
    """Every ``mpi.*`` check in the order they depend on each other; the ``mpirun`` run is skipped (with the
    reason) when mpirun is missing, the hostfile does not suit it, or ssh to one of its hosts fails, as it
    would then fail or wait on a password prompt. ``say`` hears whom each step waits for."""
    here = local_names() if names_of_this_host is None else set(names_of_this_host)
    mpirun = check_mpirun(run)
    flavour = mpirun.details.get("flavour", "unknown")
    findings = [mpirun, check_hostfile(hostfile, entries, flavour)]
    findings.append(check_ssh(entries, run, here, connect_timeout, say))
    blockers = [f for f in findings if f.status == "fail"]
    if blockers:
        findings.append(
            verdict_of(check_hostnames)(
                "skip",
                f"mpirun sanity run not tried: {', '.join(f.id for f in blockers)} failed; fix that first",
                {"blocked_by": [f.id for f in blockers]},
            )
        )
    else:
        findings.append(check_hostnames(hostfile, entries, n, flavour, run, timeout, here, say=say))
    return findings
