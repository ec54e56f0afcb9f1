"""distributed/preflight.py: a rendezvous that cannot work is named with its fix before torchrun starts."""

import os
import socket

import pytest
from helpers import free_port

from torchdoctor.launch.preflight import (
    check_host,
    check_interfaces,
    check_port_free,
    check_reachable,
    failures,
    port_holder,
    preflight,
)

PRESENT = ["eth0", "ib0", "lo"]


@pytest.mark.parametrize(
    "environ, missing",
    [
        ({"GLOO_SOCKET_IFNAME": "eth9"}, "GLOO_SOCKET_IFNAME='eth9'"),
        ({"GLOO_SOCKET_IFNAME": "eth0,eth9"}, "GLOO_SOCKET_IFNAME='eth9'"),
        ({"GLOO_SOCKET_IFNAME": "eth"}, "GLOO_SOCKET_IFNAME='eth'"),  # gloo wants whole names
        ({"GLOO_SOCKET_IFNAME": "ETH0"}, "GLOO_SOCKET_IFNAME='ETH0'"),
        ({"NCCL_SOCKET_IFNAME": "enp"}, "NCCL_SOCKET_IFNAME='enp'"),
        ({"NCCL_SOCKET_IFNAME": "=eth"}, "NCCL_SOCKET_IFNAME='=eth'"),  # '=': exactly that name
        ({"NCCL_SOCKET_IFNAME": "ib1,enp"}, "NCCL_SOCKET_IFNAME='ib1,enp'"),
        ({"GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "bond"}, "NCCL_SOCKET_IFNAME='bond'"),
    ],
)
def test_a_socket_interface_that_does_not_exist_is_named_with_those_there_are(environ, missing):
    finding = check_interfaces(environ, PRESENT)
    assert finding.id == "dist.preflight_interface" and finding.status == "fail"
    assert missing in finding.summary and "(there are: eth0, ib0, lo)" in finding.summary
    assert finding.fix.startswith("export ")


@pytest.mark.parametrize(
    "environ",
    [
        {"GLOO_SOCKET_IFNAME": "eth0"},
        {"GLOO_SOCKET_IFNAME": "eth0,ib0"},
        {"NCCL_SOCKET_IFNAME": "eth"},  # NCCL: a prefix
        {"NCCL_SOCKET_IFNAME": "=ib0"},
        {"NCCL_SOCKET_IFNAME": "^docker,lo"},  # excluding is never "missing"
        {"NCCL_SOCKET_IFNAME": "bond,ib"},
    ],
)
def test_interfaces_that_exist_pass(environ):
    assert check_interfaces(environ, PRESENT).status == "ok"


def test_no_interface_named_is_a_skip_and_the_real_interfaces_are_read():
    assert check_interfaces({}).status == "skip"
    assert check_interfaces({"GLOO_SOCKET_IFNAME": "lo"}).status == "ok"  # this machine's own loopback


@pytest.mark.parametrize(
    "host",
    ["nosuch.invalid", "node-that-is-not.invalid", "x" * 300, "a..b", "under_score.invalid", "é.invalid"],
)
def test_a_host_that_does_not_resolve_is_named_with_getent(host):
    finding = check_host(host)
    assert finding.id == "dist.preflight_host" and finding.status == "fail"
    assert f"rendezvous host {host!r} does not resolve" in finding.summary
    assert f"`getent hosts {host}`" in finding.fix and "/etc/hosts" in finding.fix
    assert "\n" not in finding.fix


@pytest.mark.parametrize(
    "flag, shown", [("--master-port", "--master-port "), ("--rdzv-endpoint", "--rdzv-endpoint 127.0.0.1:")]
)
def test_a_taken_port_is_named_with_the_process_that_holds_it_and_the_flag_to_change(taken_port, flag, shown):
    finding = check_port_free("127.0.0.1", taken_port, True, flag, ["127.0.0.1"])
    assert finding.id == "dist.preflight_port" and finding.status == "fail"
    assert f"port {taken_port} is already taken on this node, by pid {os.getpid()} (" in finding.summary
    suggested = int(finding.fix.split(shown, 1)[1].split(",")[0])
    assert suggested != taken_port
    with socket.socket() as probe:
        probe.bind(("", suggested))
    assert f"(kill {os.getpid()})" in finding.fix


def test_port_holder_reads_proc_net_tcp_and_the_file_descriptors(tmp_path):
    (tmp_path / "proc/net").mkdir(parents=True)
    header = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    )
    (tmp_path / "proc/net/tcp").write_text(
        header
        + "   0: 00000000:7530 00000000:0000 0A 00000000:00000000 00:00000000 00000000  0  0 4242 1 0 100 0 0 10 0\n"
        + "   1: 0100007F:7531 0100007F:97A1 01 00000000:00000000 00:00000000 00000000  0  0 4343 1 0 100 0 0 10 0\n"
    )
    (tmp_path / "proc/net/tcp6").write_text(header)
    for pid, inode, cmdline in (
        (17, 999, b"sshd\0"),
        (23, 4242, b"python\0-m\0http.server\0"),
        (31, 4343, b"x\0"),
    ):
        (tmp_path / f"proc/{pid}/fd").mkdir(parents=True)
        (tmp_path / f"proc/{pid}/fd/3").symlink_to(f"socket:[{inode}]")
        (tmp_path / f"proc/{pid}/cmdline").write_bytes(cmdline)
    assert port_holder(0x7530, tmp_path) == {"pid": 23, "command": "python -m http.server"}
    assert port_holder(0x7531, tmp_path) is None  # 4343 is a connection, not a listener


@pytest.mark.parametrize("address", ["192.0.2.1", "198.51.100.7", "203.0.113.9"])  # documentation ranges
def test_hosting_the_rendezvous_on_an_address_of_another_machine_is_named(address):
    found = preflight(address, free_port(), hosted_here=True, environ={})
    (failed,) = failures(found)
    assert failed.id == "dist.preflight_port"
    assert (
        f"this node hosts the rendezvous, but {address} ({address}) is not one of its addresses"
        in failed.summary
    )


def test_a_refused_port_fails_only_on_a_single_node():
    port = free_port()
    alone = check_reachable("127.0.0.1", port, single_node=True)
    assert alone.status == "fail" and f"nothing listens on 127.0.0.1:{port}" in alone.summary
    assert check_reachable("127.0.0.1", port, single_node=False).status == "ok"  # node 0 may come later


def test_a_listening_port_is_reachable(taken_port):
    assert check_reachable("127.0.0.1", taken_port).summary == f"127.0.0.1:{taken_port} answers"


def test_c10d_decides_who_hosts_by_address_and_standalone_checks_only_interfaces(taken_port):
    found = preflight("localhost", taken_port, hosted_here=None, port_flag="--rdzv-endpoint", environ={})
    assert [f.id for f in failures(found)] == ["dist.preflight_port"]  # localhost is here: it hosts
    assert "--rdzv-endpoint localhost:" in failures(found)[0].fix
    assert [f.id for f in preflight("nosuch.invalid", 0, environ={})] == ["dist.preflight_interface"]


def test_everything_fine_is_all_ok():
    found = preflight("127.0.0.1", free_port(), hosted_here=True, environ={"GLOO_SOCKET_IFNAME": "lo"})
    assert [(f.id, f.status) for f in found] == [
        ("dist.preflight_interface", "ok"),
        ("dist.preflight_host", "ok"),
        ("dist.preflight_port", "ok"),
    ]
