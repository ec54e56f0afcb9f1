"""What the flags and ``-v`` show: each flag accepted as a user would type it, or refused with a hint; the help
says what a command takes; nothing is cut or left behind."""

import json
import os
import re

import pytest

from torchdoctor.cli import main


def said(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("skip", [["--skip", "net,env,gpu"], ["--skip", "NET", "--skip", "Env,GPU"]])
def test_skip_takes_a_list_and_any_case(capsys, skip):
    status, out, err = said(capsys, "check", "--json", *skip)
    assert status in (0, 1), err
    ids = {f["id"].split(".")[0] for f in json.loads(out)["findings"]}
    assert not ids & {"net", "env", "gpu"} and "sys" in ids


@pytest.mark.parametrize("command", ["check", "report"])
def test_an_unknown_area_is_refused_with_the_choices(capsys, command):
    status, _, err = said(capsys, command, "--skip", "net,bogus")
    assert status == 2
    assert (
        err.strip() == "torchdoctor: error: --skip bogus: unknown area; choose from sys, env, dist, net, gpu"
    )


def test_check_with_every_area_skipped_says_nothing_would_be_checked(capsys):
    status, out, err = said(capsys, "check", "--skip", "sys,env,dist,net,gpu")
    assert status == 2 and out == ""
    assert "nothing would be checked" in err


def test_verbose_facts_are_whole_when_piped(capsys):
    status, out, err = said(capsys, "check", "-v", "--skip", "net,gpu,dist")
    assert status in (0, 1), err
    facts = [line for line in out.splitlines() if line.startswith("    ") and ": " in line]
    assert not [line for line in facts if line.endswith("…")]
    assert any(len(line) > 80 for line in facts)  # one line each, whatever its length


def test_help_of_a_command_taking_several_paths_says_path_dots(capsys):
    status, out, _ = said(capsys, "explain", "-h")
    assert status == 0 and "PATH..." in out and "list[str]" not in out


def test_every_command_lists_no_color_and_only_torchdoctor_offers_shell_completion(capsys):
    for command in ("check", "env", "net", "mpi", "launch", "explain", "report", "scale"):
        status, out, _ = said(capsys, command, "--help")
        assert status == 0 and "--no-color" in out, command
        # the shell's completion is installed once, for the program (`torchdoctor --install-completion`)
        assert "completion" not in out, (command, out)


def test_torchdoctor_alone_prints_the_help_and_exits_0(capsys):
    status, out, _ = said(capsys)
    assert status == 0 and "Usage: torchdoctor" in out


@pytest.mark.parametrize(
    "args, named",
    [
        (["net", "--rdzv-id", "job7"], "--rdzv-id 'job7' only applies with --rdzv-endpoint"),
        (
            ["env", "--deepspeed-build", "--arch", "Turing+PTX"],
            "Turing is already 7.5+PTX (with PTX); write Turing",
        ),
        (["env", "--deepspeed-build", "--arch", "amperes"], "'amperes' is not a compute capability"),
    ],
)
def test_a_flag_that_would_do_nothing_or_cannot_work_is_refused(capsys, args, named):
    status, _, err = said(capsys, *args)
    assert status == 2 and named in err and err.count("\n") == 1, err


@pytest.mark.parametrize("arch", ["ampere", "AMPERE", "Ampere", "8.0;8.6+PTX"])
def test_arch_names_in_any_case(capsys, arch):
    status, out, err = said(capsys, "env", "--deepspeed-build", "--arch", arch)
    assert status in (0, 1), err
    assert 'TORCH_CUDA_ARCH_LIST="8.0;8.6+PTX"' in out


def test_nccl_debug_on_gloo_leaves_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    status, out, err = said(
        capsys, "net", "--json", "--nccl-debug", "--backend", "gloo", "--nproc-per-node", "2"
    )
    assert status == 0, out + err
    findings = {f["id"]: f for f in json.loads(out)["findings"]}
    assert findings["net.nccl"]["status"] == "skip" and "gloo" in findings["net.nccl"]["summary"]
    assert not list(tmp_path.glob("torchdoctor-net-logs-*"))


@pytest.mark.parametrize(
    "text, named",
    [
        ("--- !!python/object:os.system\nnum_machines: 1\n", "on the whole file is not allowed"),
        ("!!map\nnum_machines: 1\n", "on the whole file is not allowed"),
        ("num_machines: !!python/object:os.system 1\n", "!!python/object"),
    ],
)
def test_config_tags_are_refused_anywhere(capsys, tmp_path, text, named):
    config = tmp_path / "config.yaml"
    config.write_text(text)
    status, _, err = said(capsys, "launch", "--config", str(config), str(tmp_path / "train.py"))
    assert status == 2 and err.count("\n") == 1, err


def test_config_larger_than_a_config_is_refused_before_parsing(capsys, tmp_path):
    config = tmp_path / "config.yaml"
    with open(config, "w") as f:
        f.write("num_machines: 1\n" + "# padding\n" * 200_000)
    status, _, err = said(capsys, "launch", "--config", str(config), "train.py")
    assert status == 2 and "larger than 1 MiB" in err


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"timeout": "x"}, TypeError),
        ({"timeout": None}, TypeError),
        ({"timeout": float("nan")}, ValueError),
        ({"timeout": 10, "collect": "5"}, TypeError),
        ({"timeout": 10, "exit_code": "1"}, TypeError),
    ],
)
def test_watch_for_hangs_names_a_wrong_argument(kwargs, error):
    import torchdoctor

    with pytest.raises(error) as raised:
        torchdoctor.watch_for_hangs(**kwargs)
    name = next(k for k in reversed(kwargs) if k != "timeout" or len(kwargs) == 1)
    assert str(raised.value).startswith(f"watch_for_hangs: {name}={kwargs[name]!r}")


def test_launch_refuses_standalone_with_several_nodes(capsys, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('started')\n")
    status, _, err = said(capsys, "launch", "--standalone", "--nnodes", "2", str(script))
    assert status == 2 and "--standalone runs one node alone, and --nnodes is 2" in err


@pytest.mark.parametrize("module", ["missing_module", "json.missing", "os.path.x"])
def test_launch_refuses_a_module_that_is_not_there(capsys, tmp_path, module):
    os.chdir(tmp_path)
    status, _, err = said(capsys, "launch", "--nproc-per-node", "1", "-m", module)
    assert status == 2 and err.startswith(f"torchdoctor: error: -m {module}: no module "), err


def test_every_flag_of_every_command_says_what_it_takes_and_what_it_does(capsys):
    """A newcomer reads `--help`: each option has a line of meaning, and a value's placeholder names what to give
    (N, SECONDS, DIR), never typer's type name (``<int>``, ``<str>``)."""
    from torchdoctor.cli import _command_line
    from torchdoctor.launch.options import command_line_parser

    commands = _command_line().commands
    assert {"check", "env", "net", "mpi", "launch", "explain", "report", "scale"} <= set(commands), commands
    unsaid = [
        f"{name} {param.opts[0]}"
        for name, command in commands.items()
        for param in command.params
        if param.param_type_name == "option" and not (param.help or "").strip()
    ]
    assert not unsaid, f"options whose help says nothing: {unsaid}"
    for name in commands:
        if name == "launch":  # its help is argparse's (torchrun's parser and ours), below
            continue
        status, out, _ = said(capsys, name, "--help")
        assert status == 0 and "Options" in out, name
        placeholders = sorted(set(re.findall(r"<(?:str|int|float|path|text|integer)>", out)))
        assert not placeholders, f"torchdoctor {name} --help shows {placeholders}: give the option a metavar"
    ours = [a for a in command_line_parser()._actions if a.option_strings and a.dest != "help"]
    assert len(ours) > 20 and all((a.help or "").strip() for a in ours), [a.dest for a in ours if not a.help]
