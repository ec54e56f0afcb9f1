"""Every environment variable a run reads, set to a bad value: `check` fails on it with its fix, and the run
(`net`, `launch`, the library) refuses it in one line, exit 2 (a `ValueError` in a script), in the same words."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from torchdoctor import environment
from torchdoctor.distributed import checks
from torchdoctor.environment import BadEnvironment, problems, require_valid

# (variable, a value its reader cannot use): one or more per variable we read
BAD = [
    ("MASTER_ADDR", "node 01"),
    ("MASTER_ADDR", "node01:29500"),
    ("MASTER_ADDR", " "),  # torch connects to ' ' as it is (a timeout), where "" is "not set"
    ("MASTER_ADDR", "127.0.0.1 "),
    ("MASTER_PORT", " "),  # int(' ') fails in torch
    ("MASTER_PORT", "abc"),
    ("MASTER_PORT", "99999"),
    ("MASTER_PORT", "0"),
    ("MASTER_PORT", "-1"),
    ("RANK", "x"),
    ("WORLD_SIZE", "0"),
    ("LOCAL_RANK", "1.5"),
    ("LOCAL_WORLD_SIZE", "two"),
    ("GROUP_RANK", "-1"),
    ("TORCHELASTIC_RESTART_COUNT", "?"),
    ("PET_NNODES", "2:1"),
    ("PET_NNODES", "many"),
    ("PET_NPROC_PER_NODE", "0"),
    ("PET_NODE_RANK", "first"),
    ("PET_MAX_RESTARTS", "-3"),
    ("PET_MASTER_ADDR", "a b"),
    ("PET_MASTER_ADDR", " node01"),
    ("PET_MASTER_PORT", "70000"),
    ("PET_RDZV_ENDPOINT", "node01:99999"),
    ("PET_RDZV_ENDPOINT", "node01:port"),
    ("PET_MONITOR_INTERVAL", "0"),
    ("SLURM_PROCID", "x"),
    ("SLURM_NTASKS", "0"),
    ("SLURM_LOCALID", "-1"),
    ("SLURM_NTASKS_PER_NODE", "2(x)"),
    ("SLURM_JOB_ID", "job42"),
    ("SLURM_NNODES", "0"),
    ("OMPI_COMM_WORLD_RANK", "r0"),
    ("OMPI_COMM_WORLD_SIZE", "0"),
    ("OMPI_COMM_WORLD_LOCAL_RANK", "x"),
    ("OMPI_COMM_WORLD_LOCAL_SIZE", "0"),
    ("PMI_RANK", "x"),
    ("PMI_SIZE", "0"),
    ("MPI_LOCALRANKID", "x"),
    ("MPI_LOCALNRANKS", "0"),
    ("TORCHDOCTOR_LOG_LEVEL", "LOUD"),
    ("ACCELERATE_LOG_LEVEL", "verbose"),
    ("TORCHDOCTOR_DEBUG_MODE", "banana"),
    ("ACCELERATE_DEBUG_MODE", "maybe"),
    ("TORCHDOCTOR_DEBUG_TIMEOUT", "0"),
    ("TORCHDOCTOR_DEBUG_TIMEOUT", "nan"),
    ("TORCHDOCTOR_DEBUG_TIMEOUT", "soon"),
]
GOOD = [
    ("MASTER_ADDR", "node-01.cluster"),
    ("MASTER_ADDR", "fe80::1%eth0"),
    ("MASTER_PORT", "65535"),
    ("PET_NNODES", "1:4"),
    ("PET_NPROC_PER_NODE", "gpu"),
    ("PET_RDZV_ENDPOINT", "[::1]:29400"),
    ("PET_RDZV_ENDPOINT", "node01"),
    ("SLURM_NTASKS_PER_NODE", "2(x3),1"),
    ("TORCHDOCTOR_LOG_LEVEL", "info"),
    ("ACCELERATE_LOG_LEVEL", "20"),
    ("TORCHDOCTOR_DEBUG_MODE", "Off"),
    ("ACCELERATE_DEBUG_MODE", "t"),
    ("TORCHDOCTOR_DEBUG_TIMEOUT", "0.5"),
]


def test_the_table_covers_every_variable_we_read():
    assert {name for name, _ in BAD} == set(environment.BY_NAME)


@pytest.mark.parametrize("name, value", BAD)
def test_check_and_the_run_refuse_a_bad_value_in_the_same_words(name, value):
    environ = {name: value}
    (found,) = problems(environ)
    said = str(found)
    assert said.startswith(f"{name}={value!r}: must be ")
    with pytest.raises(BadEnvironment) as raised:
        require_valid(None, environ)
    assert str(raised.value).startswith(said)
    assert isinstance(raised.value, ValueError)  # what a script sees
    finding = (
        checks.check_debug_mode(environ)
        if name in environment.DEBUG_MODE
        else checks.check_environment(environ)
    )
    assert finding.status == "fail"
    assert said in finding.summary
    assert f"export {name}=" in finding.fix


@pytest.mark.parametrize("name, value", GOOD)
def test_good_values_pass(name, value):
    assert problems({name: value}) == []
    assert checks.check_environment({name: value}).status == "ok"


def test_a_blank_value_counts_as_unset_where_its_reader_says_so():
    # every reader takes "" for unset; only torchdoctor's own readers trim, so only there is "  " unset too
    for name, variable in environment.BY_NAME.items():
        assert environment.given(name, {name: ""}) is None
        assert problems({name: ""}) == []
        assert (environment.given(name, {name: "  "}) is None) == variable.trimmed, name
    assert problems({"TORCHDOCTOR_LOG_LEVEL": "  ", "TORCHDOCTOR_DEBUG_MODE": " "}) == []
    assert checks.check_environment({"MASTER_ADDR": ""}).summary.startswith("none of the variables")
    assert checks.check_environment({"MASTER_ADDR": " "}).status == "fail"


@pytest.mark.parametrize(
    "rank, world", [("RANK", "WORLD_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS"), ("PMI_RANK", "PMI_SIZE")]
)
def test_a_rank_not_below_the_number_of_ranks(rank, world):
    (found,) = problems({rank: "2", world: "2"})
    assert str(found) == f"{rank}='2': must be below {world}=2 (ranks count from 0)"


def run(command, env, **kwargs):
    return subprocess.run(
        [sys.executable, *command],
        env={**os.environ, "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


# One case of each class runs every command in a real process, as a user would; the others run `check` and
# `launch` in this process (the same `main`, so the same words and status), which has torch imported
# already: a `check` or `launch` of its own would import it again for nothing (3 s of CPU each).
REAL_PROCESS = {("MASTER_PORT", "abc"), ("TORCHDOCTOR_LOG_LEVEL", "LOUD")}


def check_json(name, value, monkeypatch, capsys):
    """`torchdoctor check --json` of the dist and net areas with ``name=value`` set: (status, findings)."""
    args = ["check", "--json", "--skip", "sys", "--skip", "env", "--skip", "gpu"]
    if (name, value) in REAL_PROCESS:
        checked = run(["-m", "torchdoctor", *args], {name: value})
        return checked.returncode, checked.stdout, checked.stderr
    from torchdoctor.cli import main

    monkeypatch.setenv(name, value)
    status = main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    "name, value",
    [
        ("MASTER_PORT", "abc"),
        ("MASTER_PORT", "99999"),
        ("MASTER_ADDR", "a b"),
        ("MASTER_ADDR", " "),  # net read it as a host, check as unset, before session 32
        ("PET_MASTER_ADDR", " node01"),  # net reads torchrun's first
        ("RANK", "x"),
        ("SLURM_JOB_ID", "j"),
    ],
)
def test_net_refuses_in_one_line_and_check_says_the_same(name, value, tmp_path, monkeypatch, capsys):
    result = run(["-m", "torchdoctor", "net", "--nproc-per-node", "2"], {name: value})  # no torch import
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    said = str(problems({name: value})[0])
    assert line.startswith(f"torchdoctor: error: {said}")
    status, out, err = check_json(name, value, monkeypatch, capsys)
    assert status == 1, err
    findings = {f["id"]: f for f in json.loads(out)["findings"]}
    assert said in findings["dist.environment"]["summary"]
    assert findings["net.smoke"]["status"] == "skip"  # not a crash of the check, nor a verdict about ranks


@pytest.mark.parametrize(
    "name, value",
    [
        ("TORCHDOCTOR_LOG_LEVEL", "LOUD"),
        ("TORCHDOCTOR_DEBUG_MODE", "banana"),
        ("TORCHDOCTOR_DEBUG_TIMEOUT", "-5"),
        ("PET_NNODES", "x"),
        ("PET_MASTER_PORT", "99999"),
    ],
)
def test_launch_refuses_before_any_rank_starts(name, value, tmp_path, monkeypatch, capsys):
    script = tmp_path / "train.py"
    script.write_text("print('started')\n")
    args = ["launch", "--nproc-per-node", "2", str(script)]
    if (name, value) in REAL_PROCESS:
        result = run(["-m", "torchdoctor", *args], {name: value})
        status, out, err = result.returncode, result.stdout, result.stderr
    else:
        from torchdoctor.cli import main

        monkeypatch.setenv(name, value)
        status = main(args)
        out, err = capsys.readouterr()
    assert status == 2, err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"torchdoctor: error: {problems({name: value})[0]}")
    assert "started" not in out


LIBRARY = textwrap.dedent(
    """
    import sys, torchdoctor
    from torchdoctor.distributed import debug_mode_enabled
    try:
        {call}
    except ValueError as error:
        print(type(error).__name__, error)
    else:
        print("accepted")
    """
)


@pytest.mark.parametrize(
    "name, value, call",
    [
        ("TORCHDOCTOR_LOG_LEVEL", "LOUD", "torchdoctor.get_logger(__name__)"),
        ("ACCELERATE_LOG_LEVEL", "LOUD", "torchdoctor.get_logger(__name__)"),
        ("TORCHDOCTOR_DEBUG_MODE", "banana", "debug_mode_enabled()"),  # was silently off
        ("ACCELERATE_DEBUG_MODE", "maybe", "debug_mode_enabled()"),
        ("RANK", "x", "torchdoctor.distributed.ranks.from_environment()"),
    ],
)
def test_the_library_raises_naming_the_variable_and_value(name, value, call, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(LIBRARY.format(call=call))
    result = run([str(script)], {name: value})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"BadEnvironment {problems({name: value})[0]}"), result.stdout
