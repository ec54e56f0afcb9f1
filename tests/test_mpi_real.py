"""`torchdoctor mpi` against the real ssh client and a real Open MPI on localhost (skipped, with the reason,
where they are not installed)."""

import json
import os
import shutil
import socket

import pytest

from torchdoctor.mpi.checks import check_hostnames, check_mpirun, check_ssh
from torchdoctor.mpi.hostfile import parse_hostfile
from torchdoctor.runner import run_command


def open_mpi_or_skip():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not installed (apt-get install -y openmpi-bin to run this test)")
    flavour = check_mpirun().details.get("flavour")
    if flavour != "openmpi":
        pytest.skip(f"mpirun on PATH is {flavour}, not Open MPI")


# Open MPI refuses to start as root unless told twice; CI containers often run as root.
AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def test_real_open_mpi_runs_hostname_on_localhost(cli, tmp_path):
    open_mpi_or_skip()
    hostfile = tmp_path / "hosts.txt"
    hostfile.write_text("# this machine only\nlocalhost slots=1\n")
    result = cli("mpi", "--hostfile", str(hostfile), "--json", "--timeout", "60", env=AS_ROOT, timeout=90)
    data = json.loads(result.stdout)
    by_id = {f["id"]: f for f in data["findings"]}
    assert result.returncode == 0, result.stdout
    assert by_id["mpi.mpirun"]["details"]["flavour"] == "openmpi"
    assert by_id["mpi.ssh"]["status"] == "skip"  # localhost needs no ssh
    assert by_id["mpi.hostnames"]["status"] == "ok"
    assert by_id["mpi.hostnames"]["details"]["reported"] == [socket.gethostname()]


def test_real_open_mpi_failure_becomes_a_finding_with_a_fix(tmp_path):
    open_mpi_or_skip()
    hostfile = tmp_path / "hosts.txt"
    # .invalid never resolves (RFC 2606), so Open MPI's own ssh launch of its daemon fails there.
    hostfile.write_text("localhost slots=1\nno-such-node.invalid slots=1\n")
    entries = parse_hostfile(hostfile)
    runner = lambda args, timeout: run_command(args, timeout=timeout, env={**os.environ, **AS_ROOT})  # noqa: E731
    finding = check_hostnames(hostfile, entries, 2, "openmpi", runner, timeout=60)
    assert finding.status == "fail", finding
    assert finding.summary.startswith(f"`mpirun --hostfile {hostfile} -np 2 --map-by ppr:1:node hostname` ")
    # Open MPI 4 ssh-es to the name shortened at the first dot; the fix says so and how to keep it whole.
    assert "Could not resolve hostname no-such-node" in finding.summary
    assert "getent hosts no-such-node" in finding.fix
    if check_mpirun().details["version"].startswith("4."):
        assert "orte_keep_fqdn_hostnames" in finding.fix


@pytest.mark.skipif(os.geteuid() != 0, reason="Open MPI only refuses to start as root")
def test_real_open_mpi_as_root_says_how_to_allow_it(tmp_path):
    open_mpi_or_skip()
    hostfile = tmp_path / "hosts.txt"
    hostfile.write_text("localhost\n")
    env = {k: v for k, v in os.environ.items() if k not in AS_ROOT}
    runner = lambda args, timeout: run_command(args, timeout=timeout, env=env)  # noqa: E731
    finding = check_hostnames(hostfile, parse_hostfile(hostfile), 1, "openmpi", runner, timeout=60)
    assert finding.status == "fail" and "attempt to run as root" in finding.summary
    assert "OMPI_ALLOW_RUN_AS_ROOT=1" in finding.fix


def test_real_ssh_to_an_address_without_sshd_says_to_start_one(tmp_path):
    if shutil.which("ssh") is None:
        pytest.skip("no ssh client installed")
    with socket.socket() as probe:
        probe.settimeout(2)
        if probe.connect_ex(("127.0.0.2", 22)) == 0:
            pytest.skip("an sshd listens on 127.0.0.2:22 here")
    hostfile = tmp_path / "hosts.txt"
    hostfile.write_text("127.0.0.2 slots=1\n")
    finding = check_ssh(parse_hostfile(hostfile), names_of_this_host=set(), connect_timeout=3)
    assert finding.status == "fail"
    assert "127.0.0.2: ssh: connect to host 127.0.0.2 port 22: Connection refused" in finding.summary
    assert "openssh-server" in finding.fix
