"""torchrun reads a flag it is not given from ``PET_<FLAG>``: `launch` and `net` check what torchrun will
use, take torchrun's underscore spellings, and leave no ``torchelastic_*`` folder behind."""

from __future__ import annotations

import re
import socket
import textwrap

import pytest

from torchdoctor.errors import BadInput
from torchdoctor.launch.options import merge, parse_command_line, torchrun_environment
from torchdoctor.launch.run import is_standalone, preflight_findings
from torchdoctor.net.options import torchrun_defaults

TWO_RANKS = textwrap.dedent(
    """
    import torch.distributed as dist

    dist.init_process_group("gloo")
    dist.barrier()
    print("done", dist.get_rank(), flush=True)
    dist.destroy_process_group()
    """
)


def launch_options(argv, environ, config=None):
    return merge(parse_command_line(argv), config or {}, environ)


def test_launch_takes_what_torchrun_would_from_pet_variables():
    environ = {
        "PET_NPROC_PER_NODE": "3",
        "PET_MASTER_PORT": "29612",
        "PET_NNODES": "1:2",
        "PET_STANDALONE": "0",
    }
    options = launch_options(["train.py"], environ)
    assert options.flags["nproc_per_node"] == "3" and options.flags["master_port"] == 29612
    assert (
        options.flags["nnodes"] == "1:2" and "standalone" not in options.flags
    )  # PET_STANDALONE=0: not said
    assert options.sources["master_port"] == "PET_MASTER_PORT"
    assert not is_standalone(options)  # a port was given: torchrun meets there, not on a free port


def test_the_command_line_then_the_config_file_beat_pet_variables():
    environ = {"PET_MASTER_PORT": "29612", "PET_NPROC_PER_NODE": "3", "PET_MASTER_ADDR": "10.0.0.9"}
    options = launch_options(["--master_port", "29700", "train.py"], environ, {"num_processes": 4})
    assert options.flags["master_port"] == 29700 and "master_port" not in options.sources
    assert options.flags["nproc_per_node"] == "4"  # the file's count of processes
    assert options.flags["master_addr"] == "10.0.0.9" and options.sources["master_addr"] == "PET_MASTER_ADDR"


@pytest.mark.parametrize(
    "variable, value, said",
    [
        (
            "PET_MASTER_PORT",
            "29x",
            "PET_MASTER_PORT='29x' (torchrun reads it as --master-port): give a whole number",
        ),
        ("PET_STANDALONE", "yes", "PET_STANDALONE='yes' (torchrun reads it as --standalone): give 0 or 1"),
        ("PET_MONITOR_INTERVAL", "often", "give a number"),
    ],
)
def test_a_pet_variable_torch_cannot_read_is_named(variable, value, said):
    with pytest.raises(BadInput, match=re.escape(said)):
        torchrun_environment({variable: value})


def test_launch_preflight_checks_the_port_from_pet_master_port(taken_port):
    options = launch_options(
        ["--nnodes", "2", "--node-rank", "0", "train.py"], {"PET_MASTER_PORT": str(taken_port)}
    )
    port = next(f for f in preflight_findings(options, environ={}) if f.id == "dist.preflight_port")
    assert port.status == "fail" and f"port {taken_port} is already taken" in port.summary
    assert "pick a free port on every node: PET_MASTER_PORT=" in port.fix


def test_launch_refuses_a_taken_pet_master_port_before_torchrun_starts(
    tmp_path, taken_port, monkeypatch, capsys
):
    from torchdoctor.cli import main

    script = tmp_path / "train.py"
    script.write_text(TWO_RANKS)
    monkeypatch.setenv("PET_MASTER_PORT", str(taken_port))
    # in this process: a refusal before torchrun starts; a launch of its own would import torch for nothing
    assert main(["launch", "--nproc_per_node", "2", str(script)]) == 1
    out, err = capsys.readouterr()
    assert f"port {taken_port} is already taken" in err and "PET_MASTER_PORT=" in err
    assert "done" not in out


def test_net_takes_pet_variables_for_the_flags_it_shares_with_torchrun():
    environ = {
        "PET_NPROC_PER_NODE": "3",
        "PET_NNODES": "2",
        "PET_RDZV_ENDPOINT": "node01:29400",
        "PET_RDZV_ID": "j",
    }
    assert torchrun_defaults(set(), environ) == {
        "nproc_per_node": 3,
        "nnodes": 2,
        "rdzv_endpoint": "node01:29400",
        "rdzv_id": "j",
    }
    assert torchrun_defaults({"nnodes", "rdzv_endpoint"}, environ) == {"nproc_per_node": 3, "rdzv_id": "j"}
    # a rank torchrun started: the launcher has read them, and net's launch flags mean nothing there
    assert torchrun_defaults(set(), {**environ, "RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}) == {}
    with pytest.raises(BadInput, match=r"PET_NNODES='1:2': torchdoctor net takes a number of hosts"):
        torchrun_defaults(set(), {"PET_NNODES": "1:2"})
    with pytest.raises(BadInput, match="PET_NPROC_PER_NODE 0: must be between 1 and"):
        torchrun_defaults(set(), {"PET_NPROC_PER_NODE": "0"})


def test_net_checks_the_port_from_pet_master_port_and_takes_underscore_flags(cli, taken_port):
    result = cli(
        "net",
        "--nproc_per_node",
        "2",
        "--timeout",
        "20",
        env={"PET_MASTER_PORT": str(taken_port)},
        timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"port {taken_port} is already taken" in result.stdout and "PET_MASTER_PORT=" in result.stdout


def _no_torchelastic_folders(temp):
    left = [p.name for p in temp.iterdir() if p.name.startswith(("torchelastic_", "torchdoctor-"))]
    assert not left, f"folders left in {temp}: {left}"


# That `launch` leaves no `torchelastic_*` folder is checked on runs that start anyway, not on a 2-rank job of
# its own: test_stragglers' healthy run under the watchdog, test_launch's two-node run without it.


def test_net_over_a_rendezvous_leaves_no_torchelastic_folder(cli, tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"TMPDIR": str(temp), "PET_RDZV_ENDPOINT": f"127.0.0.1:{port}"}  # through torch's launcher
    # one rank: the folder is torch's launcher's, one per host whatever the number of ranks, and a second
    # rank (an import of torch, ~3 s of CPU) would test the communication test_net_smoke tests
    result = cli("net", "--nproc-per-node", "1", "--timeout", "60", env=env, timeout=110)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 rank on 1 host" in result.stdout
    _no_torchelastic_folders(temp)
