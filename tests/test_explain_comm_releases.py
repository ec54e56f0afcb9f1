"""The communication layer's messages as each release spells them, read from the source that prints them (issue 19):
NCCL 2.23+'s SYSCHECK ("Call to X failed: %s") and 2.27+'s lower-case "connect to", torch 2.4-2.9's heartbeat
monitor, torch.distributed.rpc's timeouts and refusals, and an address in use that is not torch's MASTER_PORT. Each
on its template filled the way the source fills it, and a line near it that must keep its own reading."""

from __future__ import annotations

import pytest
from explaining import explained

from torchdoctor.explain.catalog import by_id

# -- NCCL's SYSCHECK: " failed : %s" up to 2.21, " failed: %s" since 2.23 (include/checks.h) ----------------


def test_the_catalog_dates_each_syscheck_spelling_to_the_releases_that_print_it():
    catalog = by_id()
    assert (catalog["nccl:call-to-bind-failed"].text, catalog["nccl:call-to-bind-failed"].versions) == (
        "Call to bind failed: %s",
        "v2.23.4+",
    )
    assert (catalog["nccl:call-to-bind-failed-2"].text, catalog["nccl:call-to-bind-failed-2"].versions) == (
        "Call to bind failed : %s",
        "v2.4.8..v2.21.5",
    )
    # CUDACHECK's "Cuda failure %d '%s'" came with cudawrap.h in 2.19, though "Cuda failure" is in every release
    assert catalog["nccl:cuda-failure-2"].versions == "v2.19.4+"


@pytest.mark.parametrize(
    "line",
    [
        "gpu-a:2188:2301 [0] misc/socket.cc:441 NCCL WARN Call to bind failed: Address already in use",
        "gpu-a:2188:2301 [0] misc/socket.cc:462 NCCL WARN Call to listen failed: Address already in use",
        "gpu-a:2188:2301 [0] misc/socket.cc:441 NCCL WARN Call to bind failed : Address already in use",
    ],
)
def test_nccls_own_bind_in_use_is_never_read_as_the_default_master_port(line):
    found = explained(line + "\n")
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "NCCL could not bind one of its own sockets" in found.summary, found.summary
    assert "29500" not in found.summary, found.summary


# -- NCCL 2.27+: "<function>: connect to <peer> failed : <errno>" (misc/socket.cc, 2.30's os/linux.cc) ------


@pytest.mark.parametrize(
    "line",
    [
        # 2.27-2.28 misc/socket.cc, 2.30 os/linux.cc: WARN("%s: connect to %s failed : %s", funcName, ...)
        "gpu-a:2188:2301 [1] misc/socket.cc:510 NCCL WARN socketStartConnect: connect to 10.1.4.22<47113> failed : "
        "No route to host",
        "gpu-a:2188:2301 [1] os/linux.cc:302 NCCL WARN ncclOsSocketStartConnect: connect to 10.1.4.22<47113> failed "
        ": No route to host",
        # 2.20-2.23: socketPollConnect's "Connect to %s returned %d(%s) errno %d(%s)"
        "gpu-a:2188:2301 [1] misc/socket.cc:584 NCCL WARN socketPollConnect: Connect to 10.1.4.22<47113> returned "
        "113(No route to host) errno 115(Operation now in progress)",
    ],
)
def test_ncclls_connect_to_a_peer_in_every_spelling_names_the_peer(line):
    assert by_id()["nccl:connect-to-failed"].kind == "network_interface"
    found = explained(line + "\n")
    assert (found.id, found.details["confidence"]) == ("log.network_interface", "likely"), found.summary
    assert "10.1.4.22:47113" in found.summary and "No route to host" in found.summary, found.summary


def test_ncclls_connect_retries_given_up_in_2_27s_words():
    found = explained(
        "gpu-a:2188:2301 [1] misc/socket.cc:566 NCCL WARN socketPollConnect: connect to 10.1.4.22<47113> returned "
        "Connection refused, exceeded error retry count after 35 attempts\n"
    )
    assert found.id == "log.network_interface", found.summary
    assert "gave up connecting" in found.summary, found.summary


# -- ProcessGroupNCCL's heartbeat monitor, torch 2.4-2.9 ---------------------------------------------------

_PREFIX = (
    "[rank2]:[E1203 10:41:07.112494635 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
)


def test_the_dump_signal_heard_from_another_rank_is_the_collective_timeout_and_names_that_rank():
    assert by_id()["torch_native:timeout-dump-signal"].kind == "nccl_watchdog_timeout"
    found = explained(
        _PREFIX
        + "Received a dump signal due to a collective timeout from  rank 7 and we will try our best to dump "
        "the debug info. Last enqueued NCCL work: 56116, last completed NCCL work: 56116.This is most likely caused by "
        "incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same "
        "for all ranks or the scheduled collective, for some reason, didn't run.\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.nccl_watchdog_timeout", "likely"), found.summary
    assert "Rank 7 timed out first" in found.summary and "last completed work 56116" in found.summary


def test_the_flight_recorder_signal_alone_is_the_collective_timeout():
    found = explained(_PREFIX + "Observed flight recorder dump signal from another rank via TCPStore.\n")
    assert (found.id, found.details["confidence"]) == ("log.nccl_watchdog_timeout", "likely"), found.summary


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("ProcessGroupNCCL watchdog hang", "the NCCL watchdog got stuck"),
        ("collective timeout or exception", "collective timed out"),
    ],
)
def test_the_heartbeat_monitors_exit_line_says_which_of_its_two_reasons(reason, said):
    found = explained(
        "[rank2]:[F1229 20:37:13.091528310 ProcessGroupNCCL.cpp:1306] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
        "[PG ID 0 PG GUID 0(default_pg) Rank 2] Terminating the process after attempting to dump debug info, due "
        f"to {reason}.\n"
    )
    assert found.id == "log.nccl_watchdog_timeout", found.summary
    assert said in found.summary, found.summary


def test_the_store_gone_under_the_heartbeat_monitor_is_a_peer_gone_never_a_cause():
    assert by_id()["torch_native:should-dump-flag-check-failed"].kind == "peer_closed"
    found = explained(
        "[rank1]:[W1203 10:41:07.562447118 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID 0(default_pg) Rank 1] Failed "
        'to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: '
        "Broken pipe\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.peer_closed", "likely"), found.summary
    assert "TCPStore went away" in found.summary and "Broken pipe" in found.summary, found.summary
    assert "rank 0" in found.fix and "destroy_process_group" in found.fix, found.fix


# -- torch.distributed.rpc ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "line", "said"),
    [
        (
            "torch_cpp:rpc-ran-for-more-than-set",
            "RuntimeError: RPC ran for more than set timeout (60000 ms) and will now be marked with an error",
            "timed out after 60 s",
        ),
        (
            "torch_native:rref-creation-timed-out",
            "RuntimeError: RRef creation via rpc.remote() timed out, and it is possible that the RRef on the owner "
            "node does not exist.",
            "rpc.remote() call timed out",
        ),
        (
            "torch_cpp:timed-out-waiting-for-pending-userrrefs",
            "RuntimeError: Timed out waiting for pending UserRRefs to be confirmed by owner and parent.",
            "shutdown",
        ),
        (
            "torch:followers-timed-out-in-all-gather",
            "RuntimeError: Followers ['worker2'] timed out in _all_gather after 5.00 seconds. The first exception is "
            "Timeout",
            "['worker2'] did not answer",
        ),
    ],
)
def test_an_rpc_timeout_is_read_and_stays_likely(template, line, said):
    assert by_id()[template].kind == "rpc_timeout"
    found = explained(
        'Traceback (most recent call last):\n  File "ps.py", line 88, in run_trainer\n    out = fut.wait()\n'
        + line
        + "\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.rpc_timeout", "likely"), found.summary
    assert said in found.summary, found.summary
    assert "rpc.shutdown()" in found.fix or "num_worker_threads" in found.fix, found.fix


def test_rpc_used_before_init_rpc_is_refused():
    assert by_id()["torch:rpc-has-not-been-initialized-call"].kind == "rpc_call_refused"
    found = explained(
        "RuntimeError: RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.\n"
    )
    assert found.id == "log.rpc_call_refused", found.summary
    assert "rpc.init_rpc(name, rank=rank, world_size=world_size)" in found.fix, found.fix


def test_a_tensorpipe_pipe_that_broke_is_a_peer_gone():
    found = explained(
        "[W tensorpipe_agent.cpp:726] RPC agent for worker1 encountered error when reading incoming request from "
        "worker0: EOF: end of file (this error originated at tensorpipe/transport/shm/connection_impl.cc:259)\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.peer_closed", "likely"), found.summary


# -- an address in use that is not torch's MASTER_PORT ---------------------------------------------------


def test_tensorpipes_own_listener_in_use_is_not_master_port():
    found = explained(
        'RuntimeError: In bind at tensorpipe/transport/uv/uv.h:112 "rv < 0: address already in use"\n'
    )
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "TensorPipe" in found.summary and "29500" not in found.summary, found.summary
    assert found.details["confidence"] == "likely"


def test_a_unix_socket_in_use_names_its_path_not_a_port():
    found = explained("zmq.error.ZMQError: Address already in use (addr='ipc:///tmp/4f1c9e2a-sock')\n")
    assert "the Unix socket ipc:///tmp/4f1c9e2a-sock" in found.summary, found.summary
    assert "29500" not in found.summary and "ss -lxp" in found.fix, found.fix


def test_the_stores_own_port_in_use_still_names_its_port():
    found = explained(
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29511, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use\n"
    )
    assert found.id == "log.rendezvous_or_port", found.summary
    assert "port 29511 is taken" in found.summary, found.summary


# -- NCCL's INFO lines of a retried connect: a run that goes on prints them too -------------------------


@pytest.mark.parametrize(
    "line",
    [
        # misc/ibvwrap.cc (2.25+): INFO, the queue pair retried
        "gpu-a:2188:2301 [1] NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, "
        "curr state INIT, next state RTR, local GID index 3, retrying 1/5 after 1000 msec of sleep",
        # misc/socket.cc (2.25+): INFO, the connect retried
        "gpu-a:2188:2301 [1] NCCL INFO socketStartConnect: connect to 10.1.4.22<47113> returned Connection refused, "
        "retrying (1/34) after sleep for 100 msec",
    ],
)
def test_a_retried_connect_alone_is_no_failure(line):
    assert by_id()["nccl:connect-to-returned-retrying-after-sleep"].versions == "v2.25.1+"
    found = explained(line + "\n")
    assert found.id == "log.unrecognised", found.summary


def test_the_queue_pair_that_failed_for_good_is_still_read():
    found = explained(
        "gpu-a:2188:2301 [1] misc/ibvwrap.cc:290 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed "
        "out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3\n"
    )
    assert found.id == "log.network_interface" and "ibv_modify_qp failed" in found.summary, found.summary


def test_a_local_rank_that_closed_its_proxy_connection_is_a_peer_gone():
    # proxy.cc's INFO (2.12+), now in the catalog beside the WARNs
    assert by_id()["nccl:service-thread-connection-closed-by-localrank"].kind == "peer_closed"
    found = explained("g183:161260:166045 [3] NCCL INFO [Service thread] Connection closed by localRank 5\n")
    assert (found.id, found.details["confidence"]) == ("log.peer_closed", "likely"), found.summary


# -- ProcessGroupNCCL guessing a rank's GPU: a warning, read only where nothing failed ---------------------


def test_the_barrier_device_warning_alone_names_the_guess_and_the_fix():
    assert by_id()["torch_native:using-gpu-to-perform-barrier"].kind == "barrier_device_guessed"
    found = explained(
        "[rank0]:[W1203 10:00:00.000000000 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to "
        "perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if "
        "this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a particular device, "
        "or call init_process_group() with a device_id.\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.barrier_device_guessed", "likely"), found.summary
    assert "guessed GPU 0" in found.summary and "torch.cuda.set_device(local_rank)" in found.fix, found.fix


def test_the_guess_says_nothing_beside_a_failure():
    found = explained(
        "[rank1]:[W1203 ProcessGroupNCCL.cpp:3101] Guessing device ID based on global rank. This can cause a hang if "
        "rank to GPU mapping is heterogeneous. You can specify device_id in init_process_group()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 "
        "GiB of which 1.06 GiB is free.\n"
    )
    assert found.id == "log.cuda_oom", found.summary


# -- gloo's monitored barrier (ProcessGroupGloo.cpp monitoredBarrier) names the rank -----------------------


@pytest.mark.parametrize(
    ("log", "said"),
    [
        (
            "RuntimeError: [Rank 0]: Rank 1 failed to pass monitoredBarrier in 2000 ms\n Original exception: \n"
            "[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.1.4.22]:8594\n",
            "rank 1 never reached the monitored barrier in 2 s",
        ),
        (
            "[E1203 ProcessGroupGloo.cpp:138] [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 120000 ms\n",
            "ranks 1, 2 never reached the monitored barrier in 120 s",
        ),
        (
            "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for "
            "send/recv from rank 0. Please check rank 0 logs for faulty rank.\n",
            "exchange with rank 0 failed",
        ),
    ],
)
def test_the_monitored_barrier_names_the_rank_to_read(log, said):
    assert by_id()["torch_native:monitored-barrier-rank-failed"].kind == "collective_timeout"
    found = explained(log)
    assert (found.id, found.details["confidence"]) == ("log.collective_timeout", "likely"), found.summary
    assert said in found.summary, found.summary


@pytest.mark.parametrize(
    "line",
    [
        # WorkNCCL::synchronize under blocking wait, as 1.x, 2.x with TORCH_ variables, and later 2.x print it
        "RuntimeError: [Rank 0] Work WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=60000) timed out in blocking "
        "wait (NCCL_BLOCKING_WAIT=1).",
        "torch.distributed.DistBackendError: [PG 0 Rank 0] Work WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=60000) timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).",
        "torch.distributed.DistBackendError: [PG ID 0 PG GUID 0(default_pg) Rank 0] Work WorkNCCL(SeqNum=5, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=60000) timed out in blocking wait.",
    ],
)
def test_a_blocking_wait_timeout_is_the_collective_timeout_in_every_spelling(line):
    assert by_id()["torch_native:work-timed-out-in-blocking-wait-plain"].kind == "nccl_watchdog_timeout"
    found = explained(line + "\n")
    assert found.id == "log.nccl_watchdog_timeout", found.summary
    assert "ALLREDUCE (SeqNum 5)" in found.summary and "timeout 60 s" in found.summary, found.summary


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 1 (expected (2049), got (1, 2049))",
            "do not fit the group",
        ),
        (
            "RuntimeError: ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected CPUFloatType, got "
            "CPUHalfType)",
            "differ in dtype, size or device",
        ),
    ],
)
def test_glooss_check_of_each_tensor_against_the_input_is_a_collectives_argument(line, said):
    assert by_id()["torch_native:invalid-tensor-size-at-index"].kind == "collective_arguments"
    found = explained(line + "\n")
    assert found.id == "log.collective_arguments" and said in found.summary, found.summary


def test_nccls_cumem_socket_warn_alone_is_the_system_error_it_returns():
    # os/linux_ipcsocket.cc (misc/ipcsocket.cc 2.18-2.27): WARN("UDS: Binding to socket %s failed : %s (%d)", ...),
    # then ncclSystemError
    assert by_id()["nccl:uds-binding-to-socket-failed"].kind == "nccl_system_error"
    found = explained(
        "gpu-a:2188:2301 [0] misc/ipcsocket.cc:58 NCCL WARN UDS: Binding to socket /tmp/nccl-socket-0-3f2a1b9c "
        "failed : Address already in use (98)\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.nccl_system_error", "likely"), found.summary
    assert "UDS: Binding to socket" in found.summary and "cudaHostRegister" not in found.summary, (
        found.summary
    )
    assert "network namespace" in found.fix and "29500" not in found.fix, found.fix
