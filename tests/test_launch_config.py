import sys

import pytest

from torchdoctor.errors import BadInput
from torchdoctor.launch.bootstrap import STARTED_VARIABLE, mark_started
from torchdoctor.launch.config import load_config
from torchdoctor.launch.options import LaunchOptions, merge, parse_command_line, validate
from torchdoctor.launch.run import never_joined, program_command, worker_environment

ACCELERATE_CONFIG = """\
compute_environment: LOCAL_MACHINE
debug: true
distributed_type: MULTI_GPU
downcast_bf16: 'no'
enable_cpu_affinity: false
gpu_ids: all
machine_rank: 1
main_process_ip: 10.0.0.1
main_process_port: 29600
main_training_function: main
mixed_precision: bf16
num_machines: 2
num_processes: 8
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
"""


def write(tmp_path, text, name="config.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_config_written_by_accelerate_loads(tmp_path):
    settings = load_config(write(tmp_path, ACCELERATE_CONFIG))
    assert settings == {
        "debug": True,
        "gpu_ids": "all",
        "machine_rank": 1,
        "main_process_ip": "10.0.0.1",
        "main_process_port": 29600,
        "num_machines": 2,
        "num_processes": 8,
        "rdzv_backend": "static",
    }


def given(*argv: str) -> LaunchOptions:
    """What `torchdoctor launch ARGV train.py` was asked for."""
    return parse_command_line([*argv, "train.py"])


def test_num_processes_counts_every_machine_like_accelerate(tmp_path):
    flags = merge(given(), load_config(write(tmp_path, ACCELERATE_CONFIG))).flags
    assert (flags["nproc_per_node"], flags["nnodes"], flags["node_rank"]) == ("4", "2", 1)
    assert (flags["master_addr"], flags["master_port"]) == ("10.0.0.1", 29600)


def test_the_command_line_wins_over_the_file(tmp_path):
    settings = load_config(write(tmp_path, ACCELERATE_CONFIG))
    options = merge(
        given(
            "--nproc_per_node",
            "3",
            "--nnodes",
            "1",
            "--node-rank",
            "0",
            "--master_port=1234",
            "--watchdog",
            "60",
        ),
        settings,
    )
    flags = options.flags
    assert (flags["nproc_per_node"], flags["nnodes"], flags["node_rank"]) == ("3", "1", 0)
    assert (flags["master_addr"], flags["master_port"], options.watchdog) == ("10.0.0.1", 1234, 60)
    assert options.debug is True


def test_unknown_key_is_named_with_file_and_line(tmp_path):
    path = write(tmp_path, "num_processes: 2\ndebug: true\nnum_procs: 3\n")
    with pytest.raises(BadInput) as error:
        load_config(path)
    assert str(error.value).startswith(f"{path} line 3: unknown key 'num_procs'")


def test_an_empty_config_path_is_named_as_empty_not_as_the_current_folder(tmp_path, monkeypatch):
    # `--config "$CFG"` with CFG unset: Path("") is ".", which read as "--config .: is a folder"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BadInput, match=r"^--config '': empty; give a path$"):
        load_config("")


def test_malformed_yaml_is_named_with_file_and_line(tmp_path):
    path = write(tmp_path, "num_processes: 2\ndebug: [true\n")
    with pytest.raises(BadInput) as error:
        load_config(path)
    message = str(error.value)
    assert message.startswith(f"{path} line 3: malformed YAML") and "line 2" in message
    tabs = write(tmp_path, "num_processes: 2\n  debug: true\n", "indent.yaml")
    with pytest.raises(BadInput, match=r"indent.yaml line 2: malformed YAML"):
        load_config(tabs)


def test_wrong_types_and_shapes_are_named(tmp_path):
    with pytest.raises(BadInput, match=r"line 1: num_processes: 'two' should be a whole number"):
        load_config(write(tmp_path, "num_processes: two\n"))
    with pytest.raises(BadInput, match=r"line 2: debug: 1 should be true or false"):
        load_config(write(tmp_path, "num_processes: 2\ndebug: 1\n"))
    with pytest.raises(BadInput, match=r"line 1: expected `key: value` lines, got a list"):
        load_config(write(tmp_path, "- num_processes\n"))
    with pytest.raises(
        BadInput, match=r"--config .*nope.yaml: does not exist"
    ):  # the words of every file flag
        load_config(tmp_path / "nope.yaml")


def test_a_file_of_plain_text_is_named_by_its_text_not_yamls_tag(tmp_path):
    """An MPI hostfile passed as --config by mistake: the line says what the file holds, as the user wrote it,
    not YAML's `tag:yaml.org,2002:str`."""
    with pytest.raises(BadInput) as error:
        load_config(write(tmp_path, "localhost slots=1\n", "hosts.txt"))
    assert str(error.value).endswith(
        "hosts.txt line 1: expected `key: value` lines, got the text 'localhost slots=1'"
    )
    assert "tag:yaml.org" not in str(error.value)


def test_yaml_that_is_not_plain_keys_and_values_is_named_with_file_and_line(tmp_path):
    for text, message in (
        ("[1]: 2\n", "line 1: a key must be a plain name, not a list"),
        ("debug: true\n? [a, b]\n: 1\n", "line 2: a key must be a plain name, not a list"),
        ("{a: 1}: 2\n", "line 1: a key must be a plain name, not a mapping"),
        ("debug: !!python/object:os.system x\n", "line 1: debug: could not determine a constructor"),
        ("debug: true\nnum_processes: !!int abc\n", "line 2: num_processes: 'abc' is not a valid int"),
        ("num_processes: 2\nnum_processes: 4\n", "line 2: 'num_processes' is set twice (first on line 1)"),
        ("debug: true\nmain_process_ip: \x00\n", "line 2: malformed YAML: unacceptable character #x0000"),
        ("a: 1\n---\nb: 2\n", "line 2: malformed YAML: but found another document"),
    ):
        path = write(tmp_path, text)
        with pytest.raises(BadInput) as error:
            load_config(path)
        assert str(error.value).startswith(f"{path} {message}"), text


def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("debug: true\nmain_process_ip: hôte\n".encode("latin-1"))
    with pytest.raises(BadInput, match=r"latin1.yaml line 2: not UTF-8 text \(byte 0xf4\)"):
        load_config(path)


def test_values_that_cannot_work_are_named_with_file_line_and_key(tmp_path):
    for text, message in (
        ("num_processes: 0\n", "line 1: num_processes: 0: must be -1 (not said) or between 1 and"),
        ("num_processes: -4\n", "line 1: num_processes: -4: must be -1"),
        ("num_processes: 4\nnum_machines: -1\n", "line 2: num_machines: -1: must be between 1 and 100000"),
        ("machine_rank: -1\n", "line 1: machine_rank: -1: must be between 0 and"),
        ("main_process_port: 70000\n", "line 1: main_process_port: 70000: must be between 1 and 65535"),
        ("main_process_ip: ''\n", "line 1: main_process_ip: '' should be a host name"),
        ("rdzv_backend: etcd\n", "line 1: rdzv_backend: 'etcd': choose static or c10d"),
        ("watchdog: .nan\n", "line 1: watchdog: nan: must be a number of seconds"),
        ("watchdog: -.inf\n", "line 1: watchdog: -inf: must be a number of seconds"),
    ):
        path = write(tmp_path, text)
        with pytest.raises(BadInput) as error:
            load_config(path)
        assert str(error.value).startswith(f"{path} {message}"), text


def test_a_value_from_the_file_that_clashes_with_another_is_named_by_file_and_line(tmp_path):
    path = write(tmp_path, "num_machines: 2\nmachine_rank: 1\n")
    with pytest.raises(BadInput) as error:  # the command line's --nnodes 1 leaves no rank 1
        validate(merge(given("--nnodes", "1"), load_config(path)))
    assert str(error.value) == f"{path} line 2: machine_rank: 1: must be between 0 and 0, as --nnodes is 1"
    path = write(tmp_path, "num_processes: 3\n")
    with pytest.raises(BadInput, match=r"config.yaml line 1: num_processes: 3 processes cannot be shared"):
        merge(given("--nnodes", "2"), load_config(path))
    path = write(tmp_path, "num_processes: 4096\nnum_machines: 2\n")
    with pytest.raises(BadInput, match=r"line 1: num_processes: 4096 .* is 2048 per machine; at most 1024"):
        merge(given(), load_config(path))
    # a bad --nnodes is named as such, not as the per-node count the file's total would give
    path = write(tmp_path, "num_processes: 4\n")
    with pytest.raises(BadInput, match=r"^--nnodes 0: must be between 1 and"):
        merge(given("--nnodes", "0"), load_config(path))


def test_empty_file_and_null_values_mean_not_set(tmp_path):
    assert load_config(write(tmp_path, "")) == {}
    assert load_config(write(tmp_path, "main_process_ip: null\nwatchdog: 30\n")) == {"watchdog": 30}


def test_accelerates_minus_one_processes_means_not_said():
    assert "nproc_per_node" not in merge(given(), {"num_processes": -1}).flags


def test_uneven_process_count_is_refused():
    with pytest.raises(BadInput, match="7 processes cannot be shared evenly by 2 machines"):
        merge(given(), {"num_processes": 7, "num_machines": 2})


def test_a_range_of_nodes_shares_the_processes_by_its_largest_count():
    assert merge(given("--nnodes", "1:4"), {"num_processes": 8}).flags["nproc_per_node"] == "2"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("gpu_ids: all\n", "all"),
        ("gpu_ids: 0,1\n", "0,1"),
        ("gpu_ids: '0, 3'\n", "0,3"),
        ("gpu_ids: 2\n", "2"),
        ("gpu_ids: [0, 1]\n", "0,1"),
        ("gpu_ids:\n  - 1\n  - 3\n", "1,3"),
        ("gpu_ids: ['GPU-8c3f0d1e', 1]\n", "GPU-8c3f0d1e,1"),
    ],
)
def test_gpu_ids_as_accelerate_and_yaml_write_them(tmp_path, text, expected):
    assert load_config(write(tmp_path, text))["gpu_ids"] == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("gpu_ids: 0,banana\n", "'0,banana': 'banana' is not a GPU index"),
        ("gpu_ids: '0,,1'\n", "'0,,1': '' is not a GPU index"),
        ("gpu_ids: -1\n", "-1: '-1' is not a GPU index"),
        ("gpu_ids: [0, x]\n", "'x' is not a GPU index"),
        ("gpu_ids: [0, [1]]\n", "[1] is not a GPU index"),
        ("gpu_ids: [0, true]\n", "True is not a GPU index"),
        ("gpu_ids: [0, 1.5]\n", "1.5 is not a GPU index"),
        ("gpu_ids: [0, 0]\n", "GPU 0 is listed twice"),
        ("gpu_ids: []\n", "no GPU named"),
        ("gpu_ids: 'ALL'\n", "'ALL' is not a GPU index"),
        ("gpu_ids: ０\n", "is not a GPU index"),
        ("gpu_ids: {a: 1}\n", "should be GPU indices"),
        ("gpu_ids: true\n", "should be GPU indices"),
    ],
)
def test_gpu_ids_that_are_not_gpu_indices_are_refused_naming_them(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(BadInput) as error:
        load_config(path)
    assert str(error.value).startswith(f"{path} line 1: gpu_ids:") and message in str(error.value)


@pytest.mark.parametrize(
    "text",
    [
        "debug: " + "[" * 3000 + "]" * 3000 + "\n",
        "fsdp_config: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
        "".join("  " * i + f"k{i}:\n" for i in range(500)) + "  " * 500 + "v: 1\n",  # under the 1 MiB cap
        "gpu_ids: " + "[" * 25 + "0" + "]" * 25 + "\n",
        "mixed_precision:\n" + "- " * 500 + "x\n",
    ],
)
def test_deeply_nested_yaml_is_one_line_not_a_recursion_error(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(BadInput) as error:
        load_config(path)
    assert str(error.value).startswith(f"{path} line ") and "nested more than 20 levels deep" in str(
        error.value
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--nproc-per-node", "0"], "--nproc-per-node 0: must be between 1 and 1024"),
        (
            ["--nproc_per_node", "99999999999999999999"],
            "--nproc-per-node 99999999999999999999: must be between 1",
        ),
        (["--nproc-per-node", "two"], "--nproc-per-node two: give a number, or one of auto, cpu, gpu, xpu"),
        (["--nproc-per-node", "-1"], "--nproc-per-node -1: give a number"),
        (["--nproc-per-node", ""], "--nproc-per-node '': give a number"),
        (["--nnodes", "100001"], "--nnodes 100001: must be between 1 and 100000"),
        (["--nnodes", "0"], "--nnodes 0: must be between 1 and"),
        (["--nnodes", "3:2"], "--nnodes 3:2: need 1 <= MIN <= MAX"),
        (["--nnodes", "1:2:3"], "--nnodes 1:2:3: give a number of nodes, or MIN:MAX"),
        (["--nnodes", "x"], "--nnodes x: give a number of nodes"),
        (["--nnodes", "2", "--node-rank", "2"], "--node-rank 2: must be between 0 and 1, as --nnodes is 2"),
        (["--node_rank", "1"], "--node-rank 1: must be between 0 and 0, as there is 1 node"),
        (["--node-rank", "-1"], "--node-rank -1"),
        (["--master-port", "70000"], "--master-port 70000: must be between 1 and 65535"),
        (["--master_port", "0"], "--master-port 0"),
        (["--master-addr", ""], "--master-addr '': give a host name"),
        (["--master-addr", "a b"], "--master-addr 'a b'"),
        (["--local-addr", " "], "--local-addr ' '"),
        (["--rdzv-endpoint", "[::1:29400"], "--rdzv-endpoint: rendezvous endpoint '[::1:29400'"),
        (["--rdzv_endpoint", "h:99999"], "port '99999' is not a number from 1 to 65535"),
        (["--rdzv-endpoint", "::1:29400"], "put an IPv6 address in brackets"),
        (["--rdzv-backend", ""], "--rdzv-backend '': choose static or c10d"),
        (["--rdzv-conf", "join_timeout"], "--rdzv-conf 'join_timeout': 'join_timeout' is not KEY=VALUE"),
        (["--rdzv-conf", "a=1,,b=2"], "'' is not KEY=VALUE"),
        (["--max-restarts", "-1"], "--max-restarts -1: must be between 0"),
        (["--monitor-interval", "nan"], "--monitor-interval nan: must be a number of seconds"),
        (["--monitor-interval", "0"], "--monitor-interval 0"),
        (["--redirects", "7"], "--redirects '7': give 0 (none), 1 (stdout), 2 (stderr) or 3 (both)"),
        (["-r", "0:9"], "--redirects '0:9'"),
        (["--tee", "x"], "--tee 'x'"),
        (["-t", "-1"], "--tee '-1'"),
        (["--local-ranks-filter", "0,a"], "--local-ranks-filter '0,a'"),
        (["--signals-to-handle", "SIGNOPE"], "no signal 'SIGNOPE'"),
        (["--shutdown-timeout", "-5"], "--shutdown-timeout -5"),
        (["--watchdog", "0"], "--watchdog 0: must be a number of seconds above 0"),
        (["--watchdog", "nan"], "--watchdog nan"),
        (["--watchdog=-inf"], "--watchdog -inf"),
        (["--watchdog", "soon"], "--watchdog 'soon': not a number of seconds"),
        (["--no-python", "--debug"], "--debug needs a Python script"),
        (["--no-python", "--watchdog", "5"], "--watchdog needs a Python script"),
        (["--no-python", "-m"], "--no-python and -m/--module together"),
    ],
)
def test_values_that_cannot_work_are_refused_naming_them(argv, message):
    if argv[0] in ("--signals-to-handle", "--shutdown-timeout") and not torchrun_has(argv[0]):  # torch 2.4
        message = f"no such option: {argv[0]}"
    with pytest.raises(BadInput) as error:
        validate(merge(given(*argv), {}))
    assert message in str(error.value)


def torchrun_has(option: str) -> bool:
    """Whether this torch's torchrun takes ``option`` (--shutdown-timeout, --numa-binding: not torch 2.4's)."""
    from torch.distributed.run import get_args_parser

    return any(option in action.option_strings for action in get_args_parser()._actions)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--bogus", "t.py"], "no such option: --bogus (see `torchdoctor launch --help`"),
        (
            ["--nproc", "2", "t.py"],
            "ambiguous option: --nproc could match --nproc-per-node, --nproc_per_node",
        ),
        (["--nproc-per-node"], "argument --nproc-per-node/--nproc_per_node: expected one argument"),
        (
            ["--start-method", "thread", "t.py"],
            "invalid choice: 'thread' (choose from 'spawn', 'fork', 'forkserver')",
        ),
        (["--max-restarts", "x", "t.py"], "argument --max-restarts/--max_restarts: invalid int value: 'x'"),
        (["--node-rank", "1.5", "t.py"], "invalid int value: '1.5'"),
        (["--numa-binding", "all", "t.py"], "invalid choice: 'all'"),
        ([], "no script given: torchdoctor launch [OPTIONS] SCRIPT [ARGS]"),
        (["--debug"], "no script given"),
        (["--bogus"], "no such option: --bogus (see `torchdoctor launch --help`"),  # not "no script given"
        (["--nproc-per-node", "2", "--bogus=3"], "no such option: --bogus (see"),
        (["--watchdg", "3", "t.py"], "no such option: --watchdg (did you mean --watchdog?)"),
    ],
)
def test_command_lines_torchs_parser_refuses_are_one_message(argv, message):
    if argv and argv[0] in ("--numa-binding",) and not torchrun_has(argv[0]):  # torch 2.4's torchrun
        message = f"no such option: {argv[0]}"
    with pytest.raises(BadInput) as error:
        parse_command_line(argv)
    assert message in str(error.value)


def test_every_torchrun_flag_is_taken_in_each_of_its_spellings():
    from torch.distributed.run import get_args_parser

    values = {"start_method": "fork", "numa_binding": "node", "nnodes": "1:2", "redirects": "3", "tee": "1"}
    for action in get_args_parser()._actions:
        if not action.option_strings or action.dest in ("help", "print_completion"):
            continue  # these print and end at once (torch 2.15's --print-completion as --help), as torchrun does
        for spelling in action.option_strings:
            value = values.get(action.dest, action.choices[0] if action.choices else "7")
            argv = [spelling] if action.nargs == 0 else [spelling, str(value)]
            options = parse_command_line([*argv, "train.py", "--lr", "3"])
            assert action.dest in options.flags, spelling
            assert options.program == ["train.py", "--lr", "3"]


def test_only_what_was_said_is_passed_on_in_torchruns_spelling():
    options = parse_command_line(
        ["--nproc_per_node=2", "--rdzv_backend", "c10d", "--rdzv_endpoint", "h:1", "-r", "3", "-t", "1",
         "--local_addr", "10.0.0.2", "--max_restarts", "2", "--role", "trainer", "--run_path", "t.py", "x"]
    )  # fmt: skip
    command = program_command(options, log_dir="/tmp/logs")
    assert command[1:3] == ["-m", "torchdoctor.launch.torchrun"]
    assert command[3:] == [
        "--nproc-per-node=2", "--rdzv-backend=c10d", "--rdzv-endpoint=h:1", "--redirects=3", "--tee=1",
        "--local-addr=10.0.0.2", "--max-restarts=2", "--role=trainer", "--log-dir=/tmp/logs", "t.py", "x",
    ]  # fmt: skip


def test_the_rendezvous_waits_as_long_as_the_watchdog_or_torchs_600_seconds():
    static = ["--nnodes", "2", "--node-rank", "1", "--master-addr", "h0", "--master-port", "29400"]
    for watchdog, conf in (
        ([], "timeout=600"),
        (["--watchdog", "2.5"], "timeout=3"),
        (["--watchdog", "300"], "timeout=300"),
    ):
        assert f"--rdzv-conf={conf}" in program_command(given(*static, *watchdog))
    c10d = ["--nnodes", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "h0:29400"]
    for watchdog, conf in (([], "join_timeout=600"), (["--watchdog", "5"], "join_timeout=5,read_timeout=5")):
        assert f"--rdzv-conf={conf}" in program_command(given(*c10d, *watchdog))
    # the user's own settings win
    mine = program_command(
        given(*c10d, "--watchdog", "5", "--rdzv-conf", "join_timeout=30,last_call_timeout=2")
    )
    assert "--rdzv-conf=join_timeout=30,read_timeout=5,last_call_timeout=2" in mine
    assert not any(a.startswith("--rdzv-conf") for a in program_command(given("--watchdog", "5")))


def test_the_nodes_that_never_joined_are_named():
    two = given("--nnodes", "2", "--node-rank", "1", "--master-addr", "h0", "--master-port", "29400")
    assert never_joined(two, 12.4).startswith(
        "torchdoctor: node rank 1 of 2 waited 12s for the other node (node rank 0) at h0:29400; none came."
    )
    four = given("--nnodes", "4", "--node-rank", "0", "--master-port", "29400")
    assert "node rank 0 of 4 waited 5s for the other nodes (node ranks 1-3) at 127.0.0.1:29400; not all" in (
        never_joined(four, 5)
    )
    c10d = given("--nnodes", "3", "--rdzv-endpoint", "h0", "--rdzv-backend", "c10d")
    assert "at the c10d rendezvous h0:29400 for 3 nodes in all" in never_joined(c10d, 5)
    # the flag the user gave is the one to repeat on every node (session 40: it said --master-addr/--master-port)
    assert "with --nnodes 3, the same --rdzv-endpoint, and check" in never_joined(c10d, 5)


def test_each_worker_leaves_a_mark_once_past_the_rendezvous(tmp_path):
    mark_started({STARTED_VARIABLE: str(tmp_path), "RANK": "3"})
    assert [p.name.split(".")[:2] for p in tmp_path.iterdir()] == [["started", "3"]]
    mark_started({})  # not under the launcher: nothing to do
    mark_started({STARTED_VARIABLE: str(tmp_path / "gone")})  # the launcher already cleaned up


def test_one_node_runs_standalone_and_the_script_runs_in_the_bootstrap():
    command = program_command(parse_command_line(["--nproc-per-node", "2", "train.py", "--lr", "3"]))
    assert command[:3] == [sys.executable, "-m", "torchdoctor.launch.torchrun"]
    assert "--standalone" in command and "--nproc-per-node=2" in command
    assert command[-3:] == ["train.py", "--lr", "3"]
    # saying where to meet, even on one node, is taken as said
    assert "--standalone" not in program_command(given("--master-port", "29600"))


def test_worker_environment_turns_on_debug_mode_and_picks_gpus():
    env = worker_environment(LaunchOptions(debug=True, gpu_ids="0,1"), {"PATH": "/bin"})
    assert env["TORCHDOCTOR_DEBUG_MODE"] == "1" and env["CUDA_VISIBLE_DEVICES"] == "0,1"
    plain = worker_environment(LaunchOptions(gpu_ids="all"), {"PATH": "/bin"})
    assert "TORCHDOCTOR_DEBUG_MODE" not in plain and "CUDA_VISIBLE_DEVICES" not in plain
