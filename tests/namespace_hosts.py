"""Hosts for multi-node tests: network namespaces joined by one veth pair, each with its own /etc/hosts
(``ip netns exec`` mounts ``/etc/netns/<name>/hosts``) and its own host name (``unshare --uts``).

``two_hosts(prefix)`` makes them and removes every namespace, veth and /etc/netns folder it made, whether
the test passes or fails; it skips the test (with the reason) without root or iproute2. Names start with
``prefix`` so that runs beside each other never touch each other's namespaces.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

RUN_LIMIT_S = 100


@dataclass
class Host:
    namespace: str
    name: str
    address: str
    interface: str

    @property
    def hosts_file(self) -> Path:
        return Path("/etc/netns") / self.namespace / "hosts"


def ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


def must(result: subprocess.CompletedProcess) -> None:
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(result.args)}`: {result.stderr.strip()}")


@contextmanager
def two_hosts(prefix: str, subnet: str = "10.233") -> Iterator[list[Host]]:
    """Two namespace hosts, ``PREFIX-TAG-a`` at ``SUBNET.0.1`` and ``-b`` at ``SUBNET.0.2``, each knowing both
    names in its /etc/hosts."""
    if os.geteuid() != 0:
        pytest.skip(f"network namespaces need root (ip netns add); running as uid {os.geteuid()}")
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"no `{tool}` command to make network namespaces with")
    tag = secrets.token_hex(3)  # interface names must stay within 15 characters
    third = secrets.randbelow(200) + 20  # another run beside this one gets another /24
    hosts = [
        Host(f"{prefix}-{tag}-a", f"{prefix}host-{tag}-a", f"{subnet}.{third}.1", f"{prefix}{tag}a"),
        Host(f"{prefix}-{tag}-b", f"{prefix}host-{tag}-b", f"{subnet}.{third}.2", f"{prefix}{tag}b"),
    ]
    made: list[Host] = []
    try:
        try:
            for host in hosts:
                must(ip("netns", "add", host.namespace))
                made.append(host)
                host.hosts_file.parent.mkdir(parents=True, exist_ok=True)
                host.hosts_file.write_text(
                    "127.0.0.1 localhost\n" + "".join(f"{h.address} {h.name}\n" for h in hosts)
                )
            a, b = hosts
            must(ip("link", "add", a.interface, "type", "veth", "peer", "name", b.interface))
            for host in hosts:
                must(ip("link", "set", host.interface, "netns", host.namespace))
                must(ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", host.interface))
                must(ip("-n", host.namespace, "link", "set", host.interface, "up"))
                must(ip("-n", host.namespace, "link", "set", "lo", "up"))
        except (RuntimeError, OSError) as error:
            pytest.skip(f"cannot make network namespaces here: {error}")
        yield hosts
    finally:
        for host in made:
            ip(
                "netns", "del", host.namespace
            )  # takes its end of the veth pair (and any link made in it) along
            shutil.rmtree(host.hosts_file.parent, ignore_errors=True)


@contextmanager
def hosts_on_a_bridge(prefix: str, count: int, slow: int | None = None) -> Iterator[list[Host]]:
    """``count`` namespace hosts on one bridge (in a namespace of its own), host ``slow``'s link throttled to
    200 mbit with ``tc tbf`` on both ends; everything made is removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip(f"network namespaces need root (ip netns add); running as uid {os.geteuid()}")
    tag = secrets.token_hex(3)
    third = secrets.randbelow(200) + 20
    switch = f"{prefix}-{tag}-sw"
    hosts = [
        Host(f"{prefix}-{tag}-{i}", f"{prefix}host-{tag}-{i}", f"10.234.{third}.{i + 1}", f"{prefix}{tag}{i}")
        for i in range(count)
    ]
    made: list[str] = []
    try:
        try:
            must(ip("netns", "add", switch))
            made.append(switch)
            must(ip("-n", switch, "link", "add", "br0", "type", "bridge"))
            must(ip("-n", switch, "link", "set", "br0", "up"))
            for i, host in enumerate(hosts):
                must(ip("netns", "add", host.namespace))
                made.append(host.namespace)
                host.hosts_file.parent.mkdir(parents=True, exist_ok=True)
                host.hosts_file.write_text(
                    "127.0.0.1 localhost\n" + "".join(f"{h.address} {h.name}\n" for h in hosts)
                )
                outside = f"{prefix}{tag}p{i}"
                must(ip("link", "add", host.interface, "type", "veth", "peer", "name", outside))
                must(ip("link", "set", host.interface, "netns", host.namespace))
                must(ip("link", "set", outside, "netns", switch))
                must(ip("-n", switch, "link", "set", outside, "master", "br0"))
                must(ip("-n", switch, "link", "set", outside, "up"))
                must(ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", host.interface))
                must(ip("-n", host.namespace, "link", "set", host.interface, "up"))
                must(ip("-n", host.namespace, "link", "set", "lo", "up"))
                if i == slow:
                    for namespace, device in ((host.namespace, host.interface), (switch, outside)):
                        tbf = ["tc", "qdisc", "add", "dev", device, "root", "tbf", "rate", "200mbit"]
                        tbf += ["burst", "32kbit", "latency", "400ms"]
                        must(
                            subprocess.run(
                                ["ip", "netns", "exec", namespace, *tbf], capture_output=True, text=True
                            )
                        )
        except (RuntimeError, OSError) as error:
            pytest.skip(f"cannot make network namespaces here: {error}")
        yield hosts
    finally:
        for namespace in made:
            ip("netns", "del", namespace)
            shutil.rmtree(Path("/etc/netns") / namespace, ignore_errors=True)


def drop_port(host: Host, port: int) -> None:
    """A firewall that drops what ``host`` sends to TCP ``port``, made with tc alone (no iptables needed): an
    htb class for that port whose queue holds nothing (``pfifo limit 0``), so every packet of it is dropped,
    SYNs included, and a connection there gets no answer. Gone with the namespace; skips the test when tc
    cannot make it."""
    rules = [
        ["qdisc", "add", "dev", host.interface, "root", "handle", "1:", "htb", "default", "1"],
        ["class", "add", "dev", host.interface, "parent", "1:", "classid", "1:1", "htb", "rate", "10gbit"],
        ["class", "add", "dev", host.interface, "parent", "1:", "classid", "1:2", "htb", "rate", "8kbit"],
        ["qdisc", "add", "dev", host.interface, "parent", "1:2", "handle", "20:", "pfifo", "limit", "0"],
        ["filter", "add", "dev", host.interface, "parent", "1:", "protocol", "ip", "prio", "1", "u32"]
        + ["match", "ip", "protocol", "6", "0xff", "match", "ip", "dport", str(port), "0xffff", "flowid", "1:2"],
    ]  # fmt: skip
    for rule in rules:
        done = subprocess.run(
            ["ip", "netns", "exec", host.namespace, "tc", *rule], capture_output=True, text=True, timeout=20
        )
        if done.returncode != 0:
            pytest.skip(f"tc cannot drop a port here (`tc {' '.join(rule)}`): {done.stderr.strip()}")


def start(host: Host, *args: str, env: dict | None = None, name: str | None = None) -> subprocess.Popen:
    """``python ARGS`` inside ``host``'s namespace, under the host name ``name`` (default: the host's)."""
    command = [
        "ip",
        "netns",
        "exec",
        host.namespace,
        "unshare",
        "--uts",
        "sh",
        "-c",
        'hostname "$0"; exec "$@"',
    ]
    return subprocess.Popen(
        [*command, name or host.name, sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def finish(processes: list[subprocess.Popen], limit: float = RUN_LIMIT_S) -> list[tuple[int, str, str]]:
    """Each process's (exit status, stdout, stderr); a process still running after ``limit`` s fails the test."""
    results = []
    for process in processes:
        try:
            out, err = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            for other in processes:
                other.kill()
            out, err = process.communicate()
            pytest.fail(f"a host's run did not end within {limit}s:\n{out}\n{err}")
        results.append((process.returncode, out, err))
    return results
