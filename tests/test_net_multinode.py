"""Two "hosts" on one machine: network namespaces joined by a veth pair, each running the test under
torchrun's c10d rendezvous. Needs root and iproute2; skipped with the reason otherwise.

Addresses 10.231.0.1/24 and 10.231.0.2/24 live only on the veth pair between the two namespaces, so no
traffic leaves them. Each namespace gets its own host name (``unshare --uts``) and an ``/etc/hosts`` that
``ip netns exec`` mounts from ``/etc/netns/<name>/hosts``; everything is removed after the test.
"""

import json
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

RUN_LIMIT_S = 100
PORT = 29400


@dataclass
class Host:
    namespace: str
    name: str
    address: str
    interface: str


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


@pytest.fixture
def two_hosts():
    if os.geteuid() != 0:
        pytest.skip(f"network namespaces need root (ip netns add); running as uid {os.geteuid()}")
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"no `{tool}` command to make network namespaces with")
    tag = secrets.token_hex(3)  # unique per run; interface names must stay within 15 characters
    hosts = [
        Host(f"td-{tag}-a", f"tdhost-{tag}-a", "10.231.0.1", f"td{tag}a"),
        Host(f"td-{tag}-b", f"tdhost-{tag}-b", "10.231.0.2", f"td{tag}b"),
    ]
    made: list[Host] = []
    etc_was_there = Path("/etc/netns").exists()
    try:
        for host in hosts:
            _must(_ip("netns", "add", host.namespace))
            made.append(host)
            etc = Path("/etc/netns") / host.namespace
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text(
                "127.0.0.1 localhost\n" + "".join(f"{h.address} {h.name}\n" for h in hosts)
            )
        a, b = hosts
        _must(_ip("link", "add", a.interface, "type", "veth", "peer", "name", b.interface))
        for host in hosts:
            _must(_ip("link", "set", host.interface, "netns", host.namespace))
            _must(_ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", host.interface))
            _must(_ip("-n", host.namespace, "link", "set", host.interface, "up"))
            _must(_ip("-n", host.namespace, "link", "set", "lo", "up"))
    except (RuntimeError, OSError) as error:
        _remove(made, etc_was_there)
        pytest.skip(f"cannot make network namespaces here: {error}")
    yield hosts
    _remove(made, etc_was_there)


def _must(result: subprocess.CompletedProcess) -> None:
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(result.args)}`: {result.stderr.strip()}")


def _remove(hosts: list[Host], etc_was_there: bool) -> None:
    for host in hosts:
        _ip("netns", "del", host.namespace)  # takes its end of the veth pair with it
        shutil.rmtree(Path("/etc/netns") / host.namespace, ignore_errors=True)
    if not etc_was_there:
        try:
            Path("/etc/netns").rmdir()  # only if empty: another run may be using it
        except OSError:
            pass


def _start(host: Host, *args: str, interface: str = "") -> subprocess.Popen:
    """``args`` run inside ``host``'s namespace, under its own host name, gloo pinned to its veth."""
    env = {**os.environ, "GLOO_SOCKET_IFNAME": interface or host.interface, "COLUMNS": "200"}
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
        [*command, host.name, sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _finish(processes: list[subprocess.Popen]) -> list[tuple[int, str, str]]:
    results = []
    for process in processes:
        try:
            out, err = process.communicate(timeout=RUN_LIMIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"a host's run did not end within {RUN_LIMIT_S}s:\n{out}\n{err}")
        results.append((process.returncode, out, err))
    return results


def test_two_hosts_pass_under_torchrun(two_hosts):
    a, b = two_hosts
    torchrun = ["-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=1", "--rdzv-backend=c10d"]
    torchrun += [f"--rdzv-endpoint={a.name}:{PORT}", f"--rdzv-id=pass-{a.namespace}"]
    worker = ["-m", "torchdoctor", "net", "--json", "--timeout=30"]
    results = _finish([_start(host, *torchrun, *worker) for host in two_hosts])
    assert [code for code, _, _ in results] == [0, 0], results
    # rank 0 (on whichever host the rendezvous put it) reports for the job; rank 1 stays quiet on success
    (report,) = [json.loads(out) for _, out, _ in results if out.strip()]
    (smoke,) = report["findings"]
    assert smoke["id"] == "net.smoke" and smoke["status"] == "ok"
    assert smoke["details"]["hosts"] == sorted([a.name, b.name])


def test_cut_link_names_the_unreachable_node(two_hosts):
    a, b = two_hosts
    _must(_ip("-n", b.namespace, "link", "set", b.interface, "down"))
    net = ["-m", "torchdoctor", "net", "--json", "--timeout=8", "--nnodes=2", "--nproc-per-node=1"]
    net += [f"--rdzv-endpoint={a.name}:{PORT}", f"--rdzv-id=cut-{a.namespace}"]
    (code_a, out_a, err_a), (code_b, out_b, err_b) = _finish([_start(host, *net) for host in two_hosts])
    assert (code_a, code_b) == (1, 1), (out_a, err_a, out_b, err_b)
    (on_b,) = json.loads(out_b)["findings"]
    assert on_b["id"] == "net.join" and on_b["status"] == "fail"
    assert f"{b.name} cannot reach the rendezvous host {a.name}:{PORT}" in on_b["summary"]
    assert f"nc -zv {a.name} {PORT}" in on_b["fix"]
    (on_a,) = json.loads(out_a)["findings"]
    assert on_a["id"] == "net.join" and f"only this node ({a.name}) reached the rendezvous" in on_a["summary"]
    assert "1 other node never came" in on_a["summary"]


def test_wrong_interface_is_named_on_both_hosts(two_hosts):
    a, b = two_hosts
    net = ["-m", "torchdoctor", "net", "--json", "--timeout=8", "--nnodes=2", "--nproc-per-node=1"]
    net += [f"--rdzv-endpoint={a.name}:{PORT}", f"--rdzv-id=iface-{a.namespace}"]
    wrong = "eth-nowhere"  # B's gloo is pointed at an interface B does not have
    results = _finish([_start(a, *net), _start(b, *net, interface=wrong)])
    assert [code for code, _, _ in results] == [1, 1], results
    (on_a,), (on_b,) = (json.loads(out)["findings"] for _, out, _ in results)
    assert (
        on_b["id"] == "net.collective"
        and f"on {b.name}: there is no network interface '{wrong}'" in on_b["summary"]
    )
    assert b.interface in on_b["fix"]  # the interfaces B does have
    # A waits for B, then names B and why, read from what B left in the store
    assert on_a["id"] == "net.collective" and "init did not complete within 8s" in on_a["summary"]
    assert f"on {b.name} failed at init: there is no network interface '{wrong}'" in on_a["summary"]
