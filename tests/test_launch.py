"""`torchdoctor launch` with real workers under torch.distributed.run (CPU, gloo)."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from helpers import free_port

from torchdoctor.cli import main
from torchdoctor.launch.options import parse_command_line
from torchdoctor.launch.run import program_command

REPORT_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import torch
    import torch.distributed as dist
    from torchdoctor.distributed.debug import is_enabled

    dist.init_process_group("gloo")
    total = torch.ones(1)
    dist.all_reduce(total)  # the ranks really form one job
    print("rank", dist.get_rank(), "says hello")
    with open(os.path.join(os.environ["OUT_DIR"], f"rank{dist.get_rank()}.json"), "w") as f:
        json.dump({
            "name": __name__,
            "argv": sys.argv,
            "path0": sys.path[0],
            "world": dist.get_world_size(),
            "sum": total.item(),
            "debug_env": os.environ.get("TORCHDOCTOR_DEBUG_MODE"),
            "debug_on": is_enabled(),
        }, f)
    dist.destroy_process_group()
    """
)

FAILING_SCRIPT = textwrap.dedent(
    """
    import os

    def load_batch():
        raise ValueError("bad batch on rank " + os.environ["RANK"])

    load_batch()
    """
)

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


def launch(*args, env=None, cwd=None, timeout=240):
    """`torchdoctor launch ARGS` in a real process."""
    full_env = dict(os.environ, COLUMNS="200", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", "launch", *args],
        capture_output=True, text=True, env=full_env, cwd=cwd, timeout=timeout,
    )  # fmt: skip


def reports(out):
    return [json.loads(p.read_text()) for p in sorted(out.glob("rank*.json"))]


def test_two_nodes_one_from_a_config_file_one_from_flags_run_the_script_as_python_would(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(REPORT_SCRIPT)
    port = free_port()
    config = tmp_path / "config.yaml"  # node 0: as `accelerate config` writes it; 4 processes in all...
    config.write_text(
        f"compute_environment: LOCAL_MACHINE\nnum_machines: 2\nnum_processes: 4\nmachine_rank: 0\n"
        f"main_process_ip: 127.0.0.1\nmain_process_port: {port}\ndebug: true\nmixed_precision: bf16\n"
    )
    out, temp = tmp_path / "out", tmp_path / "tmp"
    out.mkdir()
    temp.mkdir()
    node0 = ["launch", "--config", str(config), "--nproc-per-node", "1"]  # ...but the command line wins
    node1 = ["launch", "--nnodes", "2", "--node_rank", "1", "--master_addr", "127.0.0.1"]  # torchrun's other
    node1 += ["--master_port", str(port), "--nproc_per_node", "1", "--debug"]  # spelling
    script_args = [str(script), "--lr", "3", "--debug"]
    env = dict(os.environ, OUT_DIR=str(out), COLUMNS="200", TMPDIR=str(temp))
    nodes = [
        subprocess.Popen(
            [sys.executable, "-m", "torchdoctor", *args, *script_args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for args in (node0, node1)
    ]
    try:
        results = [node.communicate(timeout=240) for node in nodes]
    finally:
        for node in nodes:
            node.kill()
    assert [node.returncode for node in nodes] == [0, 0], results
    seen = reports(out)
    assert len(seen) == 2  # 1 per node, not the file's 4 / 2
    for report in seen:
        assert report["name"] == "__main__"
        assert report["argv"] == script_args  # options after the script are its own
        assert report["path0"] == str(tmp_path)
        assert (report["world"], report["sum"]) == (2, 2.0)
        assert report["debug_env"] == "1" and report["debug_on"] is True  # `debug: true` and `--debug`
    # and nothing left in the temporary folder: neither the launch's own folder nor the `torchelastic_*` one
    # torchrun makes when it is given no --log-dir (the watchdog's path: test_watchdog's healthy run)
    assert list(temp.iterdir()) == []


SPELLINGS = {
    "dash": ["--nproc-per-node", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:{port}",
             "--rdzv-id", "job7", "--rdzv-conf", "join_timeout=120", "--max-restarts", "0",
             "--monitor-interval", "0.2", "--start-method", "spawn", "--role", "trainer", "--log-dir", "{logs}",
             "--redirects", "3", "--local-addr", "127.0.0.1", "--local-ranks-filter", "0", "-m"],
    "underscore": ["--nproc_per_node=2", "--rdzv_backend=c10d", "--rdzv_endpoint=127.0.0.1:{port}",
                   "--rdzv_id=job7", "--rdzv_conf=join_timeout=120", "--max_restarts=0",
                   "--monitor_interval=0.2", "--start_method=spawn", "--role=trainer", "--log_dir={logs}",
                   "-r", "3", "--local_addr=127.0.0.1", "--local_ranks_filter=0", "--module"],
}  # fmt: skip


def test_a_two_rank_torchrun_command_line_runs_as_torchrun_would_in_either_spelling(tmp_path):
    # One real job, in the dash spelling: the underscore spelling is read by the same parser into the same
    # options, so it gives torchrun the same command line (checked in this process, below, for every flag);
    # a second real 2-rank job would import torch three more times to prove nothing more.
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(REPORT_SCRIPT)
    out, logs = tmp_path / "out", tmp_path / "logs"
    out.mkdir()
    port = free_port()
    flags = {
        spelling: [a.format(port=port, logs=logs) for a in SPELLINGS[spelling]] for spelling in SPELLINGS
    }
    program = ["mypkg.train", "--epochs", "2"]
    said = {spelling: parse_command_line([*flags[spelling], *program]) for spelling in SPELLINGS}
    assert said["underscore"] == said["dash"]
    assert program_command(said["underscore"]) == program_command(said["dash"])
    assert said["dash"].flags["module"] is True and said["dash"].flags["redirects"] == "3"  # `-r`, `--module`
    result = launch(*flags["dash"], *program, env={"OUT_DIR": str(out)}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    seen = reports(out)
    assert [(r["world"], r["sum"], r["name"]) for r in seen] == [(2, 2.0, "__main__")] * 2
    assert all(r["argv"] == [str(package / "train.py"), "--epochs", "2"] for r in seen)  # as `python -m`
    assert "says hello" not in result.stdout  # --redirects 3: into the log folder instead
    kept = sorted(p.read_text().strip() for p in logs.glob("*/attempt_0/*/stdout.log"))
    assert kept == ["rank 0 says hello", "rank 1 says hello"]


def test_a_failing_script_is_named_in_torchruns_summary_and_its_traceback_is_the_users_own(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(FAILING_SCRIPT)
    result = launch("--nproc-per-node", "2", str(script))
    assert result.returncode == 1, result.stderr
    assert f"{script} FAILED" in result.stderr
    assert "bootstrap" not in result.stderr and "ChildFailedError" in result.stderr
    # one or both: torchrun stops the other rank when the first fails, sometimes before it has raised; the two
    # ranks share the terminal, so when both raise at once their tracebacks' lines can interleave
    tracebacks = result.stderr.count("Traceback (most recent call last):\n")
    assert tracebacks in (1, 2), result.stderr
    frames = [line for line in result.stderr.splitlines() if line.startswith("  File ")]
    assert sorted(frames) == sorted(
        [f'  File "{script}", line 7, in <module>', f'  File "{script}", line 5, in load_batch'] * tracebacks
    ), result.stderr  # no frame of ours, nor runpy's
    # the two ranks' writes can interleave inside a line too ("ValueError" and ": bad batch on rank 0" apart)
    assert len(re.findall(r"bad batch on rank \d", result.stderr)) == tracebacks, result.stderr
    assert result.stderr.count("ValueError") >= tracebacks, result.stderr
    assert "run.py" not in result.stderr.split("ChildFailedError")[-1]  # the agent's own traceback is gone


# A real launch for each way of stopping (torchrun alone, under the watchdog) and each way of saying so
# ("interrupted" after Ctrl-C, "stopped by NAME" after any other signal). Every other signal, on either
# path, takes the same handler (`STOP_SIGNALS`), the same stop and the same line: checked for each in this
# process (test_every_stop_signal_raises_stopped_and_says_its_name), not with four more launches.
@pytest.mark.parametrize(
    "signum, name, flags",
    [
        (signal.SIGINT, "Ctrl-C", []),
        (signal.SIGHUP, "SIGHUP", ["--watchdog", "600"]),  # the terminal closed, ssh dropped
    ],
)
def test_ctrl_c_stops_every_process_removes_the_temp_folder_and_says_one_line(tmp_path, signum, name, flags):
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    temp = tmp_path / "tmp"
    temp.mkdir()
    launcher = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", "launch", "--nproc-per-node", "2", *flags, str(script), str(tmp_path)],
        env=dict(os.environ, TMPDIR=str(temp)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # a terminal of its own: Ctrl-C goes to its foreground process group
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while len(list(tmp_path.glob("pid.?"))) < 2:
            assert launcher.poll() is None and time.monotonic() < deadline, launcher.communicate()
            time.sleep(0.2)
        workers = [int(p.read_text()) for p in tmp_path.glob("pid.?")]
        agent = parent_of(workers[0])
        assert list(temp.iterdir())  # the launch's own folder, while it runs
        os.killpg(launcher.pid, signum)  # what the terminal does on Ctrl-C (or `kill`, `scancel`)
        out, err = launcher.communicate(timeout=120)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 128 + signum, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "SignalException" not in err, err
    assert "closing signal" not in err and "death signal" not in err, err
    said = (
        "torchdoctor: interrupted"
        if signum == signal.SIGINT
        else (f"torchdoctor: stopped by {name}; ended the 3 processes of this launch")
    )
    assert err.strip().splitlines()[-1] == said, err
    # one line of the launch's own; beside it a rank may say where its script was stopped, nothing else of ours
    ours = [line for line in err.splitlines() if line.startswith("torchdoctor:")]
    ranks = [line for line in ours if re.match(r"torchdoctor: rank \d was interrupted at ", line)]
    assert [line for line in ours if line not in ranks] == [said], err
    assert all(f"{script}:7 in <module>: time.sleep(300)" in line for line in ranks), err
    assert not [pid for pid in [agent, *workers] if running(pid)]
    assert list(temp.iterdir()) == []


def test_every_stop_signal_raises_stopped_and_says_its_name():
    import io

    from torchdoctor.launch.run import STOP_SIGNALS, Stopped, _interrupted, _stopped_by_signals

    assert {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT} <= set(STOP_SIGNALS)
    for signum in STOP_SIGNALS:
        before = {other: signal.getsignal(other) for other in STOP_SIGNALS}
        with pytest.raises(Stopped) as stopped, _stopped_by_signals():
            signal.raise_signal(signum)  # the launcher's main thread, as `kill` or the terminal would
        assert {other: signal.getsignal(other) for other in STOP_SIGNALS} == before  # put back after the run
        stream = io.StringIO()
        assert _interrupted(stopped.value.signum, stream) == 128 + signum
        # after Ctrl-C the command line says "interrupted", as for every command (the real Ctrl-C above)
        name = signal.Signals(signum).name
        said = f"torchdoctor: stopped by {name}; ended the 0 processes of this launch\n"
        assert stream.getvalue() == ("" if signum == signal.SIGINT else said), name


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_a_node_whose_peer_never_comes_says_so_after_the_watchdogs_time(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    port = free_port()
    result = launch(
        "--nnodes", "2", "--node-rank", "0", "--master-addr", "127.0.0.1",
        "--master-port", str(port), "--watchdog", "3", "-v", str(script),
    )  # fmt: skip
    assert result.returncode != 0
    assert "never runs" not in result.stdout
    assert "--rdzv-conf=timeout=3 " in result.stderr  # torchrun was told to wait 3 s, not 600
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("torchdoctor: node rank 0 of 2 waited "), result.stderr
    assert f"for the other node (node rank 1) at 127.0.0.1:{port}; none came." in last, result.stderr


def test_one_node_with_a_wrong_address_is_named_before_torchrun_starts(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    result = launch("--master-addr", "192.0.2.1", "--master-port", str(free_port()), str(script))
    assert result.returncode == 1
    assert "never runs" not in result.stdout
    (line,) = result.stderr.strip().splitlines()  # torchrun never started: nothing of its own
    assert line.startswith(
        "torchdoctor: error: this node hosts the rendezvous, but 192.0.2.1 (192.0.2.1) is not one of its addresses"
    )


# In-process from here: these stop before any process starts.


def run(capsys, *args):
    code = main(["launch", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip().splitlines()


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("print('never runs')\n")
    return path


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda p: ["--master-port", str(p)], "port {p} is already taken on this node, by pid"),
        (
            lambda p: ["--master_port", str(p), "--nnodes", "2"],
            "pick a free port on every node: --master-port ",
        ),
        (
            lambda p: ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"localhost:{p}", "--nnodes", "2"],
            "pick a free port on every node: --rdzv-endpoint localhost:",
        ),
        (lambda p: ["--master-addr", "nosuch.invalid"], "rendezvous host 'nosuch.invalid' does not resolve"),
        (lambda p: ["--master-addr", "x" * 300], "`getent hosts xxxxxxx"),
        (
            lambda p: [
                "--rdzv-backend",
                "c10d",
                "--rdzv-endpoint",
                "no-such-node.invalid:29400",
                "--nnodes",
                "2",
            ],
            "`getent hosts no-such-node.invalid` prints nothing here",
        ),
        (lambda p: ["--master-addr", "192.0.2.1", "--master-port", "29555"], "is not one of its addresses"),
        (lambda p: ["--master-addr", "198.51.100.1", "--nnodes", "1:2"], "is not one of its addresses"),
    ],
)
def test_a_rendezvous_that_cannot_work_is_one_line_with_its_fix(
    capsys, script, taken_port, make_args, message
):
    code, out, lines = run(capsys, *make_args(taken_port), str(script))
    assert code == 1 and "never runs" not in out
    assert len(lines) == 1 and lines[0].startswith("torchdoctor: error: ")
    assert message.format(p=taken_port) in lines[0]


@pytest.mark.parametrize("variable, value", [("GLOO_SOCKET_IFNAME", "eth99"), ("NCCL_SOCKET_IFNAME", "nosuch"),
                                             ("GLOO_SOCKET_IFNAME", "lo,wlan7")])  # fmt: skip
def test_a_socket_interface_that_does_not_exist_stops_the_launch(
    capsys, monkeypatch, script, variable, value
):
    monkeypatch.setenv(variable, value)
    code, out, lines = run(capsys, "--nproc-per-node", "2", str(script))
    assert code == 1 and len(lines) == 1
    assert "no such network interface on this node" in lines[0] and "(there are: " in lines[0]


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda t: [str(t / ("a" * 300 + ".py"))], "script {t}/aaaa"),
        (lambda t: [str(t / ("a" * 300 + ".py"))], ": name too long (303 characters"),
        (lambda t: [str(t / ("d" * 5000) / "x.py")], ": name too long"),
        (lambda t: [str(t / "missing.py")], "script {t}/missing.py: does not exist"),
        (lambda t: [str(t)], "script {t}: is a folder, not a file"),
        (lambda t: [str(t / "train.py" / "x.py")], "is a file, not a folder"),
        (lambda t: [str(t / "loop.py")], "a symbolic link loop"),
        (lambda t: ["-m", "my pkg"], "-m 'my pkg': give a module name"),
        (lambda t: ["-m", "pkg/train.py"], "-m 'pkg/train.py': give a module name"),
        (
            lambda t: ["--no-python", "no-such-program-here"],
            "program 'no-such-program-here' (--no-python): not found",
        ),
        (lambda t: ["--bogus", str(t / "train.py")], "no such option: --bogus"),
        (lambda t: ["--config", str(t / "none.yaml"), str(t / "train.py")], "none.yaml: does not exist"),
        (
            lambda t: ["--config", str(t / "deep.yaml"), str(t / "train.py")],
            "nested more than 20 levels deep",
        ),
        (lambda t: ["--config", str(t / "banana.yaml"), str(t / "train.py")], "'banana' is not a GPU index"),
        (
            lambda t: ["--log-dir", str(t / "train.py"), str(t / "train.py")],
            "--log-dir {t}/train.py: is a file",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, script, make_args, message):
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "deep.yaml").write_text("fsdp_config: " + "[" * 3000 + "]" * 3000 + "\n")
    (tmp_path / "banana.yaml").write_text('gpu_ids: "0,banana"\n')
    code, out, lines = run(capsys, *make_args(tmp_path))
    assert code == 2 and "never runs" not in out
    assert len(lines) == 1 and lines[0].startswith("torchdoctor: error: "), lines
    assert message.format(t=tmp_path) in lines[0]


def test_help_lists_every_torchrun_flag_and_ours(capsys):
    from torch.distributed.run import get_args_parser

    code = main(["launch", "--help"])
    text = capsys.readouterr().out
    assert code == 0
    for action in get_args_parser()._actions:
        for spelling in action.option_strings:
            if not spelling.count("_"):  # argparse's usage shows the first spelling, the list shows all
                assert spelling in text
    for ours in ("--debug", "--watchdog SECONDS", "--config FILE", "--verbose"):
        assert ours in text


def _described(parser):
    return [
        (
            type(a).__name__,
            a.option_strings,
            a.dest,
            a.nargs,
            a.default,
            a.choices,
            a.required,
            a.const,
            a.help,
        )
        + (getattr(a.type, "__name__", a.type),)
        for a in parser._actions
    ]


def test_torchruns_parser_read_from_torchs_files_is_the_one_torch_imports(monkeypatch):
    from torch.distributed.argparse_util import check_env, env
    from torch.distributed.run import get_args_parser

    from torchdoctor.launch import torchrun_parser

    monkeypatch.setenv("PET_NPROC_PER_NODE", "3")  # torch's env action reads its default at construction
    from_files, files_env, files_check_env = torchrun_parser._from_torchs_files()
    assert _described(from_files()) == _described(get_args_parser())
    assert [type(a).__name__ for a in from_files()._actions].count("env") > 20
    assert (files_env.__name__, files_check_env.__name__) == (env.__name__, check_env.__name__)
    # where torch's files do not build a parser alone, torch's own, imported
    torchrun_parser.torchrun_parser_parts.cache_clear()
    monkeypatch.setattr(torchrun_parser, "_from_torchs_files", lambda: 1 / 0)
    try:
        assert torchrun_parser.torchrun_parser_parts() == (get_args_parser, env, check_env)
    finally:
        torchrun_parser.torchrun_parser_parts.cache_clear()


def test_a_refused_launch_never_imports_torch(tmp_path):
    """torchrun's parser is read from torch's files: the launcher's own process does not import torch (3 s of
    CPU) to refuse a value, nor to start torchrun, which imports it itself."""
    (tmp_path / "x.py").write_text("print('never runs')\n")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "torchdoctor", "launch", "--nproc-per-node", "0", "x.py"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "torchdoctor: error: --nproc-per-node 0: must be between 1 and" in done.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "argparse" in imported and "torch" not in imported
