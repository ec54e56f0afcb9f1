"""Two "hosts" on one machine: network namespaces joined by a veth pair, each running the test under
torchrun's c10d rendezvous. Needs root and iproute2; skipped with the reason otherwise.

The hosts are tests/namespace_hosts.py's: addresses on a /24 of 10.231 that lives only on the veth pair between the
two namespaces, so no traffic leaves them. Each namespace gets its own host name (``unshare --uts``) and an
``/etc/hosts`` that ``ip netns exec`` mounts from ``/etc/netns/<name>/hosts``; everything is removed after the test.
"""

import json
import subprocess

import pytest
from namespace_hosts import RUN_LIMIT_S, Host, finish, ip, must, start
from namespace_hosts import two_hosts as namespace_pair

PORT = 29400


@pytest.fixture
def two_hosts():
    with namespace_pair("td", "10.231") as hosts:
        yield hosts


def _start(host: Host, *args: str, interface: str = "") -> subprocess.Popen:
    """``args`` run inside ``host``'s namespace, under its own host name, gloo pinned to its veth."""
    return start(host, *args, env={"GLOO_SOCKET_IFNAME": interface or host.interface})


def _finish(processes: list[subprocess.Popen]) -> list[tuple[int, str, str]]:
    return finish(processes, RUN_LIMIT_S)


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
    must(ip("-n", b.namespace, "link", "set", b.interface, "down"))
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
