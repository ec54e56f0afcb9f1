"""A firewall open on the rendezvous port only. Over hosts the rendezvous works, then the ranks' store is on a
port torch's launcher picks at random, which the firewall drops. Before, the verdict named that port with
"open the port in the firewall, or pick a free one (MASTER_PORT / --rdzv-endpoint)": neither helps with a
random port. Two namespace hosts, each with an iptables rule in its own namespace (gone with it); skipped
without root or iptables."""

import json
import shutil
import subprocess

import pytest
from namespace_hosts import finish, start, two_hosts

PORT = 29438


def _iptables(namespace: str, *rule: str) -> None:
    done = subprocess.run(
        ["ip", "netns", "exec", namespace, "iptables", *rule], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"iptables cannot filter in a network namespace here: {done.stderr.strip()}")


def test_a_store_port_dropped_after_a_working_rendezvous_asks_for_every_port():
    if shutil.which("iptables") is None:
        pytest.skip("no iptables to make a firewall with")
    with two_hosts("u33f") as hosts:
        for host in hosts:
            _iptables(
                host.namespace,
                "-A",
                "INPUT",
                "-m",
                "conntrack",
                "--ctstate",
                "ESTABLISHED,RELATED",
                "-j",
                "ACCEPT",
            )
            _iptables(
                host.namespace,
                "-A",
                "INPUT",
                "-i",
                host.interface,
                "-p",
                "tcp",
                "!",
                "--dport",
                str(PORT),
                "-j",
                "DROP",
            )
        net = ["-m", "torchdoctor", "net", "--json", "--timeout=8", "--nnodes=2", "--nproc-per-node=1"]
        net += [f"--rdzv-endpoint={hosts[0].name}:{PORT}"]
        results = finish([start(h, *net, env={"GLOO_SOCKET_IFNAME": h.interface}) for h in hosts])
    assert [code for code, _, _ in results] == [1, 1], results
    findings = [f for _, out, _ in results for f in json.loads(out)["findings"]]
    assert findings and all(f["id"] == "net.join" for f in findings), findings
    for finding in findings:  # the host that cannot reach the store, and the host that waited for its rank
        assert f"the rendezvous on port {PORT} worked, but " in finding["summary"], finding
        assert "Open the firewall between the hosts for every TCP port" in finding["fix"]
        assert "pick a free one" not in finding["fix"]
