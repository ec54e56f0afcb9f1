"""NCCL's own sockets read from the source that prints their failures (issue 19): a bind NCCL makes that finds its
port taken (not torch's MASTER_PORT). Each reading on two releases' wordings, and a line near it that must keep its
own reading."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

# include/checks.h SYSCHECK around bind() in ncclSocketListen: "Call to bind failed : %s" (2.4-2.22; 2.4-2.8 from
# include/socket.h's createListenSocket), "Call to bind failed: %s" (2.23+, misc/socket.cc)
NCCL_BIND = (
    "node1:2188:2188 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use\n",
    "node1:2188:2188 [0] misc/socket.cc:437 NCCL WARN Call to bind failed: Address already in use\n",
)


@pytest.mark.parametrize("line", NCCL_BIND)
def test_ncclss_own_bind_names_no_master_port(line):
    found = explained(line)
    assert (found.id, found.details["confidence"]) == ("log.rendezvous_or_port", "certain"), found.summary
    assert "NCCL could not bind one of its own sockets" in found.summary, found.summary
    assert "29500" not in found.summary + found.fix and "--master_port" not in found.fix, found.fix
    assert "NCCL_COMM_ID" in found.fix and "ip_local_port_range" in found.fix, found.fix


def test_ncclss_bind_names_the_port_nccl_comm_id_fixed():
    # bootstrap.cc / init.cc: rank 0 of every communicator binds NCCL_COMM_ID's port for the bootstrap root
    found = explained(
        "node1:2188:2188 [0] NCCL INFO NCCL_COMM_ID set by environment to 10.1.0.5:23456\n"
        "node1:2188:2188 [0] misc/socket.cc:437 NCCL WARN Call to bind failed: Address already in use\n"
    )
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "port 23456 of NCCL_COMM_ID=10.1.0.5:23456" in found.summary, found.summary
    assert "ss -ltnp | grep :23456" in found.fix and "unset it" in found.fix, found.fix


def test_ncclss_bind_as_torch_names_it_last_leads_the_system_error():
    # torch 2.x's DistBackendError with ncclGetLastError's line: the bind is what the system error was
    found = explained(
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
        "1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
        "Last error:\n"
        "Call to bind failed : Address already in use\n"
    )
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "NCCL could not bind" in found.summary, found.summary


def test_torchs_store_keeps_its_master_port_reading():
    # socket.cpp (torch 2.x): the store's own bind, which MASTER_PORT picks
    found = explained(
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "The server socket has failed to bind to [::]:29512 (errno: 98 - Address already in use). The server "
        "socket has failed to bind to 0.0.0.0:29512 (errno: 98 - Address already in use).\n"
    )
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "port 29512 is taken" in found.summary and "--master_port=29513" in found.fix, found.fix
    # torch 1.x's bare RuntimeError: the default port
    found = explained("RuntimeError: Address already in use\n")
    assert "29500 (the default)" in found.summary and "NCCL" not in found.summary, found.summary


def test_ncclss_ras_bind_is_not_the_failure():
    # NCCL 2.24+'s RAS (ras/client_support.cc) binds localhost:28028 for the ncclras client only, and goes on
    # without it; 2.30 adds the function to the WARN's prefix
    for line in (
        "node1:2188:2190 [0] ras/client_support.cc:140 NCCL WARN Call to bind failed: Address already in use\n",
        "node1:2188:2190 [0] ras/client_support.cc:179 (rasClientInitSocket) NCCL WARN Call to bind failed: Address "
        "already in use\n",
    ):
        found = explained(
            line + "node1:2188:2190 [0] NCCL INFO RAS failed to establish a client listening socket at "
            "localhost:28028\n"
        )
        assert found.id != "log.rendezvous_or_port", found.summary
