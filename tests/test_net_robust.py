"""`torchdoctor net` under the ways users break it: Ctrl-C, a taken port, a host that does not resolve, a torch
without CUDA asked for NCCL, and bad values of every flag (one line, exit 2, never a traceback)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import free_port

RUN_LIMIT_S = 120


def _children(pid: int) -> set[int]:
    """Every process under ``pid`` (read from /proc, so it sees processes in other sessions too)."""
    table: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            table[int(entry.name)] = int(text[text.rindex(")") + 2 :].split()[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, its_parent in table.items():
            if its_parent == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


# Each way `net` starts ranks: forked here (a long bench keeps them busy), and under torch's launcher over
# hosts (waiting at the rendezvous for a second host that never comes).
# SIGTERM (a scheduler's stop, `kill PID`) is handled the same way.
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize(
    "args, ranks_started",
    [
        (["--bench", "--sizes=64M", "--iters=100000", "--timeout=600"], 2),
        (["--nnodes=2", "--rdzv-endpoint=127.0.0.1:{port}", "--timeout=600"], 1),
    ],
    ids=["forked", "over-hosts"],
)
def test_ctrl_c_stops_everything_and_leaves_nothing(tmp_path, args, ranks_started, signum):
    temp = tmp_path / "tmp"
    temp.mkdir()
    port = free_port()
    env = {**os.environ, "TMPDIR": str(temp), "COLUMNS": "200"}
    command = [sys.executable, "-m", "torchdoctor", "net", *(a.format(port=port) for a in args)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        seen: set[int] = set()
        until = time.monotonic() + RUN_LIMIT_S
        while time.monotonic() < until and process.poll() is None:  # until the ranks are at work
            seen |= _children(process.pid)
            if len(seen) >= ranks_started and any(temp.iterdir()):
                break
            time.sleep(0.2)
        assert process.poll() is None and seen, f"the ranks never started: {process.communicate()}"
        time.sleep(1)
        seen |= _children(process.pid)
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, (out, err)
    assert err == "torchdoctor: interrupted\n", err
    assert [pid for pid in seen if _alive(pid)] == []
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize(
    "args, env",
    [
        (["--nnodes=2", "--rdzv-endpoint=127.0.0.1:{port}"], {}),
        (["--rdzv-endpoint=localhost:{port}"], {}),
        ([], {"MASTER_PORT": "{port}"}),
        ([], {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "{port}"}),
    ],
)
def test_a_taken_port_is_named_before_any_rank_starts(cli, cli_here, taken_port, args, env):
    result = (cli if not env else cli_here)(  # one real process; the same `main` in this one for the others
        "net",
        "--json",
        "--timeout=60",
        *(a.format(port=taken_port) for a in args),
        env={k: v.format(port=taken_port) for k, v in env.items()},
        timeout=RUN_LIMIT_S,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["id"] == "dist.preflight_port" and finding["status"] == "fail"
    assert f"port {taken_port} is already taken on this node, by pid {os.getpid()}" in finding["summary"]
    assert "timeout" not in finding["fix"]


@pytest.mark.parametrize(
    "args, env",
    [
        (["--nnodes=2", "--rdzv-endpoint=nosuchhost.invalid:29400"], {}),
        (["--rdzv-endpoint=no-such-host.invalid:29400"], {}),
        ([], {"MASTER_ADDR": "nosuchhost.invalid"}),
        ([], {"MASTER_ADDR": "nosuchhost.invalid", "MASTER_PORT": "29400"}),
    ],
)
def test_a_host_that_does_not_resolve_is_named_as_such(cli, cli_here, args, env):
    result = (cli if not env else cli_here)(
        "net", "--json", "--timeout=60", *args, env=env, timeout=RUN_LIMIT_S
    )
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["id"] == "dist.preflight_host" and "does not resolve" in finding["summary"]
    assert "getent hosts" in finding["fix"] and "timeout" not in finding["fix"]


def test_master_addr_of_another_host_is_refused_alone(cli):
    """Alone, rank 0 opens the store here: a MASTER_ADDR that is not this host's cannot work."""
    result = cli(
        "net", "--json", env={"MASTER_ADDR": "192.0.2.1", "MASTER_PORT": "29400"}, timeout=RUN_LIMIT_S
    )
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["id"] == "dist.preflight_port" and "192.0.2.1" in finding["summary"]


def test_master_port_is_where_rank_0_opens_the_store():
    from torchdoctor.net.spawn import fork_ranks, free_port
    from torchdoctor.net.worker import WorkerOptions

    port = free_port()
    ran = fork_ranks(2, WorkerOptions(timeout=30, backend="gloo"), ("127.0.0.1", port), 100)
    assert ran.finished and ran.exits == {}
    assert {state.master for state in ran.states.values()} == {f"127.0.0.1:{port}"}
    assert [state.stage for _, state in sorted(ran.states.items())] == ["done", "done"]


def test_over_hosts_a_torch_that_cannot_be_imported_is_named_with_its_fix(cli):
    """Over hosts torch is imported by torch's launcher, not up front here: when the launcher dies importing
    it (a real broken environment), the verdict is still the one a forked run gives before any rank starts."""
    result = cli(
        "net",
        "--json",
        "--timeout=5",
        "--nproc-per-node=1",
        f"--rdzv-endpoint=127.0.0.1:{free_port()}",
        env={"TORCH_DISTRIBUTED_DEBUG": "ALL"},
        timeout=RUN_LIMIT_S,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["id"] == "net.smoke" and finding["status"] == "fail", finding
    assert finding["summary"].startswith("torch cannot be imported here, so no rank can start: ValueError: ")
    assert (
        "TORCH_DISTRIBUTED_DEBUG" in finding["summary"] and "TORCH_DISTRIBUTED_DEBUG=DETAIL" in finding["fix"]
    )


def test_nccl_on_a_cpu_build_of_torch_is_bad_input(cli_here):
    import torch

    if torch.version.cuda is not None or torch.version.hip is not None:
        pytest.skip(f"torch {torch.__version__} is a GPU build")
    # through the same `main` here (torch is imported here already; a process of its own imports it again,
    # 3 s of CPU): net's refusals of bad values run in real processes below, each flag's first case
    result = cli_here("net", "--backend=nccl")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "nccl needs a CUDA build of torch" in result.stderr


# -- bad values, by flag: each is one line naming the value, exit 2, before anything starts ----------------
# The first case of each flag runs in a real process (`cli`), the others through the same `main` in this one
# (`cli_here`): the words and the status are main's, and a process each cost 0.8 s of CPU for nothing more.

BAD_ENDPOINTS = [
    "[::1:29400",
    "[::1]29400",
    "::1:29400",
    "fe80::1:29400",
    "node01",
    "node01:",
    ":29400",
    "node01:0",
    "node01:65536",
    "node01:-1",
    "node01:http",
    "node 01:29400",
    "[]:29400",
    "node01:29400:1",
    "node01:２９４００",
]


@pytest.mark.parametrize("endpoint", BAD_ENDPOINTS)
def test_bad_rdzv_endpoint(cli, cli_here, endpoint):
    result = (cli if endpoint == BAD_ENDPOINTS[0] else cli_here)(
        "net", "--nnodes=2", f"--rdzv-endpoint={endpoint}"
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and repr(endpoint) in result.stderr, result.stderr


@pytest.mark.parametrize(
    "sizes", ["", ",", " ", " , ", "0", "1M,0", "-1M", "lots", "1M,,lots", "infG", "nanM"]
)
def test_bad_sizes(cli, cli_here, sizes):
    result = (cli if sizes == "" else cli_here)("net", "--bench", f"--sizes={sizes}")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("torchdoctor: error: --sizes ")


@pytest.mark.parametrize(
    "args",
    [
        ["--ops=all_reduce"],
        ["--sizes=1M"],
        ["--iters=5"],
        ["--warmup=0"],
        ["--ops=broadcast", "--iters=2"],
        ["--sizes=1M", "--warmup=1", "--iters=3"],
    ],
)
def test_bench_flags_without_bench(cli, cli_here, args):
    result = (cli if args == ["--ops=all_reduce"] else cli_here)("net", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    named = [a.split("=")[0] for a in args]
    assert result.stderr.count("\n") == 1 and all(flag in result.stderr for flag in named)
    assert "add --bench" in result.stderr


# torchrun's variables: this process is rank 0 of 2 in someone else's job
UNDER_TORCHRUN = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2"}


@pytest.mark.parametrize(
    "args",
    [
        ["--nproc-per-node=2"],
        ["--nnodes=2", "--rdzv-endpoint=node01:29400"],
        ["--rdzv-endpoint=node01:29400"],
        ["--rdzv-id=other"],
        ["--nccl-debug"],
        ["--log-dir=/tmp"],
    ],
)
def test_launch_flags_under_an_outer_launcher_are_refused(cli, cli_here, args):
    result = (cli if args == ["--nproc-per-node=2"] else cli_here)("net", *args, env=UNDER_TORCHRUN)
    assert result.returncode == 2, result.stdout + result.stderr
    named = [a.split("=")[0] for a in args]
    assert result.stderr.count("\n") == 1 and all(flag in result.stderr for flag in named)
    assert "rank 0 of 2 started by torchrun" in result.stderr


def test_no_status_line_when_stderr_is_not_a_terminal(cli_here):
    # not a terminal: a pipe or this process's captured stderr are the same test of `isatty`, so the same
    # `main` runs here, its ranks forked from this process as `net` forks them (the terminal case below is real)
    result = cli_here("net", timeout=RUN_LIMIT_S)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""


def test_status_line_on_a_terminal_stderr_only(tmp_path):
    """With stderr on a terminal, `net` says what it is doing there; stdout (findings) stays plain."""
    import pty
    import select

    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    command = [
        sys.executable,
        "-m",
        "torchdoctor",
        "net",
        "--bench",
        "--sizes=1M",
        "--iters=2",
        "--ops=all_reduce",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    said = b""
    until = time.monotonic() + RUN_LIMIT_S
    try:
        while time.monotonic() < until:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed with the process
                    break
                if not chunk:
                    break
                said += chunk
            elif process.poll() is not None:
                break
        out = process.communicate(timeout=60)[0]
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    assert process.returncode == 0, (out, said)
    assert b"starting" in said  # drawn as soon as the line starts; later states may pass between refreshes
    assert b"\x1b[" not in out and b"2 ranks on 1 host" in out
