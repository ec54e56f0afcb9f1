"""NCCL's own sockets read from the source that prints their failures (issue 19): a bind NCCL makes that finds its
port taken (not torch's MASTER_PORT), and the proxy's service thread that could not accept a local rank's
connection. Each reading on two releases' wordings, and a line near it that must keep its own reading."""

from __future__ import annotations

import io

import pytest
from explaining import explained

from torchdoctor.explain.diagnose import explain

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


# src/proxy.cc's service thread: WARN("[Service thread] Accept failed %s", strerror(errno)) in 2.12.12-2.28.9
# (INFO under NCCL_PROXY from 2.30); the errno a leftover unless accept() itself failed
PROXY_ACCEPT = (
    "node1:2419:2556 [0] proxy.cc:990 NCCL WARN [Service thread] Accept failed Resource temporarily unavailable\n",
    "node1:2419:2556 [3] proxy.cc:1632 NCCL WARN [Service thread] Accept failed Success\n",
)


@pytest.mark.parametrize("line", PROXY_ACCEPT)
def test_the_proxys_accept_cut_short_follows_another_failure(line):
    found = explained(line)
    assert (found.id, found.details["confidence"]) == ("log.nccl_error", "likely"), found.summary
    assert "proxy service thread could not accept" in found.summary, found.summary
    assert "first error" in found.fix and "left from an earlier call" in found.fix, found.fix
    assert "alternatives" not in found.details, found.details


def test_a_cause_in_the_same_log_leads_the_proxys_accept():
    found = explained(
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.10 GiB of which 1.02 GiB is free.\n" + PROXY_ACCEPT[0]
    )
    assert found.id == "log.cuda_oom", found.summary


@pytest.mark.parametrize(
    "lines",
    (
        # 2.18-2.28: socketTryAccept's own WARN names EMFILE, the service thread the same errno after it
        "node1:2419:2556 [0] misc/socket.cc:453 NCCL WARN socketTryAccept: Accept failed: Too many open files\n"
        "node1:2419:2556 [0] proxy.cc:1632 NCCL WARN [Service thread] Accept failed Too many open files\n",
        # 2.12-2.17's accept (EQCHECK) says it in the service thread's line alone
        "node1:2419:2556 [0] proxy.cc:1072 NCCL WARN [Service thread] Accept failed Too many open files\n",
    ),
)
def test_the_proxys_accept_out_of_descriptors_is_the_open_files_limit(lines):
    findings = explain(
        ["-"],
        stdin=io.BytesIO(
            (
                lines
                + "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:"
                "275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.6\n"
                "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
                "Last error:\n"
                "[Service thread] Accept failed Too many open files\n"
            ).encode()
        ),
    )
    assert findings[0].id == "log.open_files_limit", findings[0].summary
    assert "ulimit -n" in findings[0].fix, findings[0].fix
    # NCCL's system error is that accept, in vaguer words: not a second cause
    assert not {"log.nccl_system_error", "log.nccl_error"} & {f.id for f in findings}, [
        f.id for f in findings
    ]
