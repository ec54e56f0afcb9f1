"""A rendezvous host whose name resolves to a loopback address on another node (``127.0.1.1 node01`` copied
into every node's /etc/hosts): that node looks for the rendezvous on itself. Before, `net` took the node for
the store's host (127.0.1.1 can be bound to) and waited out its timeout to blame a firewall, and `launch`
passed its pre-flight and waited in silence. Two namespace hosts; skipped without root."""

import json

from namespace_hosts import finish, start, two_hosts

from torchdoctor.launch.preflight import check_loopback_name

PORT = 29433


def test_the_other_node_names_the_loopback_line_in_seconds_before_any_rank_starts():
    with two_hosts("u33l") as (a, b):
        b.hosts_file.write_text(f"127.0.0.1 localhost\n127.0.1.1 {a.name}\n{b.address} {b.name}\n")
        net = ["-m", "torchdoctor", "net", "--json", "--timeout=5", "--nnodes=2", "--nproc-per-node=1"]
        net += [f"--rdzv-endpoint={a.name}:{PORT}"]
        launch = ["-m", "torchdoctor", "launch", "--nnodes=2", "--node-rank=1", "--nproc-per-node=1"]
        launch += [f"--master-addr={a.name}", f"--master-port={PORT}", "-m", "torchdoctor", "net"]
        (code, out, err), (launch_code, _, launch_err) = finish([start(b, *net), start(b, *launch)], limit=60)
    assert code == 1, (out, err)
    (finding,) = json.loads(out)["findings"]
    assert finding["id"] == "dist.preflight_host" and finding["status"] == "fail"
    assert f"rendezvous host {a.name} resolves here to 127.0.1.1, a loopback address" in finding["summary"]
    assert f"on {b.name} that is {b.name} itself" in finding["summary"]
    assert f"`getent hosts {a.name}` shows 127.0.1.1" in finding["fix"]
    assert launch_code == 1 and f"rendezvous host {a.name} resolves here to 127.0.1.1" in launch_err


def test_the_name_of_this_node_localhost_or_an_address_is_not_refused():
    assert check_loopback_name("node01", ["127.0.1.1"], this_host="node01") is None
    assert check_loopback_name("node01.cluster", ["127.0.1.1"], this_host="node01") is None
    assert check_loopback_name("localhost", ["127.0.0.1", "::1"], this_host="node02") is None
    assert check_loopback_name("127.0.0.1", ["127.0.0.1"], this_host="node02") is None
    assert check_loopback_name("node01", ["10.0.0.1"], this_host="node02") is None
    found = check_loopback_name("node01", ["127.0.1.1"], this_host="node02")
    assert found is not None and found.status == "fail" and "127.0.1.1" in found.summary
