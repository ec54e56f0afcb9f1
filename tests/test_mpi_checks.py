"""`torchdoctor mpi` against fake `ssh` and `mpirun` scripts on PATH: real processes, no mock of our code."""

import functools
import json
import os
import stat
import sys

import pytest

from torchdoctor.mpi.checks import (
    check_hostfile,
    check_hostnames,
    check_mpirun,
    check_ssh,
    diagnose,
    identify_mpi,
    same_host,
)
from torchdoctor.mpi.hostfile import parse_hostfile
from torchdoctor.runner import run_command

OPEN_MPI_VERSION = "mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n"
MPICH_VERSION = (
    "HYDRA build details:\n    Version:                                 4.0\n"
    "    Release Date:                            Fri Jan 21 10:42:29 CST 2022\n"
)
INTEL_VERSION = "Intel(R) MPI Library for Linux* OS, Version 2021.6 Build 20220227 (id: 28877f3f32)\n"
ROOT_REFUSAL = (
    "--------------------------------------------------------------------------\n"
    "mpirun has detected an attempt to run as root.\n\n"
    "Running as root is *strongly* discouraged as any mistake (e.g., in\n"
)

# The host is the first argument that is not an option; its name says how the fake ssh behaves.
FAKE_SSH = """#!/bin/sh
echo "$*" >> "$FAKE_LOG"
while [ $# -gt 0 ]; do case "$1" in -o) shift 2;; -*) shift;; *) break;; esac; done
case "$1" in
  *denied*) echo "Warning: Permanently added '$1' to the list of known hosts." >&2
            echo "$1: Permission denied (publickey)." >&2; exit 255;;
  *unknown*) echo "ssh: Could not resolve hostname $1: Name or service not known" >&2; exit 255;;
  *refused*) echo "ssh: connect to host $1 port 22: Connection refused" >&2; exit 255;;
  *hang*) exec /bin/sleep 60;;
esac
exit 0
"""

# Prints FAKE_VERSION for --version; otherwise logs its arguments and answers with FAKE_HOSTNAMES.
FAKE_MPIRUN = """#!/bin/sh
if [ "$1" = "--version" ]; then printf '%s' "$FAKE_VERSION"; exit 0; fi
echo "$*" >> "$FAKE_LOG"
if [ -n "$FAKE_HANG" ]; then exec /bin/sleep 60; fi
for name in $FAKE_HOSTNAMES; do echo "$name"; done
printf '%s' "$FAKE_STDERR" >&2
exit ${FAKE_RC:-0}
"""


def script(directory, name, text):
    path = directory / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def fake(tmp_path):
    """A bin/ with fake ssh and mpirun, and a runner whose PATH holds nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir, "ssh", FAKE_SSH)
    script(bin_dir, "mpirun", FAKE_MPIRUN)
    log = tmp_path / "calls.log"
    env = {"PATH": str(bin_dir), "FAKE_LOG": str(log), "FAKE_VERSION": OPEN_MPI_VERSION}

    class Fake:
        def runner(self, **extra):
            return functools.partial(run_command, env={**env, **extra})

        def calls(self):
            return log.read_text().splitlines() if log.exists() else []

    fake = Fake()
    fake.env, fake.bin, fake.tmp = env, bin_dir, tmp_path
    return fake


def hostfile(tmp_path, text):
    path = tmp_path / "hosts.txt"
    path.write_text(text)
    return path, parse_hostfile(path)


def test_identify_mpi_from_version_output():
    assert identify_mpi(OPEN_MPI_VERSION) == ("openmpi", "4.1.4")
    assert identify_mpi(MPICH_VERSION) == ("mpich", "4.0")
    assert identify_mpi(INTEL_VERSION) == ("intel", "2021.6")
    assert identify_mpi("some other launcher 1.0")[0] == "unknown"


def test_mpirun_flavour_read_from_the_real_version_command(fake):
    assert check_mpirun(fake.runner()).summary == "mpirun is Open MPI 4.1.4"
    mpich = check_mpirun(fake.runner(FAKE_VERSION=MPICH_VERSION))
    assert mpich.status == "ok" and mpich.details["flavour"] == "mpich"
    odd = check_mpirun(fake.runner(FAKE_VERSION="launcher 1.0\n"))
    assert odd.status == "warn" and "'launcher 1.0'" in odd.summary


def test_missing_mpirun_fails_with_install_command(fake):
    (fake.bin / "mpirun").unlink()
    finding = check_mpirun(fake.runner())
    assert finding.status == "fail" and "not on PATH" in finding.summary
    assert "apt-get install -y openmpi-bin" in finding.fix and "mpich" in finding.fix


def test_hostfile_syntax_must_suit_the_mpirun(tmp_path):
    path, entries = hostfile(tmp_path, "node1:4\nnode2:4\n")
    assert check_hostfile(path, entries, "mpich").status == "ok"
    wrong = check_hostfile(path, entries, "openmpi")
    assert wrong.status == "fail" and "line 1 ('node1:4') is MPICH syntax" in wrong.summary
    assert wrong.fix.splitlines()[1:] == ["node1 slots=4", "node2 slots=4"]
    path, entries = hostfile(tmp_path, "node1 slots=4\n")
    assert check_hostfile(path, entries, "intel").fix.splitlines()[1:] == ["node1:4"]


def test_ssh_failures_are_named_per_host_with_their_fix(fake, tmp_path):
    _, entries = hostfile(
        tmp_path, "good1 slots=1\nbob@denied1 slots=1\nunknown1\nrefused1\nhang1\nlocalhost\nthis-box\n"
    )
    finding = check_ssh(
        entries, fake.runner(), names_of_this_host={"localhost", "this-box"}, connect_timeout=1
    )
    assert finding.status == "fail"
    assert finding.summary.startswith("passwordless ssh fails to 4 of 5 host(s)")
    assert "bob@denied1: bob@denied1: Permission denied (publickey)." in finding.summary
    assert "ssh-copy-id bob@denied1" in finding.fix
    assert "getent hosts unknown1" in finding.fix
    assert "openssh-server" in finding.fix  # connection refused: no sshd there
    hung = next(r for r in finding.details["results"] if r["host"] == "hang1")
    assert "timed out" in hung["error"] and "ufw allow ssh" in finding.fix
    calls = fake.calls()
    assert len(calls) == 5 and not any("localhost" in c or "this-box" in c for c in calls)
    assert all(c.startswith("-o BatchMode=yes -o ConnectTimeout=1 ") and c.endswith(" true") for c in calls)
    json.dumps(finding.details)


def test_ssh_ok_skipped_for_local_hosts_and_missing_ssh(fake, tmp_path):
    _, entries = hostfile(tmp_path, "good1\ngood2\n")
    ok = check_ssh(entries, fake.runner(), names_of_this_host={"localhost"})
    assert ok.status == "ok" and ok.summary == "passwordless ssh works to 2 host(s): good1, good2"
    _, local = hostfile(tmp_path, "localhost slots=2\n")
    assert check_ssh(local, fake.runner(), names_of_this_host={"localhost"}).status == "skip"
    (fake.bin / "ssh").unlink()
    missing = check_ssh(entries, fake.runner(), names_of_this_host={"localhost"})
    assert missing.status == "fail" and "openssh-client" in missing.fix


def test_sanity_run_uses_each_flavours_options_and_compares_hostnames(fake, tmp_path):
    path, entries = hostfile(tmp_path, "node1 slots=8\nnode2.cluster slots=8\nnode3 slots=8\n")
    here = {"localhost"}
    ok = check_hostnames(path, entries, 2, "openmpi", fake.runner(FAKE_HOSTNAMES="node2 node1"), 10, here)
    assert ok.status == "ok", ok
    assert ok.details["reported"] == ["node2", "node1"]
    wrong = check_hostnames(
        path, entries, 3, "mpich", fake.runner(FAKE_HOSTNAMES="node1 node1 node3"), 10, here
    )
    assert wrong.status == "fail" and "(no answer from node2.cluster)" in wrong.summary
    assert "getent hosts node2.cluster" in wrong.fix
    assert fake.calls() == [
        f"--hostfile {path} -np 2 --map-by ppr:1:node hostname",
        f"-f {path} -n 3 -ppn 1 hostname",
    ]


def test_sanity_run_failures_give_the_fix_for_what_mpirun_said(fake, tmp_path):
    path, entries = hostfile(tmp_path, "localhost slots=1\n")
    here = {"localhost"}
    root = check_hostnames(
        path, entries, 1, "openmpi", fake.runner(FAKE_RC="1", FAKE_STDERR=ROOT_REFUSAL), 10, here
    )
    assert root.status == "fail" and root.summary.endswith(": mpirun has detected an attempt to run as root.")
    assert "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" in root.fix
    hung = check_hostnames(path, entries, 1, "mpich", fake.runner(FAKE_HANG="1"), 1, here)
    assert hung.status == "fail" and "hung for 1s" in hung.summary and "-iface eth0" in hung.fix


def test_same_host_accepts_short_names_local_aliases_and_addresses():
    here = {"localhost", "127.0.0.1", "box"}
    addresses = {"node7": "10.0.0.7"}

    def resolve(name):
        if name not in addresses:
            raise OSError(f"cannot resolve {name}")
        return addresses[name]

    assert same_host("alice@node1.cluster.local", "node1", here, resolve)
    assert same_host("localhost", "box", here, resolve)
    assert same_host("10.0.0.7", "node7", here, resolve)
    assert not same_host("10.0.0.8", "node7", here, resolve)
    assert not same_host("10.0.0.8", "ghost", here, resolve)
    assert not same_host("node1", "node2", here, resolve)


def test_diagnose_skips_the_sanity_run_when_ssh_fails(fake, tmp_path):
    path, entries = hostfile(tmp_path, "good1 slots=1\ndenied1 slots=1\n")
    findings = diagnose(
        path, entries, 2, fake.runner(FAKE_HOSTNAMES="good1 denied1"), names_of_this_host={"x"}
    )
    assert [(f.id, f.status) for f in findings] == [
        ("mpi.mpirun", "ok"),
        ("mpi.hostfile", "ok"),
        ("mpi.ssh", "fail"),
        ("mpi.hostnames", "skip"),
    ]
    assert not any("hostname" in call for call in fake.calls() if "BatchMode" not in call)


def test_cli_runs_every_check_and_exits_by_the_worst(cli, fake, tmp_path):
    path, _ = hostfile(tmp_path, "# two nodes\ngood1 slots=2\ngood2 slots=2\n")
    env = {**fake.env, "PATH": f"{fake.bin}{os.pathsep}{os.path.dirname(sys.executable)}"}
    ok = cli(
        "mpi", "--hostfile", str(path), "--json", env={**env, "FAKE_HOSTNAMES": "good1 good2"}, timeout=60
    )
    data = json.loads(ok.stdout)
    assert ok.returncode == 0, ok.stderr
    assert [(f["id"], f["status"]) for f in data["findings"]] == [
        ("mpi.mpirun", "ok"),
        ("mpi.hostfile", "ok"),
        ("mpi.ssh", "ok"),
        ("mpi.hostnames", "ok"),
    ]
    bad = cli("mpi", "-f", str(path), "-n", "1", env={**env, "FAKE_HOSTNAMES": "elsewhere"}, timeout=60)
    assert bad.returncode == 1 and "✗ mpirun ran on elsewhere; expected good1" in bad.stdout


def test_cli_bad_hostfile_or_count_is_one_line_exit_2(cli, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("node1 slots=2\nnode2 slots=two\n")
    good, _ = hostfile(tmp_path, "node1\nnode2\n")
    for args, words in (
        (["--hostfile", str(bad)], f"hostfile {bad} line 2: 'node2 slots=two': slots must be a whole number"),
        (["--hostfile", str(tmp_path / "missing.txt")], "missing.txt: does not exist"),
        (
            ["--hostfile", str(good), "-n", "5"],
            f"-n 5: more than the 2 host(s) {good} lists",
        ),
    ):
        result = cli("mpi", *args, timeout=60)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, result
        assert len(lines) == 1 and lines[0].startswith("torchdoctor: error: ") and words in lines[0], lines


@pytest.mark.parametrize(
    "flag, value, shown",
    [
        ("--timeout", "nan", "--timeout nan: must be a number of seconds above 0"),
        ("--timeout", "inf", "--timeout inf: must be a number of seconds above 0"),
        (
            "--timeout",
            "1e13",
            "--timeout 10000000000000: must be a number of seconds above 0 and at most 604800",
        ),
        ("--timeout", "0", "--timeout 0: must be a number of seconds above 0"),
        (
            "--ssh-timeout",
            "9999999999",
            "--ssh-timeout 9999999999: must be a number of seconds above 0 and at most 3600",
        ),
        ("--ssh-timeout", "-1", "--ssh-timeout -1: must be a number of seconds above 0"),
    ],
)
def test_cli_timeouts_must_be_finite_and_bounded(cli, tmp_path, flag, value, shown):
    good, _ = hostfile(tmp_path, "node1\n")
    result = cli("mpi", "-f", str(good), flag, value, timeout=60)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result
    assert len(lines) == 1 and lines[0].startswith(f"torchdoctor: error: {shown}"), lines
