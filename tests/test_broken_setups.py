"""`torchdoctor check` on a machine whose set-up is subtly broken, as a user has it (session 43's trials):
real processes in a network namespace of their own, removed whether the test passes or fails."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys

import pytest
from namespace_hosts import finish, start, two_hosts


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


def test_an_ifname_naming_an_interface_without_an_address_says_so_in_check_and_net():
    if os.geteuid() != 0:
        pytest.skip(f"network namespaces need root (ip netns add); running as uid {os.geteuid()}")
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command to make network namespaces with")
    tag = secrets.token_hex(3)
    namespace, interface = f"tdnoaddr-{tag}", f"na{tag}"
    made = _ip("netns", "add", namespace)
    if made.returncode != 0:
        pytest.skip(f"`ip netns add` fails here: {made.stderr.strip()}")
    try:
        for step in (
            ("-n", namespace, "link", "set", "lo", "up"),
            ("-n", namespace, "link", "add", interface, "type", "veth", "peer", "name", f"nb{tag}"),
        ):
            done = _ip(*step)
            assert done.returncode == 0, done.stderr
        run = subprocess.run(
            ["ip", "netns", "exec", namespace, sys.executable, "-m", "torchdoctor", "check", "--no-color"]
            + ["--only", "dist.nccl_settings", "--only", "net.smoke", "--timeout", "20"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "GLOO_SOCKET_IFNAME": interface, "COLUMNS": "200"},
        )
    finally:
        _ip("netns", "del", namespace)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"GLOO_SOCKET_IFNAME={interface}: here, but with no IP address" in run.stdout, run.stdout
    assert f"network interface {interface!r} is here but has no IP address" in run.stdout, run.stdout
    assert "no network interface" not in run.stdout and "Traceback" not in run.stderr


def test_a_rendezvous_endpoint_on_the_hosts_other_interface_is_named_on_both_hosts():
    # --rdzv-endpoint given as the rendezvous host's second interface: torch does not take that address for its
    # own host (no store is started: a waits), and b has no route to it (not a firewall)
    with two_hosts("tdoif") as (a, b):
        for step in (
            ("link", "add", f"{a.interface}x", "type", "veth", "peer", "name", f"{a.interface}y"),
            ("addr", "add", "10.77.0.1/24", "dev", f"{a.interface}x"),
            ("link", "set", f"{a.interface}x", "up"),
            ("link", "set", f"{a.interface}y", "up"),
        ):
            done = _ip("-n", a.namespace, *step)
            assert done.returncode == 0, done.stderr
        args = ["-m", "torchdoctor", "net", "--nnodes", "2", "--nproc-per-node", "1", "--no-color"]
        args += ["--rdzv-endpoint", "10.77.0.1:29400", "--timeout", "10"]
        (code_a, out_a, err_a), (code_b, out_b, err_b) = finish([start(a, *args), start(b, *args)])
    assert code_a == 1 and code_b == 1, out_a + err_a + out_b + err_b
    assert f"{a.name} waited for the rendezvous store at 10.77.0.1:29400, an address of its own" in out_a, (
        out_a
    )
    assert f"--rdzv-endpoint {a.name}:29400" in out_a and "firewall" not in out_a
    assert "(Network is unreachable)" in out_b and "This host has no route to 10.77.0.1" in out_b, out_b
    assert "Open TCP port" not in out_b
