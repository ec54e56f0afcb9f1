import sys

import pytest

from torchdoctor.distributed.config import load_config
from torchdoctor.distributed.launch import (
    LaunchOptions,
    merge,
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
        (LaunchOptions(nnodes=2, node_rank=2), "--node-rank 2"),
        (LaunchOptions(master_port=70000), "--master-port 70000"),
        (LaunchOptions(watchdog=-1), "--watchdog -1"),
        (LaunchOptions(rdzv_backend="etcd"), "rdzv_backend 'etcd'"),
    ):
        with pytest.raises(BadInput, match=text):
            validate(options)


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
