"""Two machines under one host name (a cloned image, a container's default name). Before, `net` said "2 ranks
on 1 host (node)", and everything that tells hosts apart by name took them for one. Two namespace hosts, each
named `node` and knowing itself by that name; skipped without root."""

import json

from namespace_hosts import finish, start, two_hosts

from torchdoctor.net.rank_state import RankState
from torchdoctor.net.verdicts import verdicts

PORT = 29437


def test_two_machines_with_one_name_are_counted_as_two_and_warned_about():
    with two_hosts("u33h") as hosts:
        for host in hosts:
            host.hosts_file.write_text(host.hosts_file.read_text() + f"{host.address} node\n")
        net = ["-m", "torchdoctor", "net", "--json", "--timeout=20", "--nnodes=2", "--nproc-per-node=1"]
        net += [f"--rdzv-endpoint={hosts[0].address}:{PORT}"]
        results = finish(
            [start(h, *net, name="node", env={"GLOO_SOCKET_IFNAME": h.interface}) for h in hosts]
        )
    assert [code for code, _, _ in results] == [0, 0], results
    a, b = (h.address for h in hosts)
    for _, out, _ in results:  # each host says it, whichever holds rank 0
        smoke, named = json.loads(out)["findings"]
        assert "2 ranks on 2 hosts (node ×2)" in smoke["summary"], smoke
        assert named["id"] == "net.hostnames" and named["status"] == "warn"
        assert "2 machines call themselves 'node' (" in named["summary"]
        assert f" at {a}" in named["summary"] and f" at {b}" in named["summary"]


def test_ranks_of_one_machine_under_one_name_are_one_host():
    states = {}
    for rank in (0, 1):
        state = RankState(rank, 2, rank, "vm", "none", stage="done")
        state.joined, state.nodes = {"0": "vm", "1": "vm"}, {"0": "boot-a/1", "1": "boot-a/1"}
        states[rank] = state
    found = verdicts(states, 2, 10)
    assert [f.id for f in found] == ["net.smoke"] and "2 ranks on 1 host (vm)" in found[0].summary
