import sys

import pytest

from torchdoctor.distributed.bootstrap import STARTED_VARIABLE, mark_started
from torchdoctor.distributed.config import load_config
from torchdoctor.distributed.launch import (
    LaunchOptions,
    check_script,
    merge,
    never_joined,
    torchrun_command,
    validate,
    worker_environment,
)
from torchdoctor.errors import BadInput

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


def test_num_processes_counts_every_machine_like_accelerate(tmp_path):
    options = merge(LaunchOptions(), load_config(write(tmp_path, ACCELERATE_CONFIG)))
    assert (options.nproc_per_node, options.nnodes, options.node_rank) == (4, 2, 1)
    assert (options.master_addr, options.master_port, options.debug) == ("10.0.0.1", 29600, True)


def test_the_command_line_wins_over_the_file(tmp_path):
    settings = load_config(write(tmp_path, ACCELERATE_CONFIG))
    given = LaunchOptions(nproc_per_node=3, nnodes=1, node_rank=0, master_port=1234, watchdog=60)
    options = merge(given, settings)
    assert (options.nproc_per_node, options.nnodes, options.node_rank) == (3, 1, 0)
    assert (options.master_addr, options.master_port, options.watchdog) == ("10.0.0.1", 1234, 60)


def test_unknown_key_is_named_with_file_and_line(tmp_path):
    path = write(tmp_path, "num_processes: 2\ndebug: true\nnum_procs: 3\n")
    with pytest.raises(BadInput) as error:
        load_config(path)
    assert str(error.value).startswith(f"{path} line 3: unknown key 'num_procs'")


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
    with pytest.raises(BadInput, match=r"line 1: expected `key: value` lines"):
        load_config(write(tmp_path, "- num_processes\n"))
    with pytest.raises(BadInput, match=r"nope.yaml: cannot read it"):
        load_config(tmp_path / "nope.yaml")


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
        validate(merge(LaunchOptions(nnodes=1), load_config(path)))
    assert str(error.value) == f"{path} line 2: machine_rank: 1: must be between 0 and 0, as --nnodes is 1"
    path = write(tmp_path, "num_processes: 3\n")
    with pytest.raises(BadInput, match=r"config.yaml line 1: num_processes: 3 processes cannot be shared"):
        merge(LaunchOptions(nnodes=2), load_config(path))
    path = write(tmp_path, "num_processes: 4096\nnum_machines: 2\n")
    with pytest.raises(BadInput, match=r"line 1: num_processes: 4096 .* is 2048 per machine; at most 1024"):
        merge(LaunchOptions(), load_config(path))
    # a bad --nnodes is named as such, not as the per-node count the file's total would give
    path = write(tmp_path, "num_processes: 4\n")
    with pytest.raises(BadInput, match=r"^--nnodes -1: must be between 1 and"):
        validate(merge(LaunchOptions(nnodes=-1), load_config(path)))


def test_empty_file_and_null_values_mean_not_set(tmp_path):
    assert load_config(write(tmp_path, "")) == {}
    assert load_config(write(tmp_path, "main_process_ip: null\nwatchdog: 30\n")) == {"watchdog": 30}


def test_accelerates_minus_one_processes_means_not_said():
    assert merge(LaunchOptions(), {"num_processes": -1}).nproc_per_node is None


def test_uneven_process_count_is_refused():
    with pytest.raises(BadInput, match="7 processes cannot be shared evenly by 2 machines"):
        merge(LaunchOptions(), {"num_processes": 7, "num_machines": 2})


def test_bad_values_are_refused_naming_them():
    for options, text in (
        (LaunchOptions(nproc_per_node=0), "--nproc-per-node 0"),
        (
            LaunchOptions(nproc_per_node=10**20),
            "--nproc-per-node 100000000000000000000: must be between 1 and 1024",
        ),
        (LaunchOptions(nnodes=100_001), "--nnodes 100001: must be between 1 and 100000"),
        (LaunchOptions(watchdog=float("inf")), "--watchdog inf"),
        (LaunchOptions(nnodes=2, node_rank=2), "--node-rank 2"),
        (LaunchOptions(master_port=70000), "--master-port 70000"),
        (LaunchOptions(watchdog=-1), "--watchdog -1"),
        (LaunchOptions(rdzv_backend="etcd"), "rdzv_backend 'etcd'"),
    ):
        with pytest.raises(BadInput, match=text):
            validate(options)


def test_a_mistyped_option_or_a_directory_is_not_called_a_missing_file(tmp_path):
    with pytest.raises(BadInput, match=r"^no such option: --bogus \("):
        check_script("--bogus")
    with pytest.raises(BadInput, match=r"^no such option: --nproc \("):
        check_script("--nproc=2")
    with pytest.raises(BadInput, match=r"is a directory"):
        check_script(str(tmp_path))
    with pytest.raises(BadInput, match=r"^script 'missing.py': no such file$"):
        check_script("missing.py")
    check_script(str(write(tmp_path, "print(1)\n", "train.py")))


def test_the_rendezvous_waits_as_long_as_the_watchdog_or_torchs_600_seconds():
    static = LaunchOptions(nnodes=2, node_rank=1, master_addr="h0", master_port=29400)
    for watchdog, conf in ((None, "timeout=600"), (2.5, "timeout=3"), (300, "timeout=300")):
        static.watchdog = watchdog
        command = torchrun_command(static, "t.py", [])
        assert command[command.index("--rdzv-conf") + 1] == conf
    c10d = LaunchOptions(nnodes=2, master_addr="h0", master_port=29400, rdzv_backend="c10d")
    for watchdog, conf in ((None, "join_timeout=600"), (5, "join_timeout=5,read_timeout=5")):
        c10d.watchdog = watchdog
        command = torchrun_command(c10d, "t.py", [])
        assert command[command.index("--rdzv-conf") + 1] == conf
    assert "--rdzv-conf" not in torchrun_command(LaunchOptions(watchdog=5), "t.py", [])


def test_the_nodes_that_never_joined_are_named():
    two = LaunchOptions(nnodes=2, node_rank=1, master_addr="h0", master_port=29400)
    assert never_joined(two, 12.4).startswith(
        "torchdoctor: node rank 1 of 2 waited 12s for the other node (node rank 0) at h0:29400; none came."
    )
    four = LaunchOptions(nnodes=4, node_rank=0, master_port=29400)
    assert (
        "node rank 0 of 4 waited 5s for the other nodes (node ranks 1 to 3) at 127.0.0.1:29400; not all"
        in (never_joined(four, 5))
    )
    c10d = LaunchOptions(nnodes=3, master_addr="h0", rdzv_backend="c10d")
    assert "at the c10d rendezvous h0:29500 for 3 nodes in all" in never_joined(c10d, 5)


def test_each_worker_leaves_a_mark_once_past_the_rendezvous(tmp_path):
    mark_started({STARTED_VARIABLE: str(tmp_path), "RANK": "3"})
    assert [p.name.split(".")[:2] for p in tmp_path.iterdir()] == [["started", "3"]]
    mark_started({})  # not under the launcher: nothing to do
    mark_started({STARTED_VARIABLE: str(tmp_path / "gone")})  # the launcher already cleaned up


def test_one_node_runs_standalone_and_the_script_runs_in_the_bootstrap():
    command = torchrun_command(LaunchOptions(nproc_per_node=2), "train.py", ["--lr", "3"])
    assert command[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--standalone" in command and command[command.index("--nproc-per-node") + 1] == "2"
    assert command[-5:] == ["-m", "torchdoctor.distributed.bootstrap", "train.py", "--lr", "3"]


def test_several_nodes_use_the_static_or_c10d_rendezvous():
    static = torchrun_command(
        LaunchOptions(nproc_per_node=4, nnodes=2, node_rank=1, master_addr="10.0.0.1", master_port=29600),
        "train.py",
        [],
    )
    assert "--standalone" not in static
    for flag, value in (("--nnodes", "2"), ("--node-rank", "1"), ("--master-addr", "10.0.0.1")):
        assert static[static.index(flag) + 1] == value
    c10d = torchrun_command(
        LaunchOptions(nnodes=2, master_addr="h0", master_port=29400, rdzv_backend="c10d"), "t.py", []
    )
    assert c10d[c10d.index("--rdzv-endpoint") + 1] == "h0:29400"


def test_worker_environment_turns_on_debug_mode_and_picks_gpus():
    env = worker_environment(LaunchOptions(debug=True, gpu_ids="0,1"), {"PATH": "/bin"})
    assert env["TORCHDOCTOR_DEBUG_MODE"] == "1" and env["CUDA_VISIBLE_DEVICES"] == "0,1"
    plain = worker_environment(LaunchOptions(gpu_ids="all"), {"PATH": "/bin"})
    assert "TORCHDOCTOR_DEBUG_MODE" not in plain and "CUDA_VISIBLE_DEVICES" not in plain
