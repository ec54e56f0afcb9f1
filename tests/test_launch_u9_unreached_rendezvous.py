"""A node that cannot reach the rendezvous host, under `torchdoctor launch` on several nodes. A firewall drops
what node rank 1 sends to the rendezvous port: it waits, torch gives up, and the launch said "waited for the
other node (node rank 0); none came", which node rank 1 cannot know (node rank 0 may be up and waiting for it)
and which contradicted the launch's own warning at the start ("no answer from HOST:PORT"). Now it tries the
endpoint again and says what it found. Two namespace hosts; the firewall is tc's (no iptables needed); only
node rank 1 is started, as a node whose packets are dropped sees nothing of node rank 0 either way."""

from namespace_hosts import drop_port, finish, start, two_hosts

PORT = 29437


def test_a_node_whose_rendezvous_port_is_dropped_says_it_could_not_reach_it(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    with two_hosts("u9r") as (a, b):
        drop_port(b, PORT)
        launch = ["-m", "torchdoctor", "launch", "--nnodes", "2", "--nproc-per-node", "1", "--node-rank", "1"]
        launch += ["--master-addr", a.name, "--master-port", str(PORT), "--watchdog", "4", str(script)]
        [(code, _, err)] = finish([start(b, *launch)])
    assert code == 1, err
    said = [line for line in err.splitlines() if line.startswith("torchdoctor: ")]
    assert said[0] == (
        f"torchdoctor: no answer from {a.name}:{PORT} in 3s; check the address and that a firewall lets port "
        f"{PORT} through: `nc -vz {a.name} {PORT}` from this node"
    ), said
    verdict = said[-1]
    assert verdict.startswith(
        f"torchdoctor: node rank 1 of 2 could not reach the rendezvous at {a.name}:{PORT} in "
    )
    assert (
        f"no answer from {a.name}:{PORT} in 3s when tried again (a firewall dropping port {PORT}" in verdict
    )
    assert "so whether node rank 0 came is not known here" in verdict
    assert f"`nc -vz {a.name} {PORT}` from this node" in verdict
    assert "none came" not in err
