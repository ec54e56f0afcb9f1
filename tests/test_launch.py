"""`torchdoctor launch` with real workers under torch.distributed.run (CPU, no process group needed)."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

from torchdoctor.distributed.watchdog import is_alive

REPORT_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import torch
    import torch.distributed as dist
    from torchdoctor.distributed.debug import is_enabled

    dist.init_process_group("gloo")
    total = torch.ones(1)
    dist.all_reduce(total)  # the two nodes really form one job
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_one_from_a_config_file_one_from_flags_run_the_script_as_python_would(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(REPORT_SCRIPT)
    port = free_port()
    config = tmp_path / "config.yaml"  # node 0: as `accelerate config` writes it; 4 processes in all...
    config.write_text(
        f"compute_environment: LOCAL_MACHINE\nnum_machines: 2\nnum_processes: 4\nmachine_rank: 0\n"
        f"main_process_ip: 127.0.0.1\nmain_process_port: {port}\ndebug: true\nmixed_precision: bf16\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    node0 = ["launch", "--config", str(config), "--nproc-per-node", "1"]  # ...but the command line wins
    node1 = ["launch", "--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1"]
    node1 += ["--master-port", str(port), "--nproc-per-node", "1", "--debug"]
    script_args = [str(script), "--lr", "3", "--debug"]
    env = dict(os.environ, OUT_DIR=str(out), COLUMNS="200")
    nodes = [
        subprocess.Popen(
            [sys.executable, "-m", "torchdoctor", *args, *script_args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in (node0, node1)
    ]
    try:
        results = [node.communicate(timeout=100) for node in nodes]
    finally:
        for node in nodes:
            node.kill()
    assert [node.returncode for node in nodes] == [0, 0], results
    reports = sorted(out.glob("rank*.json"))
    assert [p.name for p in reports] == ["rank0.json", "rank1.json"]  # 1 per node, not the file's 4 / 2
    for path in reports:
        seen = json.loads(path.read_text())
        assert seen["name"] == "__main__"
        assert seen["argv"] == script_args  # options after the script are its own
        assert seen["path0"] == str(tmp_path)
        assert (seen["world"], seen["sum"]) == (2, 2.0)
        assert seen["debug_env"] == "1" and seen["debug_on"] is True  # `debug: true` and `--debug`


def test_a_failing_worker_fails_the_run(cli, tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.exit(3)\n")
    result = cli("launch", str(script))
    assert result.returncode != 0


def test_bad_input_is_one_line_and_exit_2(cli, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_processes: 2\nnum_procs: 3\n")
    cases = {
        ("launch", str(tmp_path / "missing.py")): "missing.py': no such file",
        ("launch", "--config", str(bad), str(script)): "bad.yaml line 2: unknown key 'num_procs'",
        ("launch", "--config", str(tmp_path / "none.yaml"), str(script)): "none.yaml: cannot read it",
        ("launch", "--watchdog", "0", str(script)): "--watchdog 0: must be a number of seconds above 0",
        ("launch", "--watchdog", "nan", str(script)): "--watchdog nan: must be a number of seconds",
        ("launch", "--nproc-per-node", "two", str(script)): "--nproc-per-node",
        # torchrun would take these and sit there
        ("launch", "--nproc-per-node", "99999999999999999999", str(script)): (
            "--nproc-per-node 99999999999999999999: must be between 1 and 1024"
        ),
        ("launch", "--nnodes", "100001", str(script)): "--nnodes 100001: must be between 1 and 100000",
        ("launch", "--bogus", str(script)): "no such option: --bogus",
        ("launch", str(tmp_path)): f"script '{tmp_path}': is a directory",
    }
    for args, message in cases.items():
        result = cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, result.stderr)
        assert "never runs" not in result.stdout


def test_broken_config_files_are_one_line_naming_file_line_and_key(cli, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    cases = {
        b"[1]: 2\n": "line 1: a key must be a plain name, not a list",
        b"debug: true\n? [a, b]\n: 1\n": "line 2: a key must be a plain name, not a list",
        b"debug: !!python/object:os.system x\n": "line 1: debug: could not determine a constructor",
        b"num_processes: !!int abc\n": "line 1: num_processes: 'abc' is not a valid int",
        b"debug: true\nnum_processes: 2\xff\n": "line 2: not UTF-8 text (byte 0xff)",
        b"num_processes: 4\nnum_machines: -1\n": "line 2: num_machines: -1: must be between 1 and 100000",
        b"watchdog: .nan\n": "line 1: watchdog: nan: must be a number of seconds",
        b"num_processes: 0\n": "line 1: num_processes: 0: must be -1 (not said) or between 1 and",
        b"num_machines: 2\nmachine_rank: 2\n": "line 2: machine_rank: 2: must be between 0 and 1",
    }
    for number, (text, message) in enumerate(cases.items()):
        config = tmp_path / f"config{number}.yaml"
        config.write_bytes(text)
        result = cli("launch", "--config", str(config), str(script))
        assert result.returncode == 2, (text, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"torchdoctor: error: {config} line"), result.stderr
        assert message in lines[0] and "--" not in lines[0], (text, result.stderr)  # no flag was typed


def test_a_node_whose_peer_never_comes_says_so_within_the_watchdogs_time(cli, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    port = free_port()
    began = time.monotonic()
    result = cli(
        "launch", "--nnodes", "2", "--node-rank", "0", "--master-addr", "127.0.0.1",
        "--master-port", str(port), "--watchdog", "3", str(script),
        timeout=100,
    )  # fmt: skip
    waited = time.monotonic() - began
    assert result.returncode != 0
    assert "never runs" not in result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("torchdoctor: node rank 0 of 2 waited "), result.stderr
    assert f"for the other node (node rank 1) at 127.0.0.1:{port}; none came." in last, result.stderr
    assert 3 <= int(last.split("waited ")[1].split("s ")[0]) <= waited + 1  # torchrun waited 3 s, not 600


def test_sigterm_to_the_launcher_stops_the_workers_too(tmp_path):
    script = tmp_path / "sleeper.py"
    script.write_text(
        "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(90)\n"
    )
    pid_file = tmp_path / "worker.pid"
    launcher = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", "launch", str(script), str(pid_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        worker = int(pid_file.read_text())
        launcher.send_signal(signal.SIGTERM)  # what `scancel` or `kill` does
        assert launcher.wait(timeout=60) != 0
    finally:
        launcher.kill()
    deadline = time.monotonic() + 30
    while is_alive(worker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not is_alive(worker)
