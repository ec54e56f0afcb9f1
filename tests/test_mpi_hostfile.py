import os

import pytest

from torchdoctor.errors import BadInput
from torchdoctor.mpi.hostfile import as_style, distinct_hosts, parse_hostfile, styles


def write(tmp_path, text, name="hosts.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_open_mpi_hostfile_with_comments_slots_max_slots_and_users(tmp_path):
    path = write(
        tmp_path,
        "# the training cluster\n\nnode1 slots=4 max_slots=8\n  alice@node2 slots=2   # the odd one\nnode3\n",
    )
    entries = parse_hostfile(path)
    assert [(e.host, e.slots, e.max_slots, e.line) for e in entries] == [
        ("node1", 4, 8, 3),
        ("alice@node2", 2, None, 4),
        ("node3", None, None, 5),
    ]
    assert [e.hostname for e in distinct_hosts(entries)] == ["node1", "node2", "node3"]
    assert styles(entries) == {"openmpi"}


def test_mpich_hostfile_with_counts_and_interface(tmp_path):
    entries = parse_hostfile(write(tmp_path, "node1:2\nnode2:2 ifhn=10.0.0.2\n10.0.0.3\n"))
    assert [(e.host, e.slots, e.style) for e in entries] == [
        ("node1", 2, "mpich"),
        ("node2", 2, "mpich"),
        ("10.0.0.3", None, "plain"),
    ]
    assert styles(entries) == {"mpich"}


@pytest.mark.parametrize(
    "line, words",
    [
        ("node1 slots=x", "slots must be a whole number of at least 1, not 'x'"),
        ("node1 slots=0", "not '0'"),
        ("node1:abc", "not 'abc'"),
        ("node1 cores=2", "unknown option 'cores'"),
        ("node1 slots", "expected key=value"),
        ("node1:2 slots=2", "mixes Open MPI's key=value with MPICH's"),
        ("node1 slots=2 ifhn=10.0.0.1", "mixes"),
        ("node1 slots=4 max_slots=2", "max_slots=2 is less than slots=4"),
        ("node/1 slots=2", "'node/1' is not a host name"),
        ("node1 slots=²", "slots must be a whole number of at least 1, not '²'"),  # '²'.isdigit() is True
        ("node1:٣", "not '٣'"),  # an Arabic-Indic three: str.isdigit() again, int() takes it
        ("node1 max_slots=+4", "not '+4'"),
        ("node1:2:3", "'node1:2:3' is not an IPv6 address"),
        ("fe80::zz slots=1", "'fe80::zz' is not an IPv6 address"),
        # what Open MPI refuses: counts past a C int, a host listed twice (in any spelling)
        ("node1 slots=99999999999999999999", "slots 99999999999999999999 is more than mpirun can count"),
        ("node1 max_slots=2147483648", "at most 2147483647"),
        ("node1:4294967296", "more than mpirun can count"),
        ("node0", "host node0 is listed twice (lines 2 and 3)"),
        ("NODE0 slots=2", "host NODE0 is listed twice (lines 2 and 3)"),
        ("alice@node0", "host node0 is listed twice"),
        ("node0:1", "listed twice"),
    ],
)
def test_a_bad_line_names_file_line_and_value(tmp_path, line, words):
    path = write(tmp_path, f"# ok\nnode0 slots=1\n{line}\n")
    with pytest.raises(BadInput) as error:
        parse_hostfile(path)
    message = str(error.value)
    assert message.startswith(f"hostfile {path} line 3: {line!r}: "), message
    assert words in message


def test_missing_or_empty_hostfile_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        parse_hostfile(tmp_path / "nope.txt")
    with pytest.raises(BadInput, match="lists no host"):
        parse_hostfile(write(tmp_path, "# nothing yet\n\n"))


def test_rewriting_between_the_two_syntaxes_round_trips(tmp_path):
    entries = parse_hostfile(write(tmp_path, "node1:4\nnode2\nnode3:1\n"))
    as_openmpi = as_style(entries, "openmpi")
    assert as_openmpi.splitlines() == ["node1 slots=4", "node2", "node3 slots=1"]
    again = parse_hostfile(write(tmp_path, as_openmpi, "converted.txt"))
    assert [(e.host, e.slots) for e in again] == [(e.host, e.slots) for e in entries]
    assert as_style(again, "mpich").splitlines() == ["node1:4", "node2", "node3:1"]


def test_bracketless_ipv6_addresses_as_open_mpi_writes_them(tmp_path):
    entries = parse_hostfile(
        write(tmp_path, "::1 slots=1\nalice@fe80::2%eth0 slots=2 max_slots=4\n2001:db8::5\n")
    )
    assert [(e.host, e.hostname, e.slots, e.max_slots, e.style) for e in entries] == [
        ("::1", "::1", 1, None, "openmpi"),
        ("alice@fe80::2%eth0", "fe80::2%eth0", 2, 4, "openmpi"),
        ("2001:db8::5", "2001:db8::5", None, None, "plain"),
    ]
    # MPICH's host:N would glue the count onto the address: the count goes into a comment instead
    assert as_style(entries, "mpich").splitlines()[0] == (
        "::1   # 1 slot(s): MPICH's host:N cannot follow an IPv6 address"
    )
    assert as_style(entries, "openmpi").splitlines()[:2] == [
        "::1 slots=1",
        "alice@fe80::2%eth0 slots=2 max_slots=4",
    ]


@pytest.mark.parametrize(
    "data, line",
    [
        (b"node1 slots=2\r\nnode2 slots=2\r\n", 1),
        (b"# saved on Windows\r\nnode1\r\n", 1),
        (b"node1 slots=2\nnode2 slots=2\r\n", 2),
        (b"node1 slots=2\rnode2\n", 1),  # old Mac line ends
    ],
)
def test_windows_line_ends_are_named_with_the_fix(tmp_path, data, line):
    path = tmp_path / "hosts.txt"
    path.write_bytes(data)
    with pytest.raises(BadInput) as error:
        parse_hostfile(path)
    message = str(error.value)
    assert message.startswith(f"hostfile {path} line {line}: ends in CR LF"), message
    assert f"sed -i 's/\\r$//' {path}" in message


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: p, "is a folder, not a file"),
        (lambda p: p / "nope.txt", "nope.txt: does not exist"),
        (lambda p: (p / "file").write_text("x") and p / "file" / "hosts.txt", "file is a file, not a folder"),
        (lambda p: (p / "loop").symlink_to(p / "loop") or p / "loop", "a symbolic link loop"),
        (lambda p: p / ("h" * 300), "name too long"),
        (lambda p: os.mkfifo(p / "pipe") or p / "pipe", "lists no host"),  # nobody writes it: no wait
        (lambda p: "/dev/zero", "larger than 1 MiB"),
    ],
)
def test_a_hostfile_that_cannot_be_read_is_named_with_the_reason(tmp_path, make, words):
    path = make(tmp_path)
    with pytest.raises(BadInput) as error:
        parse_hostfile(path)
    assert str(error.value).startswith(f"hostfile {path}") and words in str(error.value), error.value
