"""What `net` advises when a host cannot connect to the rendezvous's store (session 41: a connection that timed
out got "open the port in the firewall, or pick a free one" and "export NCCL_SOCKET_IFNAME=<iface>
GLOO_SOCKET_IFNAME=<iface>": another port helps only where this one is taken, which a connection does not
show, and the socket interface plays no part in reaching the store). It now says what the connection's
failure shows: dropped (a firewall, or an address the hosts do not reach) or refused (nothing listens)."""

from pathlib import Path

from torchdoctor.net.verdicts import verdicts

TORCH = Path(__file__).parent / "fixtures" / "torch"


def test_a_rendezvous_connection_that_timed_out_asks_for_the_port_only():
    output = (TORCH / "c10d-rendezvous-connection-error-short.txt").read_text()
    (finding,) = verdicts(
        {}, 2, 60, output, finished=True, expected_reports=1, endpoint="10.0.0.1:1234", nnodes=2
    )
    assert finding.id == "net.join" and "(timed out after 60s)" in finding.summary
    assert "nc -zv 10.0.0.1 1234" in finding.fix
    assert "The connection timed out: something drops what is sent to port 1234" in finding.fix
    assert "open TCP port 1234 there" in finding.fix and "`ip route get 10.0.0.1`" in finding.fix
    assert "SOCKET_IFNAME" not in finding.fix and "free one" not in finding.fix, finding.fix


def test_a_refused_rendezvous_connection_says_nothing_listens_there():
    output = (
        "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
        "(node01, 29400). The client socket has failed to connect to node01:29400 (errno: 111 - Connection "
        "refused).\n"
    )
    (finding,) = verdicts(
        {}, 2, 60, output, finished=True, expected_reports=1, endpoint="node01:29400", nnodes=2
    )
    assert "cannot reach the rendezvous host node01:29400" in finding.summary, finding.summary
    assert "The connection was refused: nothing listens on node01:29400" in finding.fix, finding.fix
    assert (
        "SOCKET_IFNAME" not in finding.fix and "free one" not in finding.fix and "firewall" not in finding.fix
    )


def test_the_other_nodes_never_coming_does_not_offer_another_port():
    waited = "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
    (alone,) = verdicts(
        {}, 8, 30, waited, finished=True, expected_reports=4, endpoint="node01:29400", nnodes=2
    )
    assert "nc -zv node01 29400" in alone.fix and "free one" not in alone.fix, alone.fix


def test_a_lost_rendezvous_store_names_the_endpoints_host_not_torchs_trace_or_nccl():
    output = (
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store "
        "has failed. See inner exception for details.\n"
    )
    (finding,) = verdicts(
        {}, 3, 30, output, finished=True, expected_reports=1, endpoint="node01:29400", nnodes=3
    )
    assert "lost the c10d rendezvous store at node01:29400" in finding.summary, finding.summary
    assert "the run on node01, which serves it, ended first" in finding.summary
    assert finding.fix.startswith("Read the verdict on node01 first") and "NCCL" not in finding.fix
