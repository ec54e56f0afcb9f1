"""A node whose own host name resolves nowhere (a container, a fresh node left out of /etc/hosts): torch's
c10d rendezvous looks the name up and its launcher dies at once with ``socket.gaierror``. Before, `net` said
"the smoke test did not finish (the launcher gave up): no rank reported" and to rerun with a longer timeout.
One namespace host; skipped without root."""

import json

from namespace_hosts import finish, start, two_hosts

PORT = 29435


def test_a_node_whose_own_name_does_not_resolve_is_told_so_before_any_rank_starts():
    with two_hosts("u33n") as (a, b):
        nameless = f"{b.name}-x"  # in no /etc/hosts
        net = ["-m", "torchdoctor", "net", "--json", "--timeout=5", "--nnodes=2", "--nproc-per-node=1"]
        net += [f"--rdzv-endpoint={a.address}:{PORT}"]
        launch = ["-m", "torchdoctor", "launch", "--nnodes=2", "--nproc-per-node=1", "--rdzv-backend=c10d"]
        launch += [f"--rdzv-endpoint={a.address}:{PORT}", "-m", "torchdoctor", "net"]
        (code, out, err), (launch_code, _, launch_err) = finish(
            [start(b, *net, name=nameless), start(b, *launch, name=nameless)], limit=60
        )
    assert code == 1, (out, err)
    (finding,) = json.loads(out)["findings"]
    assert finding["id"] == "dist.preflight_host" and finding["status"] == "fail"
    assert f"this node's own name '{nameless}' does not resolve here" in finding["summary"]
    assert f"add '<address> {nameless}' to /etc/hosts" in finding["fix"]
    assert launch_code == 1 and f"this node's own name '{nameless}' does not resolve" in launch_err
