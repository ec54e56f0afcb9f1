"""The parts of `torchdoctor net` that read text or compute figures: NCCL logs, torch errors, busbw."""

import re
from pathlib import Path

import pytest

from torchdoctor.distributed.ranks import from_environment
from torchdoctor.net import bandwidth, nccl_log
from torchdoctor.net.torch_errors import classify
from torchdoctor.net.verdicts import launcher_failures
from torchdoctor.net.worker import WorkerOptions, first_slurm_host, rendezvous_address

FIXTURES = Path(__file__).parent / "fixtures"


def nccl(name: str) -> nccl_log.NcclSummary:
    return nccl_log.summarise((FIXTURES / "nccl" / name).read_text())


def torch_text(name: str) -> str:
    return (FIXTURES / "torch" / name).read_text()


# -- NCCL INFO logs -----------------------------------------------------------------------------------


def test_single_node_p2p_ipc_log():
    summary = nccl("single-node-p2p-ipc.log")
    assert summary.versions == ["2.7.8+cuda10.2"]
    assert summary.networks == ["IB"]
    assert set(summary.transport_counts()) == {"P2P/IPC"}
    assert len(summary.transports) == 12  # 4 GPUs: every ordered pair of the ring/tree connections seen
    assert (
        "NET/IB hfi1_2:1/IB hfi1_0:1/IB hfi1_3:1/IB hfi1_1:1/IB (OOB ib0:10.0.0.1<0>)"
        in summary.interfaces["node01"]
    )
    assert not summary.warnings
    (finding,) = nccl_log.findings(summary)
    assert (
        finding.status == "ok"
        and "NCCL 2.7.8+cuda10.2" in finding.summary
        and "P2P/IPC ×12" in finding.summary
    )


def test_multi_node_ib_names_the_nic_behind_each_net_connection():
    summary = nccl("multi-node-ib-4x8gpu.log")
    counts = summary.transport_counts()
    assert counts["P2P/IPC/read"] > 0
    # NET/IB/1 and NET/IB/3 are indexes into that host's "NET/IB : Using [0]hfi1_1 [1]hfi1_0 ... [3]hfi1_3" list
    assert {"NET/IB (hfi1_0:1/IB)", "NET/IB (hfi1_3:1/IB)"} <= set(counts)
    assert summary.versions == ["2.10.3+cuda11.3"]


def test_gdrdma_and_cumem_transports():
    gdr = nccl("multi-node-ib-gdrdma-channels.log").transport_counts()
    assert "NET/IB (dev 0) GDRDMA" in gdr and "P2P/IPC/read" in gdr
    cumem = nccl("multi-node-ib-p2p-cumem-gdrdma.log").transport_counts()
    assert "P2P/CUMEM" in cumem and "NET/IB (dev 2) GDRDMA" in cumem


def test_direct_pointer_and_shm():
    counts = nccl("single-node-8gpu-p2p-direct-and-shm.log").transport_counts()
    assert {"P2P/direct pointer", "P2P/direct pointer/read", "SHM"} <= set(counts)


def test_socket_network_and_interface():
    summary = nccl("multi-node-socket-2x1gpu.log")
    assert summary.networks == ["Socket"]
    assert set(summary.transport_counts()) == {"NET/Socket (eth0)"}
    assert "NET/Socket eth0" in summary.interfaces["ip-10-0-0-1"]
    assert "bootstrap eth0 10.0.0.2" in summary.interfaces["ip-10-0-0-2"]


@pytest.mark.parametrize(
    "name, warning, hint",
    [
        ("p2p-ipc-peer-access-not-supported.log", "peer access is not supported", "NCCL_P2P_DISABLE=1"),
        ("ib-roce-ibv-create-cq-failed.log", "ibv_create_cq failed", "NCCL_IB_DISABLE=1"),
        ("ib-bootstrap-rank-already-checked-in.log", "has already checked in", "MASTER_PORT"),
        ("socket-connect-abort-proxy-failure.log", "Connect to 10.0.0.2<45763> failed", "NCCL_SOCKET_IFNAME"),
    ],
)
def test_every_warn_line_with_its_hint(name, warning, hint):
    summary = nccl(name)
    matching = [w for w in summary.warnings if warning in w["message"]]
    assert matching, summary.warnings
    assert hint in matching[0]["hint"]
    found = nccl_log.findings(summary)
    assert found[0].status == "warn"
    assert [f.id for f in found[1:]] == ["net.nccl_warn"] * len(summary.warnings)


def test_socket_failure_lists_all_four_warnings_in_order():
    messages = [w["message"] for w in nccl("socket-connect-abort-proxy-failure.log").warnings]
    assert len(messages) == 4
    assert messages[0].startswith("socketStartConnect") and messages[-1].startswith("Socket recv failed")


def test_long_lines_are_read_in_linear_time():
    """A 100,000-character line took minutes with the old unbounded patterns; now it is a blink (no timing
    asserted: a quadratic reader would run past the suite's timeout)."""
    for line in (
        "node01:1:2 [0] " + "x" * 100_000,
        "a" * 100_000 + "] " + "b:" * 50_000,
        "z NCCL WARN " * 9000,
    ):
        nccl_log.summarise(line + "\nnode01:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[0] via P2P/IPC\n")
    assert nccl_log.summarise("n:1:2 [0] NCCL WARN " + "w" * 100_000).warnings[0]["message"].startswith("www")


def test_output_without_nccl_is_a_skip():
    (finding,) = nccl_log.findings(nccl_log.summarise("[vm:0] OK (rank 0/2)\n"))
    assert finding.status == "skip"


# -- torch.distributed failures ------------------------------------------------------------------------


def test_c10d_connect_timeouts_name_the_endpoint():
    (short,) = classify(torch_text("c10d-rendezvous-connection-error-short.txt"))
    assert short.kind == "unreachable" and (short.facts["host"], short.facts["port"]) == ("10.0.0.1", "1234")
    assert "nc -zv 10.0.0.1 1234" in short.fix
    (rdzv,) = classify(torch_text("c10d-rendezvous-client-socket-timeout.txt"))
    assert rdzv.facts["host"] == "IP1" and rdzv.facts["after"] == "60s"


def test_numeric_hostname_misparse_is_called_out():
    for name in ("c10d-client-socket-connect-timed-out.txt", "c10d-tcpstore-connect-failed-traceback.txt"):
        (problem,) = classify(torch_text(name))
        assert "misread as a number" in problem.summary and "MASTER_ADDR" in problem.fix


def test_dist_backend_errors():
    unreachable, nccl_error = classify(torch_text("distbackenderror-no-route-to-host.txt"))
    assert unreachable.facts["reason"] == "No route to host"
    assert nccl_error.facts["nccl_version"] == "2.18.6" and "firewall" in nccl_error.fix
    (interleaved,) = classify(torch_text("distbackenderror-unhandled-system-error-interleaved-ranks.txt"))
    assert interleaved.facts["last_error"] == "" and "NCCL_DEBUG=INFO" in interleaved.fix
    (no_iface,) = classify(torch_text("nccl-internal-error-bootstrap-no-socket-interface.txt"))
    assert no_iface.facts["last_error"] == "Bootstrap : no socket interface found"
    assert "NCCL_SOCKET_IFNAME" in no_iface.fix
    (recv,) = classify(torch_text("distbackenderror-recv-traceback.txt"))
    assert recv.kind == "nccl_error" and recv.facts["nccl_version"] == "2.19.4"


def test_watchdog_timeouts_name_the_collective_and_ranks():
    (allreduce,) = classify(torch_text("watchdog-timeout-allreduce-600000ms.txt"))
    assert allreduce.kind == "collective_timeout"
    assert allreduce.facts["op"] == "ALLREDUCE" and allreduce.facts["seq"] == 808
    assert allreduce.facts["ranks"] == [0, 1, 2] and allreduce.facts["last_completed"] == 807
    assert "timeout=timedelta" in allreduce.fix
    (coalesced,) = classify(torch_text("watchdog-timeout-coalesced-taking-process-down.txt"))
    assert coalesced.facts["op"] == "COALESCED" and 4 in coalesced.facts["ranks"]
    (gather,) = classify(torch_text("watchdog-thread-terminated-allgather-cpp-frames.txt"))
    assert gather.facts["op"] == "_ALLGATHER_BASE" and gather.facts["ranks"] == [1]


def test_torchrun_failure_block():
    output = """Failures:
[1]:
  time      : 2026-11-22_08:19:44
  host      : node07
  rank      : 3 (local_rank: 1)
  exitcode  : -11 (pid: 8459)
  error_file: <N/A>
  traceback : Signal 11 (SIGSEGV) received by PID 8459
"""
    assert launcher_failures(output) == {
        3: {
            "host": "node07",
            "exitcode": -11,
            "killed": False,
            "traceback": "Signal 11 (SIGSEGV) received by PID 8459",
        }
    }


# -- bandwidth figures ---------------------------------------------------------------------------------


def test_nccl_tests_bus_factors():
    assert bandwidth.bus_factor("all_reduce", 8) == 2 * 7 / 8
    assert bandwidth.bus_factor("all_gather", 8) == bandwidth.bus_factor("reduce_scatter", 8) == 7 / 8
    assert bandwidth.bus_factor("broadcast", 8) == 1
    algbw, busbw = bandwidth.bandwidth("all_reduce", 2 * 10**9, 0.5, 4)
    assert algbw == 4.0 and busbw == 6.0
    with pytest.raises(ValueError, match="alltoall"):
        bandwidth.bus_factor("alltoall", 2)


def test_sizes():
    assert [bandwidth.parse_size(s) for s in ("4096", "64K", "16MiB", "1G", "2M")] == [
        4096,
        65536,
        2**24,
        2**30,
        2**21,
    ]
    assert bandwidth.human_size(2**26) == "64 MiB" and bandwidth.human_size(1000) == "1000 B"
    with pytest.raises(ValueError, match="'lots'"):
        bandwidth.parse_size("lots")
    assert bandwidth.parse_size("64G") == bandwidth.MAX_SIZE == 64 * 2**30
    for text in ("infG", "nanK", "-infM", "99999999999G", "65G", "9" * 400, "0", "-1K"):
        with pytest.raises(ValueError, match=f"'{text}' must be from 1 byte to 64 GiB"):
            bandwidth.parse_size(text)


def test_iterations_default_each_on_its_own():
    assert bandwidth.iteration_counts(None, 50, "gloo") == (1, 50)  # --iters 50 alone is kept
    assert bandwidth.iteration_counts(0, None, "nccl") == (0, 20)
    assert bandwidth.iteration_counts(None, None, "nccl") == (5, 20)
    with pytest.raises(ValueError, match="iters=0"):
        bandwidth.iteration_counts(None, 0, "gloo")
    with pytest.raises(ValueError, match="warmup=-1"):
        bandwidth.iteration_counts(-1, 5, "gloo")


def test_rendezvous_endpoint_is_host_and_port():
    from torchdoctor.launch.torchrun import parse_endpoint

    assert parse_endpoint("node01:29400") == ("node01", 29400)
    assert parse_endpoint("[fe80::1]:1") == ("fe80::1", 1)
    for text in ("foo:bar", ":29400", "node01", "node01:0", "node01:65536", "node01:-1", " :1", "a b:1"):
        with pytest.raises(ValueError, match=re.escape(repr(text))):
            parse_endpoint(text)


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), 0.0, -1.0])
def test_torchrun_command_rejects_a_timeout_it_cannot_pass_on(tmp_path, timeout):
    from torchdoctor.net.spawn import launcher_command

    with pytest.raises(ValueError, match=f"timeout={timeout!r}"):
        launcher_command(2, WorkerOptions(timeout=timeout), tmp_path, 2, "node01:29400", "run")
    with pytest.raises(ValueError, match="rendezvous endpoint ''"):
        launcher_command(2, WorkerOptions(), tmp_path, 2, "", "run")


def rows(busbws):
    return [
        {"op": "all_reduce", "size": 2**20 * 4**i, "seconds": 1.0, "algbw": b, "busbw": b, "ranks": 2}
        for i, b in enumerate(busbws)
    ]


def test_expect_busbw_fails_below_90_percent():
    measured = rows([1.0, 8.0, 9.0])
    (ok,) = bandwidth.findings(measured, "nccl", expect_busbw=10.0)  # 9.0 is exactly 90%
    assert ok.status == "ok" and "peak busbw 9.000 GB/s" in ok.summary and "16 MiB" in ok.summary
    (bad,) = bandwidth.findings(measured, "nccl", expect_busbw=10.1)
    assert bad.status == "fail" and "below 90%" in bad.summary and "--nccl-debug" in bad.fix


def test_plot_writes_a_png(tmp_path):
    path = tmp_path / "busbw.png"
    bandwidth.plot(rows([0.5, 1.0]) + [dict(r, op="broadcast") for r in rows([0.7, 1.1])], str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- launch environments -------------------------------------------------------------------------------


def test_slurm_master_address_is_the_first_host_and_port_from_job_id():
    env = {
        "SLURM_PROCID": "5",
        "SLURM_NTASKS": "8",
        "SLURM_LOCALID": "1",
        "SLURM_NTASKS_PER_NODE": "4",
        "SLURM_STEP_NODELIST": "gpu[07-08]",
        "SLURM_JOB_ID": "123456",
    }
    assert first_slurm_host("gpu[07-08,11],cpu1") == "gpu07" and first_slurm_host("node5,node6") == "node5"
    addr, port, source = rendezvous_address(from_environment(env), env)
    assert (addr, port) == ("gpu07", 20000 + 123456 % 20000) and "SLURM" in source


def test_mpirun_over_hosts_needs_master_addr():
    env = {
        "OMPI_COMM_WORLD_RANK": "2",
        "OMPI_COMM_WORLD_SIZE": "4",
        "OMPI_COMM_WORLD_LOCAL_RANK": "0",
        "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
    }
    with pytest.raises(ValueError, match="mpirun -x MASTER_ADDR"):
        rendezvous_address(from_environment(env), env)
    single = dict(env, OMPI_COMM_WORLD_LOCAL_SIZE="4")
    assert rendezvous_address(from_environment(single), single)[:2] == ("127.0.0.1", 29500)
    given = dict(env, MASTER_ADDR="node01", MASTER_PORT="1234")
    assert rendezvous_address(from_environment(given), given)[:2] == ("node01", 1234)


def test_default_workers_one_per_gpu_or_two(tmp_path):
    from torchdoctor.net.spawn import default_nproc

    assert default_nproc({}, root=tmp_path) == 2  # no NVIDIA driver here
    for bus_id in ("0000:17:00.0", "0000:65:00.0", "0000:ca:00.0"):
        (tmp_path / "proc/driver/nvidia/gpus" / bus_id).mkdir(parents=True)
    assert default_nproc({}, root=tmp_path) == 3
    assert default_nproc({"CUDA_VISIBLE_DEVICES": "1"}, root=tmp_path) == 1
    assert default_nproc({"CUDA_VISIBLE_DEVICES": ""}, root=tmp_path) == 2  # GPUs hidden: CPU workers


def test_launcher_output_names_the_unreachable_rendezvous_host():
    """What `torchdoctor net --nnodes 2` says when torchrun fails before any worker starts."""
    import socket

    from torchdoctor.net.verdicts import verdicts

    output = torch_text("c10d-rendezvous-connection-error-short.txt")
    (finding,) = verdicts(
        {}, 2, 60, output, finished=True, expected_reports=1, endpoint="10.0.0.1:1234", nnodes=2
    )
    assert finding.id == "net.join" and finding.status == "fail"
    assert f"{socket.gethostname()} cannot reach the rendezvous host 10.0.0.1:1234 (timed out after 60s)" in (
        finding.summary
    )
    waited = "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
    (alone,) = verdicts(
        {}, 8, 30, waited, finished=True, expected_reports=4, endpoint="node01:29400", nnodes=2
    )
    assert "reached the rendezvous at node01:29400 within 30s: 1 other node never came" in alone.summary
    assert "nc -zv node01 29400" in alone.fix
    # of three nodes, this one cannot tell how many of the other two came (one had, on namespace hosts)
    (three,) = verdicts(
        {}, 3, 15, waited, finished=True, expected_reports=1, endpoint="node01:29400", nnodes=3
    )
    assert "never came" not in three.summary and "only this node" not in three.summary, three.summary
    assert three.summary.startswith(
        "the rendezvous at node01:29400 did not complete within 15s: not all 3 nodes came (this node, "
    )


@pytest.mark.parametrize("world_size", [1, 2])
def test_a_passed_smoke_test_says_how_many_ranks_talked(world_size):
    """`net --nproc-per-node 1` passes, but one rank talked to nobody: it says so, not "1 ranks ... talk"."""
    from torchdoctor.net.rank_state import RankState
    from torchdoctor.net.verdicts import verdicts

    states = {
        rank: RankState(rank, world_size, rank, "vm", "fork", stage="done", backend="gloo", device="cpu")
        for rank in range(world_size)
    }
    [finding] = verdicts(states, world_size, timeout=10)
    assert finding.status == "ok"
    if world_size == 1:
        assert finding.summary.startswith(
            "1 rank on 1 host (vm), alone (nothing to talk to: start 2 or more ranks"
        )
    else:
        assert finding.summary.startswith("2 ranks on 1 host (vm) talk to each other over gloo")


@pytest.mark.parametrize("endpoint", ["127.0.0.1:29471", "node01:29400"])
def test_a_rendezvous_no_other_node_reached_offers_no_interface_setting(endpoint):
    """Session 40: `net --nnodes 2` alone at the rendezvous was told to set NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME,
    which play no part before the ranks start (only the store at the endpoint is reached), and, for 127.0.0.1, to
    run `nc -zv 127.0.0.1` from the other hosts, which reaches each of them itself."""
    from torchdoctor.net.verdicts import verdicts

    waited = "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
    (alone,) = verdicts({}, 4, 8, waited, finished=True, expected_reports=2, endpoint=endpoint, nnodes=2)
    host, _, port = endpoint.rpartition(":")
    assert f"nc -zv {host} {port}" in alone.fix and "SOCKET_IFNAME" not in alone.fix
    assert ("is a loopback address" in alone.fix) == (host == "127.0.0.1")
