"""One machine listed under two names in a hostfile is refused up front, naming both lines, instead of an
mpirun failure that blames /etc/hosts."""

import socket
import threading

import pytest

from torchdoctor.errors import BadInput
from torchdoctor.mpi.hostfile import parse_hostfile, refuse_aliases


def entries_of(tmp_path, text):
    path = tmp_path / "hosts"
    path.write_text(text)
    return path, parse_hostfile(path)


@pytest.mark.parametrize(
    "first, second",
    [
        ("localhost", "127.0.0.1"),
        ("127.0.0.1", "localhost"),
        ("localhost", "127.0.0.2"),  # all of 127/8 is this machine
        (socket.gethostname(), "localhost"),
        ("127.0.0.1", "::1"),
    ],
)
def test_this_machine_under_two_names(tmp_path, first, second, cli):
    path, entries = entries_of(tmp_path, f"# two names\n{first} slots=2\n{second} slots=2\n")
    with pytest.raises(BadInput) as refused:
        refuse_aliases(path, entries)
    assert str(refused.value) == (
        f"hostfile {path} lines 2 and 3: {first} and {second} are both this machine, one machine under two "
        "names; list it once, with its slots added up"
    )
    result = cli("mpi", "-f", str(path))  # before mpirun or ssh is tried
    assert result.returncode == 2 and result.stderr.strip() == f"torchdoctor: error: {refused.value}"


FAKE_DNS = {"node1": {"10.0.0.5"}, "node1.cluster": {"10.0.0.5"}, "node2": {"10.0.0.6", "fd00::6"}}


def test_two_names_of_one_remote_host(tmp_path):
    path, entries = entries_of(tmp_path, "node1:4\nnode2:4\nnode1.cluster:4\n")
    with pytest.raises(BadInput, match="lines 1 and 3: node1 and node1.cluster both resolve to 10.0.0.5"):
        refuse_aliases(path, entries, resolve=lambda name: FAKE_DNS.get(name, set()))


def test_distinct_and_unresolved_hosts_pass(tmp_path):
    path, entries = entries_of(tmp_path, "node1\nnode2\nno-such-host.invalid\nalso-unknown.invalid\n")
    refuse_aliases(path, entries, resolve=lambda name: FAKE_DNS.get(name, set()))


def test_a_name_that_never_resolves_does_not_hold_the_check(tmp_path):
    path, entries = entries_of(tmp_path, "node1\nslow-dns\n")
    release = threading.Event()

    def resolve(name):
        if name == "slow-dns":
            release.wait(30)
        return FAKE_DNS.get(name, set())

    try:
        refuse_aliases(path, entries, resolve=resolve, timeout=0.5)
    finally:
        release.set()
