"""``GLOO_SOCKET_IFNAME`` on one host naming an interface that exists but is on a network the other hosts do
not share: gloo offers its address, and the peer fails at init with "connect: Network is unreachable" and no
address. Before, the verdict was that raw line with NCCL's advice, and on the other host "rerun with a longer
--timeout". Two namespace hosts, the second with an extra interface on another subnet; skipped without root."""

import json

from namespace_hosts import finish, ip, must, start, two_hosts

PORT = 29436


def test_an_interface_on_another_subnet_is_named_with_the_one_to_use():
    with two_hosts("u33s") as (a, b):
        stray = b.interface[:-1] + "x"  # within 15 characters, in b's namespace only (gone with it)
        must(ip("-n", b.namespace, "link", "add", stray, "type", "veth", "peer", "name", stray + "p"))
        must(ip("-n", b.namespace, "addr", "add", "10.99.7.2/24", "dev", stray))
        for name in (stray, stray + "p"):
            must(ip("-n", b.namespace, "link", "set", name, "up"))
        net = ["-m", "torchdoctor", "net", "--json", "--timeout=15", "--nnodes=2", "--nproc-per-node=1"]
        net += [f"--rdzv-endpoint={a.name}:{PORT}"]
        results = finish(
            [
                start(a, *net, env={"GLOO_SOCKET_IFNAME": a.interface}),
                start(b, *net, env={"GLOO_SOCKET_IFNAME": stray}),
            ]
        )
    assert [code for code, _, _ in results] == [1, 1], results
    findings = [f for _, out, _ in results for f in json.loads(out)["findings"]]
    (named,) = [
        f for f in findings if "cannot connect to a peer at the address the peer offers" in f["summary"]
    ]
    assert named["id"] == "net.collective"
    assert (
        f"on {b.name} offers 10.99.7.2, the address of {stray}, which GLOO_SOCKET_IFNAME={stray} names"
        in (named["summary"])
    )
    assert f"On {b.name}: export GLOO_SOCKET_IFNAME={b.interface}   # {b.address}" in named["fix"]
    assert not any("Rerun with a longer --timeout" in f["fix"] for f in findings), findings
