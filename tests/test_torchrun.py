"""distributed/torchrun.py: the torchrun command line, and stopping a real torchrun with all it started."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from torchdoctor.launch.torchrun import command_from_flags, parse_endpoint, start, stop

SLEEPER = textwrap.dedent(
    """
    import os, sys, time
    path = os.path.join(sys.argv[1], "pid." + os.environ["LOCAL_RANK"])
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(path + ".tmp", path)
    time.sleep(300)
    """
)


def test_flags_are_written_in_torchruns_dash_spelling_in_order():
    command = command_from_flags(
        {"nnodes": "1:2", "rdzv_endpoint": "h:29400", "standalone": False, "module": True, "log_dir": None},
        ["pkg.train", "--lr", "3"],
        python="python",
    )
    assert command == [
        "python", "-m", "torch.distributed.run", "--nnodes=1:2", "--rdzv-endpoint=h:29400", "--module",
        "pkg.train", "--lr", "3",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "text, expected",
    [
        ("node01:29400", ("node01", 29400)),
        ("10.0.0.1:1", ("10.0.0.1", 1)),
        ("[::1]:29400", ("::1", 29400)),
        ("[fe80::1%eth0]:5", ("fe80::1%eth0", 5)),
        ("node01", ("node01", 29400)),  # the default port
        ("[::1]", ("::1", 29400)),
    ],
)
def test_endpoints_torchrun_takes_are_read(text, expected):
    assert parse_endpoint(text, default_port=29400) == expected


@pytest.mark.parametrize(
    "text",
    ["[::1:29400", "::1:29400", ":29400", "host:", "host:0", "host:65536", "host:http", "ho st:1", "[]:1",
     "host:１２", "", "[::1]x:1", "h/x:1"],
)  # fmt: skip
def test_endpoints_that_cannot_work_are_refused_naming_them(text):
    with pytest.raises(ValueError) as error:
        parse_endpoint(text, default_port=None if text.endswith(":") else 29400)
    assert repr(text) in str(error.value)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _running(pid: int) -> bool:
    return _state(pid) not in ("gone", "Z", "X")


def _start_sleepers(tmp_path):
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    command = command_from_flags(
        {"standalone": True, "nproc_per_node": 2, "log_dir": tmp_path / "logs"},
        [str(script), str(tmp_path)],
        launcher="torch.distributed.run",
    )
    process = start(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("pid.?"))) < 2:
        assert process.poll() is None and time.monotonic() < deadline, "the workers never started"
        time.sleep(0.2)
    return process, [int(p.read_text()) for p in tmp_path.glob("pid.?")]


# torch's own launcher here; ours (torchdoctor.launch.torchrun, torch's agent under a wrapper) is stopped the
# same way, for real, in test_launch.py's Ctrl-C tests: every process of the launch ended, 3 of them counted.
def test_stop_ends_the_launcher_and_every_worker_in_their_own_sessions(tmp_path):
    process, workers = _start_sleepers(tmp_path)
    assert all(os.getsid(w) == w for w in workers)  # torch gives each worker a session: killpg is not enough
    assert stop(process, grace=10) == 3
    assert process.returncode is not None
    assert not [w for w in workers if _running(w)]


def test_stop_finds_the_workers_of_a_launcher_that_died_first(tmp_path):
    process, workers = _start_sleepers(tmp_path)
    os.kill(process.pid, signal.SIGKILL)  # the agent dies; its workers are orphans, reparented away
    process.wait()
    assert all(_running(w) for w in workers)
    assert stop(process, grace=10) == 2
    assert not [w for w in workers if _running(w)]


def test_stop_on_a_launcher_that_ended_by_itself_is_harmless():
    process = start([sys.executable, "-c", "pass"])
    process.wait()
    assert stop(process, grace=1) == 0
