import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from torchdoctor import __version__
from torchdoctor.checks import discover, run_one
from torchdoctor.system import check_accelerators, check_python, check_torch


def test_version(cli):
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"torchdoctor {__version__}"


def test_bad_usage_is_one_line_and_exit_2(cli, cli_here):
    # the first in a real process, the others through the same `main` here (the refusal is main's either way)
    for args in (["no-such-command"], ["check", "--no-such-flag"], ["check", "--skip", "bogus"]):
        result = (cli if args == ["no-such-command"] else cli_here)(*args)
        assert result.returncode == 2, args
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith("torchdoctor: error:")


def test_an_unknown_area_is_refused_before_torch_is_imported(cli):
    """A typo in --skip costs no `import torch` (seconds of CPU): the refusal comes first."""
    result = cli("check", "--skip", "bogus", env={"PYTHONPROFILEIMPORTTIME": "1"})
    lines = result.stderr.strip().splitlines()
    imported = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    assert result.returncode == 2 and "--skip bogus: unknown area" in lines[-1], result.stderr[-2000:]
    assert "torchdoctor.checks" in imported and "torch" not in imported


def test_check_json_lists_sys_findings(cli_here):
    # through the same `main` here: `check` runs in real processes below (on a terminal) and in
    # tests/test_output_encodings.py; --json is main's output either way
    result = cli_here("check", "--json", "--skip", "net", "--skip", "gpu")
    data = json.loads(result.stdout)
    ids = [f["id"] for f in data["findings"]]
    assert {"sys.python", "sys.torch", "sys.accelerators"} <= set(ids)
    assert data["status"] in ("ok", "warn", "fail")
    assert result.returncode == (1 if data["status"] == "fail" else 0)


def test_python_too_old_fails_with_fix():
    finding = check_python(version_info=(3, 8, 10), executable="/usr/bin/python3.8")
    assert finding.status == "fail" and "3.8.10" in finding.summary and finding.fix
    # the oldest it fails is the oldest pyproject.toml refuses, and the fix asks for the one it accepts
    assert check_python(version_info=(3, 9, 18)).status == "fail" and "3.10" in finding.fix
    assert check_python(version_info=(3, 10, 0)).status == "ok"


def test_torch_builds_named():
    assert check_torch("2.13.0+cpu", None, None).summary == "torch 2.13.0+cpu (CPU build)"
    assert "CUDA 12.8" in check_torch("2.7.0", "12.8", None).summary
    assert "ROCm 6.2" in check_torch("2.5.1", None, "6.2.41133").summary
    old = check_torch("2.3.1", "11.8", None)  # older than the oldest tried (pyproject.toml: torch>=2.4)
    assert old.status == "fail" and "2.3.1" in old.summary and "2.4" in old.summary


def test_cuda_build_without_gpu_warns_and_names_the_hiding_variable():
    seen = {"cuda": [], "mps": False, "xpu": 0}
    finding = check_accelerators(seen, "CUDA 12.8", environ={"CUDA_VISIBLE_DEVICES": ""})
    assert finding.status == "warn" and "CUDA_VISIBLE_DEVICES" in finding.fix
    gpus = {"cuda": [{"index": 0, "name": "NVIDIA H100", "capability": "9.0", "memory_gib": 80}]}
    assert "sm_90" in check_accelerators(gpus, "CUDA 12.8", environ={}).summary


def test_a_crashing_check_becomes_a_warning():
    def check_explodes():
        raise OSError("disk on fire")

    (finding,) = run_one(check_explodes)
    assert finding.status == "warn" and "disk on fire" in finding.summary
    assert finding.summary.startswith("the explodes check itself crashed: OSError: disk on fire")
    trace = finding.details["traceback"]
    assert trace.startswith("Traceback") and 'raise OSError("disk on fire")' in trace


def test_a_crashed_checks_traceback_is_shown_with_verbose_only():
    from rich.console import Console

    from torchdoctor.findings import render_human

    def check_explodes():
        raise OSError("disk on fire")

    findings = run_one(check_explodes)
    shown = {}
    for verbose in (False, True):
        console = Console(record=True, width=200)
        render_human(findings, console, verbose=verbose)
        shown[verbose] = console.export_text()
    assert "Traceback" not in shown[False]
    assert "Traceback (most recent call last):" in shown[True]
    assert 'raise OSError("disk on fire")' in shown[True]


def test_discovery_finds_check_functions_in_source_order():
    names = [fn.__name__ for fn in discover(["torchdoctor.system"])]
    assert names[:3] == ["check_python", "check_torch", "check_accelerators"]


LONG = "n" * 300


def _bad_input_cases(tmp_path):
    """(arguments, words the one line must hold) for every command of ours, many bad values per flag."""
    (tmp_path / "bin.dat").write_bytes(b"\0")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    os.mkfifo(tmp_path / "pipe")
    crlf, twice, huge = tmp_path / "crlf.txt", tmp_path / "twice.txt", tmp_path / "huge.txt"
    crlf.write_bytes(b"node1 slots=2\r\n")
    twice.write_text("node1 slots=2\nnode1 slots=2\n")
    huge.write_text("node1 slots=99999999999999999999\n")
    good = tmp_path / "hosts.txt"
    good.write_text("node1\n")
    cases = []
    for command in ("env", "check"):
        cases += [
            ([command, "--root", ""], "--root '': empty"),
            ([command, "--root", LONG], "name too long (300 characters"),
            ([command, "--root", str(tmp_path / "bin.dat")], "bin.dat: is a file, not a folder"),
            ([command, "--root", str(tmp_path / "bin.dat" / "x")], "bin.dat is a file, not a folder"),
            ([command, "--root", str(tmp_path / "loop")], "a symbolic link loop"),
            ([command, "--root", str(tmp_path / "nowhere")], "nowhere: does not exist"),
        ]
    cases += [
        (["report", "-o", LONG], "name too long (300 characters"),
        (["report", "-o", str(tmp_path / LONG)], "name too long (300 characters"),
        (["report", "-o", str(tmp_path / "bin.dat" / "x")], "bin.dat is a file, not a folder"),
        (["report", "-o", str(tmp_path / "missing" / "x")], "missing does not exist"),
        (["report", "-o", str(tmp_path / "loop")], "a symbolic link loop"),
        (["report", "-o", str(tmp_path)], "is a folder, not a file"),
        (["report", "-o", str(tmp_path / "pipe")], "a named pipe that nothing reads"),
        (["report", "-o", ""], "-o '': empty"),
        (["report", "--skip", "bogus"], "--skip bogus: unknown area"),
        (["check", "--skip", "everything"], "--skip everything: unknown area"),
        # an unset $VAR: an empty value is named as '', never quietly taken as "nothing" or as "." (Path(""))
        (["check", "--skip", ""], "--skip '': no area in it; choose from sys, env"),
        (["report", "--skip", " , "], "--skip ' , ': no area in it"),
        (["check", "--only", ""], "--only '': no such check"),
        (["net", "--read-log", ""], "--read-log '': empty"),
        (["net", "--log-dir", ""], "--log-dir '': empty; give a folder"),
        (["net", "--bench", "--plot", ""], "--plot '': empty"),
        (["net", "--find-bad", "--pairs-plot", ""], "--pairs-plot '': empty"),
        (["launch", "--config", "", "train.py"], "--config '': empty"),
        (
            ["env", "--deepspeed-build", "--arch", "99.9"],
            "'99.9': not the compute capability of any NVIDIA GPU",
        ),
        (["env", "--deepspeed-build", "--arch", "8.0;8.1"], "'8.1': not the compute capability"),
        (["env", "--deepspeed-build", "--arch", "0.0+PTX"], "'0.0+PTX': not the compute capability"),
        (["env", "--deepspeed-build", "--arch", "sm_90"], "'sm_90' is not a compute capability"),
        (
            ["scale", "--devices", "one", "--per-device-batch", "8", "--target-devices", "2"],
            "--devices 'one': must be a whole number",
        ),
        (
            ["scale", "--devices", "1.5", "--per-device-batch", "8", "--target-devices", "2"],
            "--devices '1.5': must be a whole number",
        ),
        (
            ["scale", "--devices", "", "--per-device-batch", "8", "--target-devices", "2"],
            "--devices '': must be a whole number",
        ),
        (
            ["scale", "--devices", "2", "--per-device-batch", "eight", "--target-devices", "2"],
            "--per-device-batch 'eight'",
        ),
        (
            ["scale", "--devices", "2", "--per-device-batch", "8", "--target-devices", "0x2"],
            "--target-devices '0x2'",
        ),
        (["mpi", "-f", str(good), "-n", "abc"], "-n 'abc': must be a whole number"),
        (["mpi", "-f", str(good), "--timeout", "soon"], "--timeout 'soon': must be a number"),
        (["mpi", "-f", str(crlf)], "ends in CR LF"),
        (["mpi", "-f", str(twice)], "host node1 is listed twice (lines 1 and 2)"),
        (["mpi", "-f", str(huge)], "slots 99999999999999999999 is more than mpirun can count"),
        (["mpi", "-f", str(tmp_path / "loop")], "a symbolic link loop"),
        (["mpi", "-f", LONG], "name too long"),
        (["mpi", "-f", ""], "hostfile '': empty"),
        (["mpi", "-f", str(tmp_path)], "is a folder, not a file"),
        (["check", "--bogus"], "no such option: --bogus (see"),  # no misleading "did you mean --verbose"
        (["check", "--verbos"], "no such option: --verbos (did you mean --verbose?)"),
        (["env", "--jsn"], "no such option: --jsn (did you mean --json?)"),
        # an unknown flag alone is named as such by every command, not taken for a missing argument
        (["launch", "--bogus"], "no such option: --bogus (see `torchdoctor launch --help`"),
        (
            ["launch", "--nproc-per-node", "2", "--watchdg=3"],
            "no such option: --watchdg (did you mean --watchdog?)",
        ),
        (["net", "--bogus"], "no such option: --bogus (see"),
        (["explain", "--bogus"], "no such option: --bogus (see"),
        (["mpi", "--bogus"], "no such option: --bogus (see"),
        (["report", "--bogus"], "no such option: --bogus (see"),
    ]
    return cases


def test_bad_input_to_every_command_is_one_line_naming_the_value(tmp_path, capsys):
    from torchdoctor.cli import main

    for args, words in _bad_input_cases(tmp_path):
        status = main(args)
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert status == 2, (args, captured.err)
        assert len(lines) == 1 and lines[0].startswith("torchdoctor: error: "), (args, captured.err)
        assert words in lines[0], (args, lines[0])
        assert "Input should be" not in lines[0] and "Possible options" not in lines[0]


@pytest.mark.timeout(600)  # a handful of real CLI runs on a shared machine
def test_output_to_a_reader_that_leaves_exits_quietly_with_the_commands_status():
    """`torchdoctor X | head -1`: no BrokenPipeError, no message, the status X has alone (the reader here,
    `true`, is gone before the first line is written, so every run meets the closed pipe)."""
    broken = {"TORCH_DISTRIBUTED_DEBUG": "ALL"}  # sys.torch fails: status 1, piped or not
    for command, environment, status in [
        ("--help", {}, 0),
        ("scale --devices 2 --per-device-batch 8 --target-devices 4", {}, 0),
        ("env --skip-nothing-here", {}, 2),  # a usage error is still said, on stderr, with its status
        ("env --json", {}, None),
        ("check --skip net --skip env", broken, 1),
        ("report --skip net --skip env", broken, 1),
    ]:
        env = {**os.environ, "COLUMNS": "200", **environment}
        if status is None:  # the status it has alone: from `main` in this process (torch is imported here)
            from torchdoctor.cli import main

            with contextlib.redirect_stdout(io.StringIO()):
                status = main(command.split())
        piped = subprocess.run(
            ["bash", "-c", f"set -o pipefail; '{sys.executable}' -m torchdoctor {command} | true"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert piped.returncode == status, (command, piped.stderr[-2000:])
        if status != 2:
            assert piped.stderr == "", (command, piped.stderr[-2000:])
        else:
            assert piped.stderr.startswith("torchdoctor: error: no such option: --skip-nothing-here")


def _on_a_terminal(args, env=None, timeout=300):
    """Run the CLI with stdout and stderr on a pseudo-terminal; everything it wrote there, as text."""
    import pty
    import select

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", *args],
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", **(env or {})},
    )
    os.close(follower)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], timeout)
            if not ready:
                raise AssertionError(f"torchdoctor {' '.join(args)} wrote nothing for {timeout}s")
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower side closed: the process is done
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
        status = process.wait(timeout=timeout)
    return status, seen.decode(errors="replace")


# A terminal is the point here, so those runs are real processes on a pseudo-terminal; "not a terminal" is the
# same test of `isatty` in a pipe or in this process's captured stdout, so the piped cases run through the same
# `main` here (`cli_here`): a `check` process each (3.5 s of CPU) proved nothing more.
@pytest.mark.timeout(600)
def test_check_says_what_it_is_doing_on_a_terminal_only(cli_here):
    args = ["check", "--skip", "net", "--skip", "env"]
    status, shown = _on_a_terminal(args)
    # the line is redrawn a dozen times a second: which checks it caught depends on their speed
    assert status == 0 and re.search(r"checking (sys|dist|gpu)\.\w+…", shown), shown
    piped = cli_here(*args)
    assert piped.returncode == 0 and piped.stderr == "" and "checking" not in piped.stdout


@pytest.mark.timeout(600)
def test_colour_on_a_terminal_none_in_a_pipe_or_with_no_color(cli_here):
    args = ["check", "--skip", "net", "--skip", "env", "--skip", "dist"]
    _, coloured = _on_a_terminal(args)
    assert "\x1b[" in coloured
    _, plain = _on_a_terminal([*args, "--no-color"])
    assert "\x1b[" not in plain.replace("\x1b[?25l", "").replace("\x1b[?25h", "").split("✓", 1)[1], plain
    piped = cli_here(*args)
    assert "\x1b" not in piped.stdout and "✓" in piped.stdout


COMMANDS = ["check", "env", "report", "mpi", "scale", "net", "launch", "explain"]


def test_every_command_takes_h_and_no_color():
    from torchdoctor.cli import main

    for command in COMMANDS:
        outputs = {}
        for flag in ("-h", "--help"):
            with contextlib.redirect_stdout(io.StringIO()) as out:
                assert main([command, flag]) == 0, (command, flag)
            outputs[flag] = out.getvalue()
        assert outputs["-h"] == outputs["--help"] and outputs["-h"], command
        if command != "launch":  # launch prints torchrun's own help, its flags as torchrun spells them
            assert "--no-color" in outputs["-h"], command
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["-h"]) == 0
    statuses = re.findall(r"^\s+(\d+)\s+(\w+)", out.getvalue(), flags=re.MULTILINE)
    assert statuses == [("0", "nothing"), ("1", "a"), ("2", "bad"), ("130", "interrupted")], out.getvalue()
    assert "--install-completion" in out.getvalue() and "--show-completion" in out.getvalue()


def test_shell_completion_completes_commands_and_flags():
    env = {**os.environ, "_TORCHDOCTOR_COMPLETE": "complete_bash"}
    for words, cword, expected in [
        ("torchdoctor ch", "1", "check"),
        ("torchdoctor check --sk", "2", "--skip"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "torchdoctor"],
            env={**env, "COMP_WORDS": words, "COMP_CWORD": cword},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and done.stdout.split() == [expected], done
    # typer names the shell it was started from (its parent process), as a user's bash would start it; the
    # `; true` keeps bash from replacing itself with the command
    script = subprocess.run(
        ["bash", "-c", f"{shlex.quote(sys.executable)} -m torchdoctor --show-completion; true"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert script.returncode == 0 and "_TORCHDOCTOR_COMPLETE=complete_bash" in script.stdout


def test_check_timeout_reaches_the_checks_that_wait():
    from torchdoctor.checks import discover

    (smoke,) = discover(["torchdoctor.net.checks"], timeout=7)
    assert smoke.__name__ == "check_smoke" and smoke.keywords == {"timeout": 7}
    assert all(not hasattr(c, "keywords") for c in discover(["torchdoctor.system"], timeout=7))
