"""The communication layer's messages read from the source that prints them (issue 19): NCCL's socket to a peer
failing mid-transfer (a victim's line: never a cause), a rank's connection to its proxy thread lost, the IB
adapter's fatal-event count. Each reading on its template's wording with real values and on another release's
wording of the same failure, and a line near it that must not fire."""

from __future__ import annotations

import pytest
from explaining import explained, filled

from torchdoctor.explain.catalog import by_id

# NCCL's socket transport, one failure as the releases print it: misc/socket.cc's "Net : ..." (2.10-2.14),
# socketProgressOpt (2.16-2.23 "recv from" only; 2.25-2.28 "recv from" / "send to"), os/linux.cc (2.30),
# include/socket.h (2.7)
SOCKET_FAILED = (
    (
        "nccl:net-call-to-recv-from-failed",
        "gpu-a:2188:2301 [3] misc/socket.cc:523 NCCL WARN Net : Call to recv from 10.1.4.22<47113> failed : "
        "Connection timed out",
        "recv from 10.1.4.22:47113: Connection timed out",
    ),
    (
        "nccl:socketprogressopt-call-to-recv-from-failed",
        "gpu-a:2188:2301 [3] misc/socket.cc:30 NCCL WARN socketProgressOpt: Call to recv from 10.1.4.22<47113> "
        "failed : No route to host",
        "recv from 10.1.4.22:47113: No route to host",
    ),
    (
        "nccl:socketprogressopt-call-to-failed",
        "gpu-a:2188:2301 [3] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to send to 10.1.4.22<47113> "
        "failed : Connection timed out",
        "send to 10.1.4.22:47113: Connection timed out",
    ),
    (
        "nccl:ncclossocketprogressopt-call-to-failed",
        "gpu-a:2188:2301 [3] os/linux.cc:362 NCCL WARN ncclOsSocketProgressOpt: Call to recv from "
        "[fd00::22]<47113> failed : Connection timed out",
        "Connection timed out",
    ),
    (
        "nccl:call-to-recv-failed",
        "gpu-a:2188:2301 [3] include/socket.h:421 NCCL WARN Call to recv failed : Connection timed out",
        "Connection timed out",
    ),
)


@pytest.mark.parametrize(("template", "line", "said"), SOCKET_FAILED, ids=[t for t, _, _ in SOCKET_FAILED])
def test_a_failed_nccl_socket_is_a_peer_gone_never_a_cause(template, line, said):
    assert by_id()[template].kind == "peer_closed"
    found = explained(line + "\n")
    assert (found.id, found.details["confidence"]) == ("log.peer_closed", "likely"), found.summary
    assert said in found.summary and "the cause is not in this log" in found.summary, found.summary
    assert "remote error" in found.fix and "Pass every rank's log" in found.fix, found.fix


def test_a_reset_socket_reads_as_the_peer_closing_it():
    # before 2.25 a reset came through the same line with the errno's words (2.25+ prints "Connection closed")
    found = explained(
        "gpu-a:2188:2301 [3] misc/socket.cc:30 NCCL WARN socketProgressOpt: Call to recv from 10.1.4.22<47113> "
        "failed : Connection reset by peer\n"
    )
    assert found.id == "log.peer_closed" and found.details["confidence"] == "likely"
    assert found.summary.startswith("likely: a peer closed the connection (10.1.4.22:47113)"), found.summary


def test_the_cause_on_the_same_log_leads_over_the_failed_socket():
    found = explained(
        "gpu-b:3001:3001 [1] NCCL INFO cudaDev 1 busId 41000\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
        "capacity of 79.10 GiB of which 1.02 GiB is free.\n"
        "gpu-a:2188:2301 [3] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to recv from 10.1.4.22<47113> "
        "failed : Connection timed out\n"
    )
    assert found.id == "log.cuda_oom", found.summary


def test_other_call_to_failures_are_not_a_peer_gone():
    # the same SYSCHECK family names other calls: binding a port is the rendezvous, not a peer
    found = explained(
        "gpu-a:2188:2188 [0] misc/socket.cc:398 NCCL WARN Call to bind failed : Address already in use\n"
    )
    assert found.id == "log.rendezvous_or_port", found.summary
    found = explained(
        "gpu-a:2188:2188 [0] misc/socket.cc:398 NCCL WARN Call to listen failed : Invalid argument\n"
    )
    assert found.id != "log.peer_closed", found.summary


def test_a_lost_proxy_connection_is_an_nccl_error_of_the_proxy():
    assert by_id()["nccl:socket-recv-failed-while-polling-for"].kind == "nccl_error"
    for line in (
        # 2.18.6's proxy.cc:1143 and 2.28.9's proxy.cc:1300 print the same words
        "ubuntu:39964:40044 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f6f18cb7f40",
        "node7:811:934 [5] proxy.cc:1300 NCCL WARN Socket recv failed while polling for opId=0x55d0a6c1e2b8",
    ):
        found = explained(line + "\n")
        assert (found.id, found.details["confidence"]) == ("log.nccl_error", "likely"), found.summary
        assert "proxy thread" in found.summary, found.summary
        assert "log.nccl_system_error" in found.details["alternatives"], found.details["alternatives"]


def test_a_proxy_op_that_was_not_found_is_not_a_lost_connection():
    found = explained("node7:811:934 [5] proxy.cc:1290 NCCL WARN Couldn't find opId=0x55d0a6c1e2b8\n")
    assert found.id != "log.nccl_error", found.summary


def test_the_ib_fatal_error_count_is_the_adapters_fault():
    assert by_id()["nccl:communicator-encountered-fatal-error-detected-in"].kind == "network_fault"
    alone = explained(
        "node3:5120:5301 [2] transport/net_ib.cc:147 NCCL WARN communicator encountered a fatal error "
        "(detected in ncclIbIsend)\n"
    )
    assert (alone.id, alone.details["confidence"]) == ("log.network_fault", "likely"), alone.summary
    # 2.23's net_ib/common.cc after the event's own line: the event names what the adapter reported
    with_event = explained(
        "node3:5120:5190 [2] transport/net_ib.cc:230 NCCL WARN NET/IB : mlx5_2:1 async fatal event on QP "
        "(0x55d0a6c1e2b8): local work queue catastrophic error\n"
        "node3:5120:5301 [2] transport/net_ib.cc:147 NCCL WARN communicator encountered a fatal error "
        "(detected in ncclIbTest)\n"
    )
    assert with_event.id == "log.network_fault", with_event.summary
    assert "local work queue catastrophic error" in with_event.summary, with_event.summary


def test_a_non_fatal_ib_event_is_not_the_fatal_count():
    found = explained(
        "node3:5120:5190 [2] transport/net_ib.cc:238 NCCL WARN NET/IB : mlx5_2:1 GID table changed\n"
    )
    assert found.id != "log.network_fault", found.summary


def test_nccls_suspected_mismatch_is_only_likely_the_ranks_disagreeing():
    # init.cc ncclCommGetAsyncError (2.4.2-2.7.6): the device's suspicion, which a slow rank raises as well
    line = "gpu-a:2188:2301 [0] init.cc:1256 NCCL WARN " + filled(
        "nccl:your-program-may-be-hanging-this", "1"
    )
    assert by_id()["nccl:your-program-may-be-hanging-this"].kind == "rank_divergence"
    found = explained(line + "\n")
    assert (found.id, found.details["confidence"]) == ("log.rank_divergence", "likely"), found.summary
    assert "around rank 1" in found.summary, found.summary
    assert "log.collective_timeout" in found.details["alternatives"], found.details["alternatives"]


def test_nccl_2_3s_failed_socket_write_is_a_peer_gone():
    line = "worker0:15:91 [3] include/socket.h 398 NCCL WARN " + filled(
        "nccl:call-to-write-failed-socket-h", "Connection reset by peer"
    )
    found = explained(line + "\n")
    assert (found.id, found.details["confidence"]) == ("log.peer_closed", "likely"), found.summary
    assert found.summary.startswith("likely: a peer closed the connection"), found.summary
    assert "the cause is not in this log" in found.summary, found.summary
