"""`torchdoctor check` on a machine whose set-up is subtly broken, as a user has it (session 43's trials):
real processes in a network namespace of their own, removed whether the test passes or fails."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys

import pytest


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
