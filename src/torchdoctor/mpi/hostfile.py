"""Reading MPI hostfiles: Open MPI's ``host slots=N max_slots=M`` and MPICH/Intel MPI's ``host:N``.

Open MPI (``man mpirun``, "Specifying Host Nodes")::

    # comment
    node1 slots=4 max_slots=8
    user@node2            # no slots: Open MPI counts the cores

MPICH's Hydra (https://wiki.mpich.org/mpich/index.php/Using_the_Hydra_Process_Manager)::

    node1:4
    node2 ifhn=10.0.0.2   # Hydra takes no other key=value

An IPv6 address is written without brackets, as Open MPI's hostfile lexer reads it (``fe80::1 slots=2``): a
name with more than one ``:`` is an address, never MPICH's ``host:N``.

Every bad line is a `BadInput` naming the file, the line number and the line, so the CLI exits 2 with one line.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from pathlib import Path

from torchdoctor.errors import BadInput, read_file

# Open MPI's hostfile lexer accepts these spellings for the slot count and its maximum.
_SLOTS_KEYS = ("slots", "slot", "cpu", "cpus", "count")
_MAX_SLOTS_KEYS = ("max_slots", "max-slots", "max_slot", "max-slot")
# A hostname (RFC 1123 letters, digits, dots, hyphens; underscores seen in the wild) or an IPv4 address,
# optionally with the ssh user in front.
# Open MPI and MPICH keep slot counts in a C int.
MAX_SLOTS = 2**31 - 1
_MAX_HOSTFILE_BYTES = 2**20  # a million bytes is tens of thousands of hosts
_HOST = re.compile(r"^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class HostfileEntry:
    """One host line of a hostfile.

    ``style`` is ``"openmpi"`` (``slots=``), ``"mpich"`` (``host:N``) or ``"plain"`` (a bare name, valid in both).
    """

    host: str  # as written, possibly ``user@host``: what ssh is given
    slots: int | None
    max_slots: int | None
    line: int
    style: str

    @property
    def hostname(self) -> str:
        """The host without the ``user@`` part: what ``hostname`` should print there."""
        return self.host.rpartition("@")[2]


def _count(path: Path, number: int, raw: str, key: str, value: str) -> int:
    # [0-9], not str.isdigit(): that also takes '²' and other digits int() refuses
    if not re.fullmatch(r"[0-9]+", value) or int(value) < 1:
        raise BadInput(
            f"hostfile {path} line {number}: {raw.strip()!r}: {key} must be a whole number of at least 1, "
            f"not {value!r}"
        )
    if int(value) > MAX_SLOTS:
        raise BadInput(
            f"hostfile {path} line {number}: {raw.strip()!r}: {key} {value} is more than mpirun can count "
            f"(at most {MAX_SLOTS})"
        )
    return int(value)


def parse_line(path: Path, number: int, raw: str) -> HostfileEntry | None:
    """One line of ``path`` as an entry; ``None`` for blank lines and comments; `BadInput` when malformed."""
    text = raw.split("#", 1)[0].strip()
    if not text:
        return None
    first, *options = text.split()
    where = f"hostfile {path} line {number}: {raw.strip()!r}"
    slots = max_slots = None
    style = "plain"
    if first.count(":") > 1:  # an IPv6 address (MPICH's host:N has one ':')
        host = first
        if not _is_ipv6(host.rpartition("@")[2]):
            raise BadInput(
                f"{where}: {host!r} is not an IPv6 address (nor a host name; MPICH's host:N has one ':')"
            )
    elif ":" in first:
        host, _, count = first.partition(":")
        slots, style = _count(path, number, raw, f"the count after {host}:", count), "mpich"
    else:
        host = first
    if not (_HOST.match(host) or _is_ipv6(host.rpartition("@")[2])):
        raise BadInput(
            f"{where}: {host!r} is not a host name (letters, digits, '.', '-' and an optional user@) "
            "nor an IPv6 address"
        )
    for option in options:
        key, equals, value = option.partition("=")
        if not equals:
            raise BadInput(f"{where}: expected key=value after the host name, got {option!r}")
        option_style = (
            "mpich" if key == "ifhn" else "openmpi"
        )  # ifhn=: Hydra's interface to reach the host by
        if style not in ("plain", option_style):
            raise BadInput(
                f"{where}: {option!r} mixes Open MPI's key=value with MPICH's host:N / ifhn=; "
                f"write '{host} slots=N' for Open MPI or '{host}:N' for MPICH"
            )
        style = option_style
        if key == "ifhn":
            continue
        if key in _SLOTS_KEYS:
            slots = _count(path, number, raw, key, value)
        elif key in _MAX_SLOTS_KEYS:
            max_slots = _count(path, number, raw, key, value)
        else:
            raise BadInput(
                f"{where}: unknown option {key!r}; Open MPI hostfiles take slots= and max_slots=, "
                "MPICH's take host:N and ifhn="
            )
    if slots is not None and max_slots is not None and max_slots < slots:
        raise BadInput(f"{where}: max_slots={max_slots} is less than slots={slots}")
    return HostfileEntry(host, slots, max_slots, number, style)


def _is_ipv6(name: str) -> bool:
    try:
        ipaddress.IPv6Address(name)
    except ValueError:
        return False
    return True


def parse_hostfile(path: str | Path) -> list[HostfileEntry]:
    """The host lines of an Open MPI or MPICH hostfile, in file order.

    >>> [e.host for e in parse_hostfile("hosts.txt")]  # doctest: +SKIP
    ['node1', 'node2']

    Raises `BadInput` when the file is missing, unreadable, has no host, or a line is malformed.
    """
    data = read_file("hostfile", path, limit=_MAX_HOSTFILE_BYTES)
    path = Path(path)
    lines = data.decode(errors="replace").split("\n")
    entries: list[HostfileEntry] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(lines, 1):
        if raw.endswith("\r") or "\r" in raw.split("#", 1)[0]:
            raise BadInput(
                f"hostfile {path} line {number}: ends in CR LF (a file saved on Windows); mpirun reads the CR as "
                f"part of the host line: convert it with `sed -i 's/\\r$//' {path}` (or dos2unix)"
            )
        entry = parse_line(path, number, raw)
        if entry is None:
            continue
        seen = first_line.setdefault(entry.hostname.lower(), number)
        if seen != number:
            raise BadInput(
                f"hostfile {path} line {number}: {raw.strip()!r}: host {entry.hostname} is listed twice "
                f"(lines {seen} and {number}); list it once, with its slots added up"
            )
        entries.append(entry)
    if not entries:
        raise BadInput(f"hostfile {path} lists no host (only blank lines and comments)")
    return entries


def distinct_hosts(entries: list[HostfileEntry]) -> list[HostfileEntry]:
    """The first entry of each host (`parse_hostfile` refuses a host listed twice; entries built by hand may
    repeat one)."""
    seen: dict[str, HostfileEntry] = {}
    for entry in entries:
        seen.setdefault(entry.hostname.lower(), entry)
    return list(seen.values())


def styles(entries: list[HostfileEntry]) -> set[str]:
    """The hostfile syntaxes used (``openmpi``, ``mpich``), bare names left out as they suit both."""
    return {e.style for e in entries} - {"plain"}


def as_style(entries: list[HostfileEntry], style: str) -> str:
    """The hostfile rewritten in ``style`` (``openmpi`` or ``mpich``), for a fix to show."""
    lines = []
    for e in entries:
        if e.slots is None:
            lines.append(e.host)
        elif style == "openmpi":
            lines.append(f"{e.host} slots={e.slots}" + (f" max_slots={e.max_slots}" if e.max_slots else ""))
        elif _is_ipv6(e.hostname):  # host:N would make the count part of the address
            lines.append(f"{e.host}   # {e.slots} slot(s): MPICH's host:N cannot follow an IPv6 address")
        else:
            lines.append(f"{e.host}:{e.slots}")
    return "\n".join(lines)


def _addresses(name: str) -> set[str]:
    """The addresses ``name`` resolves to; none when it does not resolve (the ssh check names that host)."""
    try:
        return {info[4][0] for info in socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)}
    except (OSError, UnicodeError):  # socket.gaierror, or a name too long to encode
        return set()


def _this_machine(addresses: set[str]) -> bool:
    """Whether the addresses are this machine's: loopback, or one a socket can be bound to here."""
    from torchdoctor.launch.preflight import is_local_address

    return any(ipaddress.ip_address(a.split("%")[0]).is_loopback or is_local_address(a) for a in addresses)


def refuse_aliases(
    path: str | Path, entries: list[HostfileEntry], resolve=_addresses, timeout: float = 10.0
) -> None:
    """Raise `BadInput` when two lines name one machine under two names (``localhost`` and ``127.0.0.1``, a
    host and its address): mpirun would start twice the processes there and the sanity run would wait for
    a host that is not another one. Names are resolved side by side, for at most ``timeout`` seconds."""
    import concurrent.futures

    hosts = distinct_hosts(entries)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(32, len(hosts)))
    futures = {entry: pool.submit(resolve, entry.hostname) for entry in hosts}
    concurrent.futures.wait(futures.values(), timeout=timeout)
    pool.shutdown(wait=False, cancel_futures=True)  # a name still resolving is left to the ssh check
    machines: dict[str, HostfileEntry] = {}
    for entry, future in futures.items():
        addresses = future.result() if future.done() and future.exception() is None else set()
        keys = {"this machine"} if addresses and _this_machine(addresses) else addresses
        for key in sorted(keys):
            first = machines.setdefault(key, entry)
            if first is not entry:
                same = "are both this machine" if key == "this machine" else f"both resolve to {key}"
                raise BadInput(
                    f"hostfile {path} lines {first.line} and {entry.line}: {first.hostname} and {entry.hostname} "
                    f"{same}, one machine under two names; list it once, with its slots added up"
                )
